/**
 * The consumer registry: every consumer declared in src/events/consumers.ts has its handler here,
 * and the event job (one per fact that some consumer listens to: src/events/outbox.ts) runs them.
 *
 * Each (fact, consumer) pair succeeds or retries on its own. The job runs the consumers that
 * listen, in declared order; when some fail, the job fails with its payload narrowed to the ones
 * that failed (and those declared `after` a failed one, which have not run), so its retry, with
 * the queue's backoff, runs only them: a failing consumer never re-runs another. A process that
 * dies mid-job re-runs the job whole, so each consumer is also idempotent under a repeat of its
 * own (stable activity ids and deliveries queued all at once: federate.ts; feed inserts that
 * ignore a row already there: home-feeds.ts; a dedupe key per streaming frame: streaming.ts;
 * notifications by source key: notifications.ts).
 */
import type { Services } from '../context.ts';
import { upcast, type StoredEvent } from '../events/catalogue.ts';
import { CONSUMERS, CONSUMER_NAMES, listenersOf, type ConsumerName, type HandledBy } from '../events/consumers.ts';
import type { OutboxRecord } from '../events/outbox.ts';
import { pruneOutbox } from '../events/retention.ts';
import { RetryRemaining, type JobHandler } from '../jobs/queue.ts';

/** What consumer `C` receives: a committed fact of a type it declared. */
export type ConsumerRecord<C extends ConsumerName> = Omit<OutboxRecord, 'event'> & { event: HandledBy<C> };
export type ConsumerHandler<C extends ConsumerName> = (record: ConsumerRecord<C>) => Promise<void>;
/** A handler for every declared consumer (a missing or an undeclared one fails to compile). */
export type ConsumerHandlers = { [C in ConsumerName]: ConsumerHandler<C> };

export interface EventJobOptions {
  /**
   * Called before each consumer runs on a fact; what it throws fails that consumer's run (the
   * failure-injection tests, and later the lab's traces and faults, hook in here).
   */
  beforeConsumer?: (name: ConsumerName, record: OutboxRecord) => void | Promise<void>;
}

/** As an event job carries it: the fact as it was written (catalogue.ts upcasts it). */
type StoredRecord = Omit<OutboxRecord, 'event'> & { event: StoredEvent };

/** The handler of the EVENT_JOB kind. */
export function eventJobHandler(services: Services, handlers: ConsumerHandlers, options: EventJobOptions = {}): JobHandler {
  const log = services.log.child({ module: 'effects' });
  return async (payload: StoredRecord) => {
    const event = upcast(payload.event, payload.actorId);
    if (!event) {
      log.warn({ eventId: payload.id, type: payload.event.type }, 'an event of a type the catalogue no longer has: skipped');
      return;
    }
    const record: OutboxRecord = { ...payload, event };
    const todo = payload.consumers ? CONSUMER_NAMES.filter((c) => payload.consumers!.includes(c)) : listenersOf(event);
    const failed = new Map<ConsumerName, unknown>();
    for (const name of todo) {
      const waitingFor = ((CONSUMERS[name] as { after?: readonly ConsumerName[] }).after ?? []).find((c) => failed.has(c));
      if (waitingFor) {
        failed.set(name, new Error(`waits for ${waitingFor}`));
        continue;
      }
      try {
        await options.beforeConsumer?.(name, record);
        await (handlers[name] as ConsumerHandler<ConsumerName>)(record as ConsumerRecord<ConsumerName>);
      } catch (error) {
        failed.set(name, error);
        log.warn({ eventId: record.id, type: event.type, consumer: name, err: error }, 'consumer failed; it alone will retry');
      }
    }
    // Retention rides on the event jobs: every 1024th fact prunes a batch of old ones (a failure
    // there is the next prune's to make up, never a reason to run the consumers again).
    if (BigInt(record.id) % 1024n === 0n) {
      await pruneOutbox(services.db.sql, services.clock.now(), services.config.events.retentionDays).catch((err: unknown) =>
        log.warn({ err }, 'pruning old outbox facts failed'),
      );
    }
    if (failed.size > 0) {
      const why = [...failed].map(([name, e]) => `${name}: ${e instanceof Error ? e.message : String(e)}`).join('; ');
      throw new RetryRemaining({ ...payload, consumers: [...failed.keys()] }, why, { cause: failed.values().next().value });
    }
  };
}
