/**
 * The outbox: domain events written in the transaction that caused them (table `outbox_events`,
 * migration Migration20261123000000_outbox explains why it is a table of its own), each that some
 * consumer listens to (./consumers.ts) with one job of kind EVENT_JOB that hands it to effects/
 * after commit. Facts, not commands: the writer does not decide what an event means for the
 * outside world; the consumers in effects/ do.
 */
import type { Sql } from '../db/sql.ts';
import type { RoostEvent } from './catalogue.ts';
import { listenersOf, type ConsumerName } from './consumers.ts';
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE } from '../jobs/queue.ts';
import { JOBS_NOTIFY_CHANNEL } from '../jobs/schema.ts';

/** The job kind that carries an outbox event to effects/. */
export const EVENT_JOB = 'event';

/** Who caused a step: a client request, a peer server, a timer coming due, the operator (CLI). */
export type Origin = 'client' | 'federation' | 'timer' | 'operator';

/** A fact as written (the catalogue's union). */
export type OutboxEvent = RoostEvent;

/** What an event job carries (and what effects/ receives, its event upcast: catalogue.ts). */
export interface OutboxRecord {
  /** outbox_events.id */
  id: string;
  actorKind: string;
  actorId: string;
  /** The actor version the step produced; null for facts recorded outside an actor. */
  actorVersion: number | null;
  origin: Origin;
  event: OutboxEvent;
  /**
   * The consumers still to run (effects/registry.ts narrows it when some failed, so their retry
   * runs only them); absent: every consumer that listens.
   */
  consumers?: ConsumerName[];
}

export interface OutboxWrite {
  actorKind: string;
  actorId: string;
  actorVersion: number | null;
  origin: Origin;
  events: readonly OutboxEvent[];
  now: Date;
  /** With a dedupe key, no second job is queued while one with that key waits (the event row is still written). */
  dedupeKey?: string;
}

/**
 * Writes the events and their jobs in one statement, in the caller's transaction (pass the Sql of
 * the open transaction). Nothing is written for an empty list.
 */
export async function writeOutbox(sql: Sql, w: OutboxWrite): Promise<void> {
  if (w.events.length === 0) return;
  const o = outboxCtes(w, 1, 'true');
  await sql.query(`with ${o.ctes} select (select count(*) from ev) as n, ${o.notify}`, o.params);
}

/**
 * Whether an event is handed to effects/ at all. Every event is recorded in outbox_events (the
 * trace of what happened); one that no consumer listens to (./consumers.ts) gets no event job, and
 * a statement whose events are all such writes no job and wakes no worker: thousands of votes on
 * a local poll in a throttle window cost one statement each and queue nothing.
 */
export function needsEventJob(event: OutboxEvent): boolean {
  return listenersOf(event).length > 0;
}

/**
 * The outbox write as CTEs (`outbox_input`, `ev`, and `jobs_in` unless no event needs a job) for a statement of the caller's, its
 * parameters numbered from `$first`, the inserts made only when `when` (an SQL condition over the
 * caller's earlier CTEs) holds; `notify` is the select-list item that wakes the job workers. Used
 * alone by writeOutbox and inside the actor store's one-statement step.
 */
export function outboxCtes(w: OutboxWrite, first: number, when: string): { ctes: string; params: unknown[]; notify: string } {
  const $ = (n: number) => `$${first + n - 1}`;
  // Payloads travel as json: one event (most steps) as its own value, several as one array taken
  // by element; never ->> on a whole payload (PostgreSQL would de-escape it and fail on "\u0000",
  // see jobs/queue.ts enqueueMany).
  const one = w.events.length === 1;
  const payloads = one ? JSON.stringify(w.events[0]) : `[${w.events.map((e) => JSON.stringify(e)).join(',')}]`;
  const input = `outbox_input as (
       ${one ? `select ${$(1)}::json as payload, 0 as seq where ${when}` : `select e.payload, e.n::int - 1 as seq from json_array_elements(${$(1)}::json) with ordinality as e(payload, n) where ${when}`}
     ), ev as (
       insert into outbox_events (actor_kind, actor_id, actor_version, seq, origin, type, payload, created_at)
       select ${$(2)}, ${$(3)}::bigint, ${$(4)}::int, seq, ${$(5)}, payload->>'type', payload, ${$(6)}::timestamptz from outbox_input order by seq
       returning id, seq, payload
     )`;
  // Events nobody acts on: recorded, no job, no wake-up (needsEventJob).
  const needing = w.events.flatMap((e, seq) => (needsEventJob(e) ? [seq] : []));
  if (needing.length === 0) {
    return { ctes: input, params: [payloads, w.actorKind, w.actorId, w.actorVersion, w.origin, w.now.toISOString()], notify: 'null' };
  }
  // Otherwise a job for each event that some consumer listens to.
  const which = needing.length === w.events.length ? '' : ` where seq in (${needing.join(', ')})`;
  return {
    ctes: `${input}, jobs_in as (
       insert into jobs (queue, kind, payload, run_at, max_attempts, dedupe_key, created_at, updated_at)
       select ${$(7)}, '${EVENT_JOB}',
              json_build_object('id', id::text, 'actorKind', ${$(2)}::text, 'actorId', ${$(3)}::text, 'actorVersion', ${$(4)}::int,
                                'origin', ${$(5)}::text, 'event', payload),
              ${$(6)}::timestamptz, ${$(8)}, ${$(9)}, ${$(6)}::timestamptz, ${$(6)}::timestamptz
         from ev${which} order by seq
       on conflict (queue, dedupe_key) where state = 'pending' and dedupe_key is not null do nothing
       returning id
     )`,
    params: [payloads, w.actorKind, w.actorId, w.actorVersion, w.origin, w.now.toISOString(), DEFAULT_QUEUE, DEFAULT_MAX_ATTEMPTS, w.dedupeKey ?? null],
    notify: `pg_notify('${JOBS_NOTIFY_CHANNEL}', ${$(7)})`,
  };
}
