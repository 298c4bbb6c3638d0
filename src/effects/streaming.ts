/**
 * The streaming consumer of the outbox: each committed event that streaming clients should see is
 * rendered once and written to the streaming event log (src/streaming/publish.ts), from which every
 * process serving streaming clients delivers it. Declared after home-feeds and conversations
 * (src/events/consumers.ts), so the
 * home_feeds and list_feeds rows that say who gets a status exist.
 */
import type { Services } from '../context.ts';
import { publishNotification, publishOutboxEvent } from '../streaming/publish.ts';
import type { NotificationSink } from './notifications.ts';
import type { ConsumerHandler } from './registry.ts';

export function streamingConsumer(services: Services): ConsumerHandler<'streaming'> {
  return async function stream(record): Promise<void> {
    // Keyed by the fact: a retry, or a job re-run after a crash, writes no frame twice.
    await publishOutboxEvent(services, record.event, `outbox:${record.id}`);
  };
}

/**
 * New notifications (effects/notifications.ts, rendered once per recipient through its filters)
 * as `notification` events on the recipient's user and user:notification streams.
 */
export function streamingNotificationSink(services: Services): NotificationSink {
  return async (items) => {
    for (const { accountId, notification } of items) await publishNotification(services, accountId, notification);
  };
}
