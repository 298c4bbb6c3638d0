/**
 * The streaming consumer of the outbox: each committed event that streaming clients should see is
 * rendered once and written to the streaming event log (src/streaming/publish.ts), from which every
 * process serving streaming clients delivers it. Registered after homeFeedConsumer, so the
 * home_feeds and list_feeds rows that say who gets a status exist.
 */
import type { Services } from '../context.ts';
import type { OutboxRecord } from './outbox.ts';
import { publishOutboxEvent } from '../streaming/publish.ts';

export function streamingConsumer(services: Services) {
  return async function stream(record: OutboxRecord): Promise<void> {
    await publishOutboxEvent(services, record.event);
  };
}
