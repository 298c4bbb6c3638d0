/**
 * Timers coming back: the handler of the one TIMER_JOB kind (events/timers.ts scheduleTimer).
 * Each timer is an event into the service that asked for it; later kinds (status.publish) are
 * added to the switch.
 */
import type { Services } from '../context.ts';
import type { TimerEvent } from '../events/timers.ts';
import { expireMute } from './relationships.ts';
import { closePoll, sendPollUpdate } from './polls.ts';
import { publishScheduledStatus } from './scheduled-statuses.ts';
import { handleTrendsRefresh } from './trends.ts';
import { refreshBlocklistOnTimer } from './blocklists.ts';

export async function handleTimer(services: Services, timer: TimerEvent): Promise<void> {
  switch (timer.type) {
    case 'mute.expire':
      if (await expireMute(services, timer.accountId, timer.targetId)) {
        services.log.child({ module: 'timers' }).info({ accountId: timer.accountId, targetId: timer.targetId }, 'mute expired');
      }
      return;
    case 'poll.close':
      await closePoll(services, timer.pollId);
      return;
    case 'poll.update_due':
      await sendPollUpdate(services, timer.pollId);
      return;
    case 'scheduled_status.publish':
      await publishScheduledStatus(services, timer.scheduledStatusId, timer.scheduledAt);
      return;
    case 'trends.refresh':
      await handleTrendsRefresh(services);
      return;
    case 'blocklist.refresh':
      await refreshBlocklistOnTimer(services, timer.subscriptionId);
      return;
  }
}
