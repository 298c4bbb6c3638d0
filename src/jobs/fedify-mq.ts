import type {
  MessageQueue,
  MessageQueueDepth,
  MessageQueueEnqueueOptions,
  MessageQueueListenOptions,
} from '@fedify/fedify';
import type { Sql } from '../db/sql.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { perTurn } from '../lib/per-turn.ts';
import type { JobNotifyListener } from './notify.ts';
import {
  countJobs,
  enqueue,
  enqueueMany,
  exponentialBackoff,
  silentLogger,
  startWorkers,
  type Backoff,
  type EnqueueSpec,
  type JobLogger,
  type JobWorkers,
} from './queue.ts';

const FLOOD_WINDOW_MS = 100;
const DEFAULT_FLOOD_PER_SECOND = 300;

/** Job kind of Fedify's messages in the jobs table. */
export const FEDIFY_MESSAGE_KIND = 'fedify.message';

export interface PostgresMessageQueueOptions {
  /**
   * The queue (namespace) in the jobs table; 'fedify' by default. Instances sharing a database
   * and a name share one queue (several processes of one server); give separate servers (lab
   * instances in one database) separate names.
   */
  name?: string;
  clock?: Clock;
  log?: JobLogger;
  /** Wake-ups on commit (notify.ts); without it listeners poll every pollIntervalMs. */
  listener?: JobNotifyListener;
  /** 1000 ms by default. */
  pollIntervalMs?: number;
  /**
   * Messages one listen() call handles at once; 4 by default. Ordering keys are enforced by the
   * claim query, so no ParallelMessageQueue wrapper is needed (or wanted) around this queue.
   */
  concurrency?: number;
  /**
   * While inbox deliveries arrive faster than floodPerSecond (counted over the last 100–200 ms),
   * listeners handle one message at a time instead of `concurrency`; 300 by default, 0 never.
   * Answering peers comes first: in one process the inbox's answers and the handling of what it
   * took share one thread and one database, and a peer kept waiting retries, which adds load.
   * What arrived is handled at full speed once the flood stops (the queue holds it meanwhile).
   */
  floodPerSecond?: number;
  /** Lease of a message being handled, renewed while it runs (the queue's heartbeat); 15 s by default. */
  leaseMs?: number;
  /**
   * Attempts when the handler throws. By default Fedify retries deliveries and inbox work itself
   * (nativeRetrial false), so a throw here is unexpected: it is retried this many times in all
   * (3 by default), then kept as a dead job for inspection.
   */
  maxAttempts?: number;
  /**
   * Let this queue do the retrying (Fedify then throws a failed delivery or inbox task back to
   * it): a failed message is retried in place, keeping its position, so later messages with the
   * same orderingKey wait behind it. Fedify's own retry re-enqueues a new message instead, which
   * lets them overtake it. Set maxAttempts and backoff to the retry policy wanted. Default false.
   */
  nativeRetrial?: boolean;
  backoff?: Backoff;
  /**
   * Asked before a message is handled: false drops it (the job completes unhandled). The domain
   * policy uses it for deliveries and inbox work queued before a server was blocked.
   */
  accept?: (message: unknown) => Promise<boolean> | boolean;
}

/**
 * Fedify's MessageQueue on the durable jobs table (a queue of its own, `name`). Every message
 * goes to exactly one listener of all instances on the database (SKIP LOCKED claims); a
 * listener that dies mid-message leaves it to be retaken when its lease expires (so delivery is
 * at-least-once across crashes). Messages with the same orderingKey are handled one at a time,
 * in enqueue order, across all listeners. State lives in the database and on the instance:
 * several instances coexist in one process.
 */
export class PostgresMessageQueue implements MessageQueue {
  readonly nativeRetrial: boolean;
  readonly #sql: Sql;
  readonly #o: PostgresMessageQueueOptions;
  readonly #queue: string;
  readonly #clock: Clock;
  readonly #pools = new Set<JobWorkers>();
  /**
   * Inbox messages enqueued in the current 100 ms window (from `windowStart`) and in the one
   * before. Timed with performance.now(), not the services' clock: a rate of arrivals is a fact
   * about this process's load, and a lab's or a test's manual clock stands still.
   */
  #intake = { windowStart: 0, now: 0, before: 0 };

  constructor(sql: Sql, options: PostgresMessageQueueOptions = {}) {
    this.#sql = sql;
    this.#o = options;
    this.#queue = options.name ?? 'fedify';
    this.#clock = options.clock ?? systemClock;
    this.nativeRetrial = options.nativeRetrial ?? false;
  }

  get name(): string {
    return this.#queue;
  }

  #spec(message: unknown, options: MessageQueueEnqueueOptions | undefined, now: Date): EnqueueSpec {
    const delayMs = options?.delay == null ? 0 : Math.max(0, options.delay.total({ unit: 'millisecond' }));
    return {
      queue: this.#queue,
      kind: FEDIFY_MESSAGE_KIND,
      payload: message,
      runAt: new Date(now.getTime() + delayMs),
      maxAttempts: this.#o.maxAttempts ?? 3,
      orderingKey: options?.orderingKey,
    };
  }

  #countIntake(n: number): void {
    const t = performance.now();
    const w = this.#intake;
    if (t - w.windowStart >= FLOOD_WINDOW_MS) {
      w.before = t - w.windowStart < 2 * FLOOD_WINDOW_MS ? w.now : 0;
      w.now = 0;
      w.windowStart = t;
    }
    w.now += n;
  }

  /** Whether inbox deliveries are flooding in (see floodPerSecond). */
  #flooded(): boolean {
    const perSecond = this.#o.floodPerSecond ?? DEFAULT_FLOOD_PER_SECOND;
    if (perSecond <= 0) return false;
    this.#countIntake(0);
    const limit = (perSecond * FLOOD_WINDOW_MS) / 1000;
    return this.#intake.now >= limit || this.#intake.before >= limit;
  }

  #wakeLocal() {
    for (const pool of this.#pools) pool.wake();
  }

  /**
   * Enqueues made in one event-loop turn go out together, in one INSERT (enqueueMany, in the
   * order they were made, so ordering keys keep it) with one NOTIFY: an inbox taking 32
   * deliveries at once makes one round trip for them, not 32. One INSERT at a time (group
   * commit): what arrives while it runs goes in the next, so under a flood of deliveries the
   * batches grow instead of the statements (the inbox bench: 11 rows a statement instead of 4).
   * Each promise settles when its batch is committed. If the batch fails (one message PostgreSQL
   * refuses), its messages are enqueued again one by one, so only the bad one fails.
   */
  enqueue(message: any, options?: MessageQueueEnqueueOptions): Promise<void> {
    if (message?.type === 'inbox') this.#countIntake(1);
    let spec: EnqueueSpec;
    try {
      spec = this.#spec(message, options, this.#clock.now());
      // What would make the whole batch throw before it reaches the database fails here, alone.
      if (JSON.stringify(message) === undefined) throw new TypeError('job payload must be JSON-serialisable');
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#enqueue(spec);
  }

  readonly #enqueue = perTurn<EnqueueSpec, void>(async (batch) => {
    try {
      if (batch.length === 1) await enqueue(this.#sql, batch[0]!.item, { clock: this.#clock });
      else await enqueueMany(this.#sql, batch.map((b) => b.item), { clock: this.#clock });
      this.#wakeLocal();
      for (const b of batch) b.resolve();
    } catch (err) {
      if (batch.length === 1) return batch[0]!.reject(err);
      // One after the other, in the order they were made (ordering keys).
      for (const b of batch) {
        try {
          await enqueue(this.#sql, b.item, { clock: this.#clock });
          b.resolve();
        } catch (e) {
          b.reject(e);
        }
      }
      this.#wakeLocal();
    }
  }, { maxInFlight: 1 });

  async enqueueMany(messages: readonly any[], options?: MessageQueueEnqueueOptions): Promise<void> {
    if (messages.length === 0) return;
    const now = this.#clock.now();
    await enqueueMany(
      this.#sql,
      messages.map((m) => this.#spec(m, options, now)),
      { clock: this.#clock },
    );
    this.#wakeLocal();
  }

  /** Handles messages until options.signal aborts (never resolves without one); never rejects. */
  async listen(
    handler: (message: any) => Promise<void> | void,
    options: MessageQueueListenOptions = {},
  ): Promise<void> {
    const { signal } = options;
    if (signal?.aborted) return;
    const pool = startWorkers({
      sql: this.#sql,
      queue: this.#queue,
      handlers: {
        [FEDIFY_MESSAGE_KIND]: async (message) => {
          if (this.#o.accept && !(await this.#o.accept(message))) return;
          await handler(message);
        },
      },
      concurrency: this.#o.concurrency ?? 4,
      concurrencyNow: () => (this.#flooded() ? 1 : (this.#o.concurrency ?? 4)),
      pollIntervalMs: this.#o.pollIntervalMs ?? 1_000,
      clock: this.#clock,
      log: this.#o.log ?? silentLogger,
      backoff: this.#o.backoff ?? exponentialBackoff({ baseMs: 1_000 }),
      leaseMs: this.#o.leaseMs,
      listener: this.#o.listener,
    });
    this.#pools.add(pool);
    await new Promise<void>((resolve) => {
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
    this.#pools.delete(pool);
    await pool.stop();
  }

  /** Waiting messages (those being handled excluded; dead ones too). */
  async getDepth(): Promise<MessageQueueDepth> {
    const c = await countJobs(this.#sql, { queue: this.#queue, clock: this.#clock });
    return { queued: c.ready + c.scheduled, ready: c.ready, delayed: c.scheduled };
  }
}
