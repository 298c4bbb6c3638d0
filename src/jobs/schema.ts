/**
 * Tables of the durable job queue and of Fedify's KV store. Plain SQL, idempotent, valid on
 * PostgreSQL 15 and PGlite; the DDL itself is migration Migration20261122000100_jobs (the one source; tests apply it to bare
 * databases through JOBS_SCHEMA_SQL).
 *
 * jobs — one table for everything queued: Roost's own jobs (queue 'default', or any name) and
 *   Fedify's message queue (PostgresMessageQueue, queue 'fedify' unless named otherwise).
 *   - `queue` namespaces independent consumers sharing one database (several in-process
 *     instances, or Fedify vs. Roost jobs); a worker pool only ever claims from its own queue.
 *   - `state`: 'pending' (waiting for run_at), 'running' (claimed; run_at then holds the lease
 *     expiry — past it the job is retaken by any worker, which is how a crashed worker's job comes
 *     back), 'dead' (dead letter: failed max_attempts times, unknown kind, or a permanent error;
 *     kept with last_error until retried by id or deleted). Finished jobs are deleted.
 *   - `attempts` counts started attempts (incremented when claimed).
 *   - `dedupe_key`: at most one *pending* job per (queue, dedupe_key) — a second enqueue while
 *     the first has not started is a no-op (throttles: "poll update at most every 3 minutes").
 *   - `ordering_key`: jobs sharing one run one at a time, in id order (Fedify's orderingKey).
 *   - `payload` is `json`, not `jsonb`: kept verbatim and able to hold "\u0000", which jsonb
 *     rejects (remote activities may carry it).
 *   - All times come from the application's Clock (as parameters), never from SQL now().
 *
 * fedify_kv — Fedify's KvStore. `key` is the KvKey as text[] in the "C" collation, so a key
 *   prefix is a plain btree range (no separator or escaping games: ["a","b"] and ["a","bc"]
 *   never collide). `namespace` separates several stores in one database. Expired rows are
 *   invisible to reads and swept.
 *
 * Deliberately no fedify_mq table: Fedify's queue is a queue of the jobs table.
 */
export { JOBS_SQL as JOBS_SCHEMA_SQL } from '../db/migrations/Migration20261122000100_jobs.ts';

/** Channel of the NOTIFY sent (on commit) by every enqueue; the payload is the queue name. */
export const JOBS_NOTIFY_CHANNEL = 'roost_jobs';
