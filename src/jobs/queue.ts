import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { statementSource, type Sql } from '../db/sql.ts';
import { perTurn } from '../lib/per-turn.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import type { JobNotifyListener } from './notify.ts';
import { JOBS_NOTIFY_CHANNEL } from './schema.ts';

/**
 * Durable job queue on PostgreSQL (or PGlite), table `jobs` (see schema.ts).
 *
 * Life of a job: enqueue() inserts a 'pending' row (inside the caller's transaction if given a
 * transactional Sql: rows and their jobs commit together). A worker claims due rows in one
 * short statement (`SELECT … FOR UPDATE SKIP LOCKED` + UPDATE to 'running' with a lease), runs
 * the handler outside any transaction while the process's heartbeat extends the leases of all its
 * running jobs (one statement every leaseMs/3, see leaseHeartbeat), then deletes the row
 * (done) or sets it back to 'pending' with run_at pushed by the backoff (failed), or to 'dead'
 * after max_attempts. A worker that dies leaves a 'running' row whose lease expires; any worker
 * then retakes it (at-least-once delivery: handlers should be idempotent).
 */

export type JobState = 'pending' | 'running' | 'dead';

export const DEFAULT_QUEUE = 'default';
export const DEFAULT_MAX_ATTEMPTS = 10;

export interface Job {
  /** bigint id, as a decimal string. */
  id: string;
  queue: string;
  kind: string;
  /** The JSON payload as enqueued. */
  payload: unknown;
  state: JobState;
  /** Pending: when it becomes due. Running: when its lease expires. Dead: when it died. */
  runAt: Date;
  /** Started attempts, this one included while running. */
  attempts: number;
  maxAttempts: number;
  dedupeKey: string | null;
  orderingKey: string | null;
  lockedBy: string | null;
  lockedAt: Date | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface EnqueueSpec {
  kind: string;
  /** Any JSON-serialisable value. */
  payload: unknown;
  /** When the job becomes due; now by default. */
  runAt?: Date;
  /** Attempts before the job goes to the dead letters; 10 by default. */
  maxAttempts?: number;
  /** While a job with this key is pending (not yet started) in the queue, enqueue is a no-op. */
  dedupeKey?: string;
  /** Jobs with the same ordering key run one at a time, in enqueue order. */
  orderingKey?: string;
  /** Queue name (namespace); 'default' by default. */
  queue?: string;
}

export interface EnqueueOptions {
  /** Clock for "now" (default run_at, created_at). systemClock by default. */
  clock?: Clock;
  /** Send NOTIFY (delivered on commit) to wake listening pools; true by default. */
  notify?: boolean;
}

/** Minimal structured logger; a pino logger fits. */
export interface JobLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: JobLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

export type JobHandler = (payload: any, job: Job) => Promise<void>;

/** Milliseconds to wait before the next attempt, given the attempts made so far (≥ 1). */
export type Backoff = (attempts: number, job: Job) => number;

/** Throw from a handler to dead-letter the job at once, without further attempts. */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';
}

/**
 * Throw from a handler to put the job back in place (same id, so it keeps its place among jobs
 * of its ordering key) with a narrower payload, due at `runAt`: a delivery that reached some
 * inboxes and must retry the others, no sooner than one of them asked (Retry-After). Not counted
 * as a failure: the handler keeps its own count in the payload.
 */
export class RescheduleJob extends Error {
  override name = 'RescheduleJob';
  readonly runAt: Date;
  readonly payload: unknown;
  constructor(runAt: Date, payload: unknown, message = 'rescheduled') {
    super(message);
    this.runAt = runAt;
    this.payload = payload;
  }
}

/**
 * Throw from a handler when part of its work failed and the rest is done: counted as a failed
 * attempt like any other (backoff, max attempts), and the job's payload becomes `payload`, so the
 * retry does only what is left (the event job narrows its consumers: effects/registry.ts).
 */
export class RetryRemaining extends Error {
  override name = 'RetryRemaining';
  readonly payload: unknown;
  constructor(payload: unknown, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.payload = payload;
  }
}

/**
 * Exponential backoff with jitter: baseMs · factor^(attempts-1), capped at maxMs, then scaled
 * by a uniform factor in [1 - jitter, 1 + jitter]. Defaults: 5 s, ×3, cap 6 h, ±25 %
 * (5 s, 15 s, 45 s, 2¼ min, 6¾ min, 20 min, 1 h, 3 h, 6 h…).
 */
export function exponentialBackoff(
  options: { baseMs?: number; factor?: number; maxMs?: number; jitter?: number; random?: () => number } = {},
): Backoff {
  const { baseMs = 5_000, factor = 3, maxMs = 6 * 3600_000, jitter = 0.25, random = Math.random } = options;
  return (attempts) => {
    const raw = Math.min(maxMs, baseMs * factor ** Math.max(0, attempts - 1));
    return Math.max(0, Math.round(raw * (1 + jitter * (2 * random() - 1))));
  };
}

// ---------------------------------------------------------------------------------------------
// Rows

const JOB_COLUMNS = (t: string) =>
  `${t}.id::text AS id, ${t}.queue, ${t}.kind, ${t}.payload::text AS payload, ${t}.state, ${t}.run_at,
   ${t}.attempts, ${t}.max_attempts, ${t}.dedupe_key, ${t}.ordering_key, ${t}.locked_by, ${t}.lock_token,
   ${t}.locked_at, ${t}.last_error, ${t}.created_at, ${t}.updated_at`;

interface JobRow {
  id: string;
  queue: string;
  kind: string;
  payload: string;
  state: JobState;
  run_at: Date | string;
  attempts: number;
  max_attempts: number;
  dedupe_key: string | null;
  ordering_key: string | null;
  locked_by: string | null;
  lock_token: string | null;
  locked_at: Date | string | null;
  last_error: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const toDate = (v: Date | string) => (v instanceof Date ? v : new Date(v));

function toJob(row: JobRow): Job {
  return {
    id: String(row.id),
    queue: row.queue,
    kind: row.kind,
    payload: JSON.parse(row.payload),
    state: row.state,
    runAt: toDate(row.run_at),
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    dedupeKey: row.dedupe_key,
    orderingKey: row.ordering_key,
    lockedBy: row.locked_by,
    lockedAt: row.locked_at == null ? null : toDate(row.locked_at),
    lastError: row.last_error,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

function encodePayload(payload: unknown): string {
  const text = JSON.stringify(payload);
  if (text === undefined) throw new TypeError('job payload must be JSON-serialisable');
  return text;
}

function checkSpec(spec: EnqueueSpec) {
  if (!spec.kind) throw new TypeError('job kind is required');
  const max = spec.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxAttempts must be an integer ≥ 1, got ${max}`);
  if (spec.runAt && Number.isNaN(spec.runAt.getTime())) throw new RangeError('runAt is an invalid date');
}

// ---------------------------------------------------------------------------------------------
// Enqueue

/**
 * Adds a job; returns its id. Give it the Sql of an open transaction to commit the job with the
 * rows it belongs to (outbox pattern). With a dedupeKey and a pending job of the same key in the
 * queue, nothing is added and the pending job's id is returned.
 */
export async function enqueue(sql: Sql, spec: EnqueueSpec, options: EnqueueOptions = {}): Promise<string> {
  checkSpec(spec);
  const now = (options.clock ?? systemClock).now();
  const queue = spec.queue ?? DEFAULT_QUEUE;
  const notify = options.notify ?? true;
  const rows = await sql.query<{ id: string }>(
    `WITH ins AS (
       INSERT INTO jobs (queue, kind, payload, run_at, max_attempts, dedupe_key, ordering_key, created_at, updated_at)
       VALUES ($1, $2, $3::json, $4::timestamptz, $5, $6, $7, $8::timestamptz, $8::timestamptz)
       ON CONFLICT (queue, dedupe_key) WHERE state = 'pending' AND dedupe_key IS NOT NULL
       DO UPDATE SET dedupe_key = EXCLUDED.dedupe_key
       RETURNING id
     )
     SELECT id::text AS id${notify ? `, pg_notify('${JOBS_NOTIFY_CHANNEL}', $1) AS n` : ''} FROM ins`,
    [
      queue,
      spec.kind,
      encodePayload(spec.payload),
      (spec.runAt ?? now).toISOString(),
      spec.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      spec.dedupeKey ?? null,
      spec.orderingKey ?? null,
      now.toISOString(),
    ],
  );
  return String(rows[0]!.id);
}

/**
 * Adds many jobs in one statement (ids returned in input order, ascending, so ordering keys keep
 * the input order). Specs with a dedupeKey are enqueued one by one in a transaction instead.
 */
export async function enqueueMany(sql: Sql, specs: readonly EnqueueSpec[], options: EnqueueOptions = {}): Promise<string[]> {
  if (specs.length === 0) return [];
  specs.forEach(checkSpec);
  if (specs.some((s) => s.dedupeKey != null)) {
    return sql.transaction(async (tx) => {
      const ids: string[] = [];
      for (const spec of specs) ids.push(await enqueue(tx, spec, options));
      return ids;
    });
  }
  const now = (options.clock ?? systemClock).now();
  const notify = options.notify ?? true;
  const meta = JSON.stringify(
    specs.map((s) => ({
      queue: s.queue ?? DEFAULT_QUEUE,
      kind: s.kind,
      runAt: (s.runAt ?? now).toISOString(),
      maxAttempts: s.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      orderingKey: s.orderingKey ?? null,
    })),
  );
  // Payloads travel in an array of their own: extracting a field (->>) from a json object makes
  // PostgreSQL de-escape every string in it and fail on "\u0000"; taking array elements does not.
  const payloads = `[${specs.map((s) => encodePayload(s.payload)).join(',')}]`;
  const rows = await sql.query<{ ids: string[] }>(
    `WITH input AS (
       SELECT m.v, p.payload, m.n
       FROM json_array_elements($1::json) WITH ORDINALITY AS m(v, n)
       JOIN json_array_elements($3::json) WITH ORDINALITY AS p(payload, n) ON p.n = m.n
     ), ins AS (
       INSERT INTO jobs (queue, kind, payload, run_at, max_attempts, ordering_key, created_at, updated_at)
       SELECT v->>'queue', v->>'kind', payload, (v->>'runAt')::timestamptz, (v->>'maxAttempts')::integer,
              v->>'orderingKey', $2::timestamptz, $2::timestamptz
       FROM input ORDER BY n
       RETURNING id
     )
     SELECT (SELECT array_to_json(array_agg(id::text ORDER BY id))::text FROM ins) AS ids
     ${notify ? `, (SELECT count(pg_notify('${JOBS_NOTIFY_CHANNEL}', q)) FROM (SELECT DISTINCT v->>'queue' AS q FROM input) qs) AS n` : ''}`,
    [meta, now.toISOString(), payloads],
  );
  const ids = rows[0]!.ids as unknown;
  return (typeof ids === 'string' ? JSON.parse(ids) : ids) as string[];
}

// ---------------------------------------------------------------------------------------------
// Inspection and administration (metrics, tests, admin API)

export async function getJob(sql: Sql, id: string): Promise<Job | undefined> {
  const rows = await sql.query<JobRow>(`SELECT ${JOB_COLUMNS('jobs')} FROM jobs WHERE id = $1::bigint`, [id]);
  return rows[0] ? toJob(rows[0]) : undefined;
}

export interface ListJobsFilter {
  queue?: string;
  state?: JobState;
  kind?: string;
  /** 100 by default. */
  limit?: number;
  /** Only jobs with an id greater than this (keyset pagination). */
  afterId?: string;
}

/** Jobs in id order. */
export async function listJobs(sql: Sql, filter: ListJobsFilter = {}): Promise<Job[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (cond: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(cond(`$${params.length}`));
  };
  if (filter.queue !== undefined) add((p) => `queue = ${p}`, filter.queue);
  if (filter.state !== undefined) add((p) => `state = ${p}`, filter.state);
  if (filter.kind !== undefined) add((p) => `kind = ${p}`, filter.kind);
  if (filter.afterId !== undefined) add((p) => `id > ${p}::bigint`, filter.afterId);
  params.push(filter.limit ?? 100);
  const rows = await sql.query<JobRow>(
    `SELECT ${JOB_COLUMNS('jobs')} FROM jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY jobs.id LIMIT $${params.length}`,
    params,
  );
  return rows.map(toJob);
}

export interface JobCounts {
  /** Pending and due now. */
  ready: number;
  /** Pending, due later (scheduled or backing off). */
  scheduled: number;
  /** Claimed by a worker (including leases that have expired but not been retaken yet). */
  running: number;
  dead: number;
  total: number;
}

/** Counts by state, for metrics and tests; `now` decides ready vs. scheduled. */
export async function countJobs(sql: Sql, options: { queue?: string; clock?: Clock } = {}): Promise<JobCounts> {
  const now = (options.clock ?? systemClock).now();
  const rows = await sql.query<Record<keyof JobCounts, string | number>>(
    `SELECT count(*) FILTER (WHERE state = 'pending' AND run_at <= $1::timestamptz) AS ready,
            count(*) FILTER (WHERE state = 'pending' AND run_at > $1::timestamptz) AS scheduled,
            count(*) FILTER (WHERE state = 'running') AS running,
            count(*) FILTER (WHERE state = 'dead') AS dead,
            count(*) AS total
     FROM jobs WHERE ($2::text IS NULL OR queue = $2::text)`,
    [now.toISOString(), options.queue ?? null],
  );
  const r = rows[0]!;
  return {
    ready: Number(r.ready),
    scheduled: Number(r.scheduled),
    running: Number(r.running),
    dead: Number(r.dead),
    total: Number(r.total),
  };
}

/**
 * Puts a dead job back in the queue, due now (or at runAt), with its attempts reset to 0.
 * Returns the id of the pending job that will do the work: the same id, or — when a pending job
 * with the same dedupe key already exists — that job's id (the dead one is then deleted).
 * Undefined when there is no dead job with this id.
 */
export async function retryDeadJob(
  sql: Sql,
  id: string,
  options: { clock?: Clock; runAt?: Date; notify?: boolean } = {},
): Promise<string | undefined> {
  const now = (options.clock ?? systemClock).now();
  const notify = options.notify ?? true;
  return sql.transaction(async (tx) => {
    const [dead] = await tx.query<{ queue: string; dedupe_key: string | null }>(
      `SELECT queue, dedupe_key FROM jobs WHERE id = $1::bigint AND state = 'dead' FOR UPDATE`,
      [id],
    );
    if (!dead) return undefined;
    if (dead.dedupe_key != null) {
      const [dup] = await tx.query<{ id: string }>(
        `SELECT id::text AS id FROM jobs WHERE queue = $1 AND dedupe_key = $2 AND state = 'pending'`,
        [dead.queue, dead.dedupe_key],
      );
      if (dup) {
        await tx.query(`DELETE FROM jobs WHERE id = $1::bigint`, [id]);
        return dup.id;
      }
    }
    await tx.query(
      `UPDATE jobs SET state = 'pending', attempts = 0, run_at = $2::timestamptz, updated_at = $3::timestamptz,
              locked_by = NULL, lock_token = NULL, locked_at = NULL
       WHERE id = $1::bigint`,
      [id, (options.runAt ?? now).toISOString(), now.toISOString()],
    );
    if (notify) await tx.query(`SELECT pg_notify('${JOBS_NOTIFY_CHANNEL}', $1) AS n`, [dead.queue]);
    return id;
  });
}

/** Deletes a job that is not running (pending or dead). True if one was deleted. */
export async function cancelJob(sql: Sql, id: string): Promise<boolean> {
  const rows = await sql.query(`DELETE FROM jobs WHERE id = $1::bigint AND state <> 'running' RETURNING id`, [id]);
  return rows.length > 0;
}

// ---------------------------------------------------------------------------------------------
// Claiming and running

export interface ClaimedJob extends Job {
  state: 'running';
  lockToken: string;
}

export interface ClaimOptions {
  queue?: string;
  limit: number;
  clock?: Clock;
  /** How long the claim holds without a heartbeat. */
  leaseMs?: number;
  workerId?: string;
}

/**
 * The lease of a claimed job: short, because a running job's lease is renewed by the heartbeat
 * (every leaseMs/3, one statement for all the jobs the process runs on one database), so a job
 * whose process died is retaken within about this long, not after minutes.
 */
export const DEFAULT_LEASE_MS = 15_000;

/**
 * Claims up to `limit` due jobs of a queue in one statement (an implicit transaction of its
 * own): pending jobs whose run_at has come and running jobs whose lease expired, skipping rows
 * another worker is claiming, and, for ordering keys, any job with an earlier live job of the
 * same key. Marks them running with a lease of leaseMs and counts the attempt.
 */
export async function claimJobs(sql: Sql, options: ClaimOptions): Promise<ClaimedJob[]> {
  const now = (options.clock ?? systemClock).now();
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const token = randomUUID();
  const rows = await sql.query<JobRow>(
    `WITH due AS (
       SELECT j.id FROM jobs j
       WHERE j.queue = $1 AND j.state <> 'dead' AND j.run_at <= $2::timestamptz
         AND (j.ordering_key IS NULL OR NOT EXISTS (
           SELECT 1 FROM jobs o
           WHERE o.queue = j.queue AND o.ordering_key = j.ordering_key AND o.state <> 'dead' AND o.id < j.id))
       ORDER BY j.run_at, j.id
       LIMIT $3
       FOR UPDATE OF j SKIP LOCKED
     )
     UPDATE jobs SET state = 'running', attempts = jobs.attempts + 1, run_at = $4::timestamptz,
            locked_by = $5, lock_token = $6, locked_at = $2::timestamptz, updated_at = $2::timestamptz
     FROM due WHERE jobs.id = due.id
     RETURNING ${JOB_COLUMNS('jobs')}`,
    [
      options.queue ?? DEFAULT_QUEUE,
      now.toISOString(),
      options.limit,
      new Date(now.getTime() + leaseMs).toISOString(),
      options.workerId ?? defaultWorkerId(),
      token,
    ],
  );
  return rows
    .map((row) => ({ ...toJob(row), state: 'running' as const, lockToken: row.lock_token! }))
    .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
}

export interface RunOptions {
  sql: Sql;
  handlers: Record<string, JobHandler>;
  queue?: string;
  /** Jobs run at the same time; 4 by default. */
  concurrency?: number;
  clock?: Clock;
  log?: JobLogger;
  backoff?: Backoff;
  /** Lease of a claimed job; renewed every leaseMs/3 while its handler runs (leaseHeartbeat). 15 s by default. */
  leaseMs?: number;
  workerId?: string;
}

export type JobOutcome = 'done' | 'retry' | 'dead' | 'lost';

export interface WorkerOptions extends RunOptions {
  /** Safety-net polling interval; 1000 ms by default. */
  pollIntervalMs?: number;
  /**
   * Asked before each claim: how many jobs may run at once just now (at least 1), instead of the
   * fixed `concurrency` (the Fedify queue runs fewer while a flood of deliveries is coming in).
   */
  concurrencyNow?: () => number;
  /** Wake-ups on commit of an enqueue (see notify.ts); without it the pool polls. */
  listener?: JobNotifyListener;
  /** Called after each job settles (metrics, tests). */
  onJobSettled?: (job: ClaimedJob, outcome: JobOutcome) => void;
}

let workerSeq = 0;
function defaultWorkerId() {
  return `${hostname()}:${process.pid}:${++workerSeq}`;
}

const MAX_ERROR_LENGTH = 8_000;
function describeError(error: unknown): string {
  const text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}…` : text;
}

const isUniqueViolation = (error: unknown) => (error as { code?: unknown } | null)?.code === '23505';

interface Runtime {
  sql: Sql;
  handlers: Record<string, JobHandler>;
  clock: Clock;
  log: JobLogger;
  backoff: Backoff;
  leaseMs: number;
  completions: Completions;
}

/**
 * Finished jobs are deleted together: the jobs of a pool that finish in one turn of the event loop
 * (a burst of answers from one push service or inbox host) cost one statement, not one each. Each
 * caller learns whether its row was still its own (deleted under its lock token) or its lease was
 * lost. Finishing an ordered job unblocks the next one of its key: the same statement wakes the
 * other processes too.
 */
interface Completions {
  complete(job: ClaimedJob): Promise<boolean>;
}

function completionsOf(sql: Sql): Completions {
  const complete = perTurn<ClaimedJob, boolean>(async (batch) => {
    const rows = await sql.query<{ id: string }>(
      `WITH del AS (DELETE FROM jobs j USING unnest($1::bigint[], $2::text[]) AS d(id, token)
                     WHERE j.id = d.id AND j.lock_token = d.token RETURNING j.id, j.queue, j.ordering_key),
            n AS (SELECT count(pg_notify('${JOBS_NOTIFY_CHANNEL}', q)) AS c
                    FROM (SELECT DISTINCT queue AS q FROM del WHERE ordering_key IS NOT NULL) k)
       SELECT del.id::text AS id, n.c AS notified FROM del CROSS JOIN n`,
      [batch.map((b) => b.item.id), batch.map((b) => b.item.lockToken)],
    );
    const deleted = new Set(rows.map((r) => r.id));
    for (const b of batch) b.resolve(deleted.has(b.item.id));
  });
  return { complete };
}

function runtimeOf(o: RunOptions): Runtime {
  return {
    sql: o.sql,
    handlers: o.handlers,
    clock: o.clock ?? systemClock,
    log: o.log ?? silentLogger,
    backoff: o.backoff ?? exponentialBackoff(),
    leaseMs: o.leaseMs ?? DEFAULT_LEASE_MS,
    completions: completionsOf(o.sql),
  };
}

/**
 * The lease heartbeat: while handlers run, ONE statement every leaseMs/3 extends the leases of
 * all the jobs this process runs on one database (whatever their queue or pool), instead of a
 * timer and a statement per job. A job whose row no longer carries our lock token (retaken after
 * a stall longer than its lease) is reported once; settling it then finds nothing and says so.
 * Shared by (database, clock, lease): pools built alike share one; tests with their own clocks
 * or leases get theirs.
 */
export interface LeaseHeartbeat {
  add(job: ClaimedJob): void;
  remove(job: ClaimedJob): void;
  /** Jobs whose leases it renews now. */
  readonly size: number;
  /** Renews now (what the timer does); resolves with the number of leases extended. */
  beat(): Promise<number>;
}

const heartbeats = new WeakMap<Sql, Map<Clock, Map<number, LeaseHeartbeat>>>();

/** The heartbeat shared by the jobs run on `rt.sql` with `rt.clock` and `rt.leaseMs`. */
function leaseHeartbeat(rt: Runtime): LeaseHeartbeat {
  let byClock = heartbeats.get(rt.sql);
  if (!byClock) heartbeats.set(rt.sql, (byClock = new Map()));
  let byLease = byClock.get(rt.clock);
  if (!byLease) byClock.set(rt.clock, (byLease = new Map()));
  let hb = byLease.get(rt.leaseMs);
  if (!hb) byLease.set(rt.leaseMs, (hb = createLeaseHeartbeat(rt)));
  return hb;
}

function createLeaseHeartbeat(rt: Runtime): LeaseHeartbeat {
  const { sql, clock, log, leaseMs } = rt;
  /** By job id and lock token (a job retaken by another pool of this process is another entry). */
  const jobs = new Map<string, { id: string; token: string; fields: object; lost: boolean }>();
  let timer: ReturnType<typeof setInterval> | null = null;
  let inFlight: Promise<number> | null = null;
  const beat = (): Promise<number> => {
    if (inFlight) return inFlight;
    if (jobs.size === 0) return Promise.resolve(0);
    const entries = [...jobs.values()];
    const ids = [...new Set(entries.map((j) => j.id))];
    const tokens = [...new Set(entries.map((j) => j.token))];
    inFlight = sql
      .query<{ id: string; lock_token: string }>(
        `UPDATE jobs SET run_at = $3::timestamptz
         WHERE id = ANY($1::bigint[]) AND lock_token = ANY($2::text[]) AND state = 'running'
         RETURNING id::text AS id, lock_token`,
        [ids, tokens, new Date(clock.now().getTime() + leaseMs).toISOString()],
      )
      .then(
        (rows) => {
          const renewed = new Set(rows.map((r) => `${r.id}:${r.lock_token}`));
          for (const e of entries) {
            const key = `${e.id}:${e.token}`;
            const j = jobs.get(key);
            if (!j || j.lost || renewed.has(key)) continue;
            j.lost = true;
            log.warn(j.fields, 'job lease lost while running');
          }
          return renewed.size;
        },
        (error) => {
          log.warn({ err: error, jobs: ids.length }, 'job lease renewal failed');
          return 0;
        },
      )
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };
  return {
    add(job) {
      jobs.set(`${job.id}:${job.lockToken}`, { id: job.id, token: job.lockToken, fields: { jobId: job.id, queue: job.queue, kind: job.kind }, lost: false });
      if (!timer) {
        timer = setInterval(() => void beat(), Math.max(10, Math.floor(leaseMs / 3)));
        timer.unref?.();
      }
    },
    remove(job) {
      jobs.delete(`${job.id}:${job.lockToken}`);
      if (jobs.size === 0 && timer) {
        clearInterval(timer);
        timer = null;
      }
    },
    get size() {
      return jobs.size;
    },
    beat,
  };
}

/** Runs one claimed job to its outcome. Never throws. */
async function executeJob(rt: Runtime, job: ClaimedJob): Promise<JobOutcome> {
  const { sql, clock, log } = rt;
  const fields = { jobId: job.id, queue: job.queue, kind: job.kind, attempt: job.attempts };
  try {
    if (job.attempts > job.maxAttempts) {
      return await settleFailure(
        rt,
        job,
        new Error(
          `lease expired during the last of ${job.maxAttempts} attempts (worker crashed or stalled)` +
            (job.lastError ? `; previous error: ${job.lastError}` : ''),
        ),
        true,
      );
    }
    const handler = Object.hasOwn(rt.handlers, job.kind) ? rt.handlers[job.kind] : undefined;
    if (!handler) {
      return await settleFailure(rt, job, new Error(`no handler for job kind "${job.kind}" (queue "${job.queue}")`), true);
    }
    const beat = leaseHeartbeat(rt);
    beat.add(job);
    let failure: unknown;
    let failed = false;
    try {
      await handler(job.payload, job);
    } catch (error) {
      failed = true;
      failure = error;
    } finally {
      beat.remove(job);
    }
    if (failed && failure instanceof RescheduleJob) return await reschedule(rt, job, failure);
    if (failed) return await settleFailure(rt, job, failure, failure instanceof PermanentJobError);
    if (!(await rt.completions.complete(job))) {
      log.warn(fields, 'job finished after its lease was lost (another worker may have retaken it)');
      return 'lost';
    }
    log.debug(fields, 'job done');
    return 'done';
  } catch (error) {
    // Database trouble while settling: the lease will expire and the job be retaken.
    log.error({ ...fields, err: error }, 'could not settle job');
    return 'lost';
  }
}

async function reschedule(rt: Runtime, job: ClaimedJob, r: RescheduleJob): Promise<JobOutcome> {
  const rows = await rt.sql.query(
    `UPDATE jobs SET state = 'pending', run_at = $3::timestamptz, payload = $4::json, attempts = attempts - 1,
            last_error = $5, updated_at = $6::timestamptz, locked_by = NULL, lock_token = NULL, locked_at = NULL
     WHERE id = $1::bigint AND lock_token = $2 RETURNING id`,
    [job.id, job.lockToken, r.runAt.toISOString(), encodePayload(r.payload), r.message, rt.clock.now().toISOString()],
  );
  if (rows.length === 0) {
    rt.log.warn({ jobId: job.id, queue: job.queue, kind: job.kind }, 'job rescheduled after its lease was lost');
    return 'lost';
  }
  return 'retry';
}

async function settleFailure(rt: Runtime, job: ClaimedJob, error: unknown, permanent: boolean): Promise<JobOutcome> {
  const { sql, clock, log } = rt;
  const now = clock.now();
  const dead = permanent || job.attempts >= job.maxAttempts;
  const runAt = dead ? now : new Date(now.getTime() + Math.max(0, rt.backoff(job.attempts, job)));
  const fields = { jobId: job.id, queue: job.queue, kind: job.kind, attempt: job.attempts, err: error };
  // What is left of a job that partly failed (RetryRemaining); null keeps the payload.
  const remaining = error instanceof RetryRemaining ? encodePayload(error.payload) : null;
  let rows: unknown[];
  try {
    rows = await sql.query(
      `UPDATE jobs SET state = $3, run_at = $4::timestamptz, last_error = $5, updated_at = $6::timestamptz,
              locked_by = NULL, lock_token = NULL, locked_at = NULL, payload = coalesce($7::json, payload)
       WHERE id = $1::bigint AND lock_token = $2 RETURNING id`,
      [job.id, job.lockToken, dead ? 'dead' : 'pending', runAt.toISOString(), describeError(error), now.toISOString(), remaining],
    );
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    // Back to pending would make two pending jobs with one dedupe key: the newer one does the work.
    await sql.query(`DELETE FROM jobs WHERE id = $1::bigint AND lock_token = $2`, [job.id, job.lockToken]);
    log.warn(fields, 'job failed; superseded by a pending job with the same dedupe key');
    return 'done';
  }
  if (rows.length === 0) {
    log.warn(fields, 'job failed after its lease was lost');
    return 'lost';
  }
  if (dead && job.orderingKey != null) {
    await sql.query(`SELECT pg_notify('${JOBS_NOTIFY_CHANNEL}', $1) AS n`, [job.queue]);
  }
  if (dead) log.error(fields, 'job dead-lettered');
  else log.warn({ ...fields, retryAt: runAt.toISOString() }, 'job failed; will retry');
  return dead ? 'dead' : 'retry';
}

/**
 * Runs due jobs of a queue until none is due (or maxJobs ran), `concurrency` at a time, and
 * returns how many ran. Deterministic stepping for tests and the federation lab; the same code
 * path as the pool.
 */
export async function runDueJobs(options: RunOptions & { maxJobs?: number }): Promise<number> {
  const rt = runtimeOf(options);
  const concurrency = options.concurrency ?? 4;
  const maxJobs = options.maxJobs ?? 10_000;
  const workerId = options.workerId ?? defaultWorkerId();
  let ran = 0;
  while (ran < maxJobs) {
    const claimed = await claimJobs(rt.sql, {
      queue: options.queue,
      limit: Math.min(concurrency, maxJobs - ran),
      clock: rt.clock,
      leaseMs: rt.leaseMs,
      workerId,
    });
    if (claimed.length === 0) break;
    await Promise.all(claimed.map((job) => executeJob(rt, job)));
    ran += claimed.length;
  }
  return ran;
}

export interface JobWorkers {
  readonly workerId: string;
  /** Jobs running now. */
  readonly running: number;
  /** Claim now instead of at the next poll. */
  wake(): void;
  /** Stops claiming and resolves when the running jobs have settled. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a pool of `concurrency` job runners on one queue. Claims as many due jobs as it has free
 * slots, runs them concurrently, and sleeps until woken (a NOTIFY through `listener`, wake(), a
 * slot freeing up), until the next known run_at, or for pollIntervalMs.
 */
export function startWorkers(options: WorkerOptions): JobWorkers {
  const rt = runtimeOf(options);
  const queue = options.queue ?? DEFAULT_QUEUE;
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  const workerId = options.workerId ?? defaultWorkerId();
  const log = rt.log;
  const active = new Set<Promise<void>>();
  let stopping = false;
  let wakePending = false;
  let wakeNow: (() => void) | null = null;

  const wake = () => {
    wakePending = true;
    wakeNow?.();
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (wakePending || stopping) {
        wakePending = false;
        resolve();
        return;
      }
      const done = () => {
        clearTimeout(timer);
        wakeNow = null;
        wakePending = false;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      wakeNow = done;
    });

  const unsubscribe = options.listener
    ?.subscribe(JOBS_NOTIFY_CHANNEL, (payload) => {
      if (payload === undefined || payload === queue) wake();
    })
    .catch((error) => {
      log.error({ err: error, queue }, 'job pool could not listen for notifications; polling only');
      return undefined;
    });

  /**
   * Milliseconds until the earliest run_at after `claimedAt` (a scheduled job, a backoff, a lease
   * to retake), capped at pollIntervalMs. Jobs due by `claimedAt` and left unclaimed are locked by
   * another claim or wait behind their ordering key: their unblocking wakes us (slot freed, or
   * NOTIFY). Counting from the claim's instant, not from now, matters: a job that fell due between
   * the claim and this query is due now (0 ms), not forgotten until the next poll.
   */
  const untilNextDue = async (claimedAt: Date): Promise<number> => {
    const rows = await rt.sql.query<{ next: Date | string | null }>(
      `SELECT min(run_at) AS next FROM jobs WHERE queue = $1 AND state <> 'dead' AND run_at > $2::timestamptz`,
      [queue, claimedAt.toISOString()],
    );
    const next = rows[0]?.next;
    if (next == null) return pollIntervalMs;
    return Math.min(pollIntervalMs, Math.max(0, toDate(next).getTime() - rt.clock.now().getTime()));
  };

  const loop = async () => {
    let failures = 0;
    while (!stopping) {
      const free = (options.concurrencyNow ? Math.max(1, options.concurrencyNow()) : concurrency) - active.size;
      if (free <= 0) {
        await sleep(pollIntervalMs);
        // Woken by a slot freeing: let the rest of this turn's finished jobs free theirs too, so
        // one claim takes their places together (their deletions were one statement as well).
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      let claimed: ClaimedJob[];
      let delay = pollIntervalMs;
      const claimedAt = rt.clock.now();
      try {
        const clock = { now: () => claimedAt };
        claimed = await claimJobs(rt.sql, { queue, limit: free, clock, leaseMs: rt.leaseMs, workerId });
        failures = 0;
      } catch (error) {
        failures++;
        log.error({ err: error, queue, workerId }, 'claiming jobs failed');
        await sleep(Math.min(30_000, pollIntervalMs * 2 ** Math.min(failures, 10)));
        continue;
      }
      // The claimed jobs start at once; when to look again is worked out while they run.
      for (const job of claimed) {
        const run = executeJob(rt, job).then((outcome) => {
          try {
            options.onJobSettled?.(job, outcome);
          } catch (error) {
            log.error({ err: error }, 'onJobSettled threw');
          }
        });
        const tracked = run.finally(() => {
          active.delete(tracked);
          wake();
        });
        active.add(tracked);
      }
      if (claimed.length === free) continue;
      try {
        delay = await untilNextDue(claimedAt);
      } catch (error) {
        log.error({ err: error, queue, workerId }, 'reading the next due job failed');
      }
      await sleep(delay);
    }
  };

  // A clock that jumps (tests, the lab) wakes the pool: what it slept for may be due now.
  const offClock = rt.clock.onJump?.(wake);
  // Statements of the pool count as the background's (db/sql.ts statementSource).
  const looping = statementSource.run('jobs', loop);
  let stopped: Promise<void> | null = null;

  return {
    workerId,
    get running() {
      return active.size;
    },
    wake,
    stop() {
      stopped ??= (async () => {
        stopping = true;
        offClock?.();
        wakeNow?.();
        await looping;
        while (active.size > 0) await Promise.all([...active]);
        const off = await unsubscribe;
        await off?.().catch(() => {});
      })();
      return stopped;
    },
  };
}
