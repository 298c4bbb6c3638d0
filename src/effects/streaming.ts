/**
 * The streaming consumer of the outbox: each committed event that streaming clients should see is
 * rendered once and written to the streaming event log (src/streaming/publish.ts), from which every
 * process serving streaming clients delivers it. Registered after homeFeedConsumer, so the
 * home_feeds and list_feeds rows that say who gets a status exist.
 */
import type { Services } from '../context.ts';
import type { OutboxRecord } from '../events/outbox.ts';
import { publishNotification, publishOutboxEvent } from '../streaming/publish.ts';
import type { NotificationSink } from './notifications.ts';

export function streamingConsumer(services: Services) {
  return async function stream(record: OutboxRecord): Promise<void> {
    await publishOutboxEvent(services, record.event);
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
