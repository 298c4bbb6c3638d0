/**
 * What services may put in the durable queue, without knowing the queue (src/jobs/queue.ts):
 * outbox facts go through the actor store (services/actor-store.ts → events/outbox.ts); timers
 * and background work are scheduled here, each with its due time and a dedupe key.
 *
 * Timers come back as events into services through ONE job kind, TIMER_JOB, whose handler is
 * services/timers.ts (registered by the composition root): effects/ never calls into services.
 */
import type { Sql } from '../db/sql.ts';
import { enqueue } from '../jobs/queue.ts';
import type { Clock } from '../lib/clock.ts';

export { EVENT_JOB, type Origin, type OutboxEvent, type OutboxRecord } from './outbox.ts';

/** The one job kind that brings a timer back to services/timers.ts. */
export const TIMER_JOB = 'timer';

/** Timers: an event a service asked to receive at a time (later: status.publish). */
export type TimerEvent =
  | { type: 'mute.expire'; accountId: string; targetId: string }
  /** A poll's end (services/polls.ts): steps `poll.close`. */
  | { type: 'poll.close'; pollId: string }
  /** A poll's throttled Update is due (services/polls.ts): steps `poll.update_due`. */
  | { type: 'poll.update_due'; pollId: string }
  /** A scheduled status' time (services/scheduled-statuses.ts): the time it was set for, `scheduledAt`. */
  | { type: 'scheduled_status.publish'; scheduledStatusId: string; scheduledAt: string };

export interface ScheduleOptions {
  /** When it is due (now by default). */
  runAt?: Date;
  /** While a job with this key waits, scheduling it again adds nothing. */
  dedupeKey?: string;
  maxAttempts?: number;
  /** Jobs with the same ordering key run one at a time, in the order scheduled. */
  orderingKey?: string;
  /** The lane (the job queue's `queue`) whose runners take it; the default one unless named. */
  queue?: string;
  clock?: Clock;
}

/** Schedules a timer in the caller's transaction (pass its Sql). */
export async function scheduleTimer(sql: Sql, timer: TimerEvent, opts: ScheduleOptions = {}): Promise<void> {
  await schedule(sql, TIMER_JOB, timer, opts);
}

/** Drops the timers with these dedupe keys that have not started yet (in the caller's transaction). */
export async function cancelTimers(sql: Sql, dedupeKeys: readonly string[]): Promise<void> {
  if (dedupeKeys.length === 0) return;
  await sql.query(`delete from jobs where kind = $1 and state = 'pending' and dedupe_key = any($2::text[])`, [TIMER_JOB, [...dedupeKeys]]);
}

/** Schedules background work of `kind` (a job kind with a handler in the composition root). */
export async function schedule(sql: Sql, kind: string, payload: unknown, opts: ScheduleOptions = {}): Promise<void> {
  await enqueue(
    sql,
    { kind, payload, runAt: opts.runAt, dedupeKey: opts.dedupeKey, maxAttempts: opts.maxAttempts, orderingKey: opts.orderingKey, queue: opts.queue },
    { clock: opts.clock },
  );
}
