/**
 * Timers coming back: the handler of the one TIMER_JOB kind (effects/events.ts scheduleTimer).
 * Each timer is an event into the service that asked for it; later kinds (poll.close,
 * status.publish) are added to the switch.
 */
import type { Services } from '../context.ts';
import type { TimerEvent } from '../effects/events.ts';
import { expireMute } from './relationships.ts';

export async function handleTimer(services: Services, timer: TimerEvent): Promise<void> {
  switch (timer.type) {
    case 'mute.expire':
      if (await expireMute(services, timer.accountId, timer.targetId)) {
        services.log.child({ module: 'timers' }).info({ accountId: timer.accountId, targetId: timer.targetId }, 'mute expired');
      }
      return;
  }
}
