import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestSql } from '../helpers/sql.ts';
import type { Sql } from '../../src/db/sql.ts';
import { createManualClock, type ManualClock } from '../../src/lib/clock.ts';
import {
  PermanentJobError,
  RescheduleJob,
  cancelJob,
  claimJobs,
  countJobs,
  enqueue,
  enqueueMany,
  exponentialBackoff,
  getJob,
  listJobs,
  retryDeadJob,
  runDueJobs,
  type Job,
  type JobHandler,
} from '../../src/jobs/queue.ts';
import { applyJobsSchema, createJobsDb, resetJobs } from './helpers.ts';

const T0 = new Date('2026-03-01T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
/** Deterministic backoff for exact assertions: 10 s per attempt made. */
const linearBackoff = (attempts: number) => attempts * 10_000;

let db: TestSql;
let sql: Sql;
let clock: ManualClock;

beforeAll(async () => {
  db = await createJobsDb();
  sql = db.sql;
});
afterAll(async () => {
  await db?.close();
});
beforeEach(async () => {
  await resetJobs(sql);
  clock = createManualClock(T0);
});

function run(handlers: Record<string, JobHandler>, extra: { concurrency?: number; leaseMs?: number } = {}) {
  return runDueJobs({ sql, handlers, clock, backoff: linearBackoff, ...extra });
}

describe('schema', () => {
  it('is idempotent', async () => {
    await applyJobsSchema(sql);
    await applyJobsSchema(sql);
    expect(await countJobs(sql, { clock })).toEqual({ ready: 0, scheduled: 0, running: 0, dead: 0, total: 0 });
  });
});

describe('enqueue', () => {
  it('stores a pending job with exact fields and returns its id', async () => {
    const id = await enqueue(sql, { kind: 'poll.close', payload: { pollId: '42', n: [1, 2] } }, { clock });
    expect(id).toBe('1');
    const job = await getJob(sql, id);
    expect(job).toEqual<Job>({
      id: '1',
      queue: 'default',
      kind: 'poll.close',
      payload: { pollId: '42', n: [1, 2] },
      state: 'pending',
      runAt: T0,
      attempts: 0,
      maxAttempts: 10,
      dedupeKey: null,
      orderingKey: null,
      lockedBy: null,
      lockedAt: null,
      lastError: null,
      createdAt: T0,
      updatedAt: T0,
    });
  });

  it('keeps payloads verbatim, "\\u0000" included', async () => {
    const payload = { content: 'a\u0000b', emoji: '🐦', nested: { z: 1, a: [null, true, 1.5] } };
    const id = await enqueue(sql, { kind: 'k', payload }, { clock });
    expect((await getJob(sql, id))!.payload).toEqual(payload);
    const [id2] = await enqueueMany(sql, [{ kind: 'k', payload }], { clock });
    expect((await getJob(sql, id2!))!.payload).toEqual(payload);
  });

  it('rejects what is not JSON and bad maxAttempts', async () => {
    await expect(enqueue(sql, { kind: 'k', payload: undefined }, { clock })).rejects.toThrow(TypeError);
    await expect(enqueue(sql, { kind: 'k', payload: 1, maxAttempts: 0 }, { clock })).rejects.toThrow(RangeError);
    expect((await countJobs(sql, { clock })).total).toBe(0);
  });

  it('inside a rolled-back transaction leaves no job; a committed one leaves it', async () => {
    await expect(
      sql.transaction(async (tx) => {
        await enqueue(tx, { kind: 'k', payload: 'lost' }, { clock });
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    expect((await countJobs(sql, { clock })).total).toBe(0);
    const id = await sql.transaction((tx) => enqueue(tx, { kind: 'k', payload: 'kept' }, { clock }));
    expect((await listJobs(sql)).map((j) => [j.id, j.payload])).toEqual([[id, 'kept']]);
  });

  it('enqueueMany inserts in input order with ascending ids', async () => {
    const ids = await enqueueMany(
      sql,
      [
        { kind: 'a', payload: 1 },
        { kind: 'b', payload: 2, runAt: at(5_000), maxAttempts: 2, orderingKey: 'o' },
        { kind: 'c', payload: 3, queue: 'other' },
      ],
      { clock },
    );
    expect(ids).toEqual(['1', '2', '3']);
    const jobs = await listJobs(sql);
    expect(jobs.map((j) => [j.id, j.kind, j.payload, j.queue, j.runAt.toISOString(), j.maxAttempts, j.orderingKey])).toEqual([
      ['1', 'a', 1, 'default', T0.toISOString(), 10, null],
      ['2', 'b', 2, 'default', at(5_000).toISOString(), 2, 'o'],
      ['3', 'c', 3, 'other', T0.toISOString(), 10, null],
    ]);
    expect(await enqueueMany(sql, [], { clock })).toEqual([]);
  });

  it('lists in numeric id order past a power of ten (9 before 10), and pages after an id', async () => {
    const ids = await enqueueMany(sql, Array.from({ length: 12 }, (_, n) => ({ kind: 'k', payload: n })), { clock });
    expect(ids).toEqual(Array.from({ length: 12 }, (_, n) => String(n + 1)));
    expect((await listJobs(sql)).map((j) => j.id)).toEqual(ids);
    expect((await listJobs(sql, { afterId: '8', limit: 3 })).map((j) => j.id)).toEqual(['9', '10', '11']);
  });
});

describe('scheduling', () => {
  it('runs a job only once its runAt has come, in run_at then id order', async () => {
    const ran: string[] = [];
    const handlers = { k: async (p: string) => void ran.push(p) };
    await enqueue(sql, { kind: 'k', payload: 'late', runAt: at(60_000) }, { clock });
    await enqueue(sql, { kind: 'k', payload: 'soon', runAt: at(30_000) }, { clock });
    await enqueue(sql, { kind: 'k', payload: 'now-1' }, { clock });
    await enqueue(sql, { kind: 'k', payload: 'now-2' }, { clock });
    expect(await countJobs(sql, { clock })).toEqual({ ready: 2, scheduled: 2, running: 0, dead: 0, total: 4 });

    expect(await run(handlers, { concurrency: 1 })).toBe(2);
    expect(ran).toEqual(['now-1', 'now-2']);

    clock.advance(29_999);
    expect(await run(handlers)).toBe(0);
    clock.advance(1);
    expect(await run(handlers)).toBe(1);
    expect(ran).toEqual(['now-1', 'now-2', 'soon']);

    clock.advance(30_000);
    expect(await run(handlers)).toBe(1);
    expect(ran).toEqual(['now-1', 'now-2', 'soon', 'late']);
    expect((await countJobs(sql, { clock })).total).toBe(0);
  });

  it('runs jobs of one queue only', async () => {
    await enqueue(sql, { kind: 'k', payload: 'a', queue: 'q1' }, { clock });
    await enqueue(sql, { kind: 'k', payload: 'b', queue: 'q2' }, { clock });
    const ran: string[] = [];
    expect(await runDueJobs({ sql, clock, queue: 'q2', handlers: { k: async (p) => void ran.push(p) } })).toBe(1);
    expect(ran).toEqual(['b']);
    expect((await listJobs(sql)).map((j) => j.queue)).toEqual(['q1']);
    expect(await countJobs(sql, { clock, queue: 'q1' })).toEqual({ ready: 1, scheduled: 0, running: 0, dead: 0, total: 1 });
    expect(await countJobs(sql, { clock, queue: 'q2' })).toEqual({ ready: 0, scheduled: 0, running: 0, dead: 0, total: 0 });
  });

  it('runs jobs sharing an ordering key one at a time, in order', async () => {
    const events: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const handlers = {
      k: async (p: string) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        events.push(`start ${p}`);
        await new Promise((r) => setTimeout(r, 5));
        events.push(`end ${p}`);
        inFlight--;
      },
    };
    for (const n of [1, 2, 3]) await enqueue(sql, { kind: 'k', payload: `A${n}`, orderingKey: 'A' }, { clock });
    expect(await run(handlers, { concurrency: 4 })).toBe(3);
    expect(events).toEqual(['start A1', 'end A1', 'start A2', 'end A2', 'start A3', 'end A3']);
    expect(maxInFlight).toBe(1);
  });

  it('holds later jobs of an ordering key behind a failing head until it is dead', async () => {
    const ran: string[] = [];
    const handlers = {
      k: async (p: string) => {
        ran.push(p);
        if (p === 'A1') throw new Error('boom');
      },
    };
    await enqueue(sql, { kind: 'k', payload: 'A1', orderingKey: 'A', maxAttempts: 2 }, { clock });
    await enqueue(sql, { kind: 'k', payload: 'A2', orderingKey: 'A' }, { clock });
    await enqueue(sql, { kind: 'k', payload: 'B1', orderingKey: 'B' }, { clock });
    expect(await run(handlers)).toBe(2);
    expect(ran).toEqual(['A1', 'B1']);
    clock.advance(10_000);
    expect(await run(handlers)).toBe(2); // A1 dies on its second attempt, which frees A2
    expect(ran).toEqual(['A1', 'B1', 'A1', 'A2']);
    expect((await listJobs(sql)).map((j) => [j.payload, j.state])).toEqual([['A1', 'dead']]);
  });
});

describe('retries and dead letters', () => {
  it('retries a failed job with backoff: attempts, run_at and last_error', async () => {
    let calls = 0;
    const handlers = {
      flaky: async () => {
        calls++;
        if (calls < 3) throw new Error(`failure ${calls}`);
      },
    };
    const id = await enqueue(sql, { kind: 'flaky', payload: {} }, { clock });

    expect(await run(handlers)).toBe(1);
    let job = (await getJob(sql, id))!;
    expect([job.state, job.attempts, job.runAt.toISOString(), job.lockedBy]).toEqual([
      'pending',
      1,
      at(10_000).toISOString(),
      null,
    ]);
    expect(job.lastError).toMatch(/^Error: failure 1\n/);
    expect(await countJobs(sql, { clock })).toEqual({ ready: 0, scheduled: 1, running: 0, dead: 0, total: 1 });

    clock.advance(9_999);
    expect(await run(handlers)).toBe(0);
    clock.advance(1);
    expect(await run(handlers)).toBe(1);
    job = (await getJob(sql, id))!;
    expect([job.state, job.attempts, job.runAt.toISOString()]).toEqual(['pending', 2, at(10_000 + 20_000).toISOString()]);
    expect(job.lastError).toMatch(/^Error: failure 2\n/);

    clock.advance(20_000);
    expect(await run(handlers)).toBe(1);
    expect(await getJob(sql, id)).toBeUndefined();
    expect(calls).toBe(3);
  });

  it('dead-letters after maxAttempts, keeps it queryable, and retries it by id', async () => {
    let fail = true;
    let calls = 0;
    const handlers = {
      send: async () => {
        calls++;
        if (fail) throw new Error('remote down');
      },
    };
    const id = await enqueue(sql, { kind: 'send', payload: { to: 'x' }, maxAttempts: 3 }, { clock });
    await run(handlers);
    clock.advance(10_000);
    await run(handlers);
    clock.advance(20_000);
    await run(handlers);
    expect(calls).toBe(3);
    const dead = (await getJob(sql, id))!;
    expect([dead.state, dead.attempts, dead.maxAttempts, dead.runAt.toISOString(), dead.updatedAt.toISOString()]).toEqual([
      'dead',
      3,
      3,
      at(30_000).toISOString(),
      at(30_000).toISOString(),
    ]);
    expect(dead.lastError).toMatch(/^Error: remote down\n/);
    expect(await countJobs(sql, { clock })).toEqual({ ready: 0, scheduled: 0, running: 0, dead: 1, total: 1 });
    expect((await listJobs(sql, { state: 'dead' })).map((j) => j.id)).toEqual([id]);

    clock.advance(3_600_000);
    expect(await run(handlers)).toBe(0); // dead jobs are never claimed
    expect(calls).toBe(3);

    expect(await retryDeadJob(sql, id, { clock })).toBe(id);
    const revived = (await getJob(sql, id))!;
    expect([revived.state, revived.attempts, revived.runAt.toISOString(), revived.lastError]).toEqual([
      'pending',
      0,
      at(30_000 + 3_600_000).toISOString(),
      dead.lastError,
    ]);
    fail = false;
    expect(await run(handlers)).toBe(1);
    expect(calls).toBe(4);
    expect(await getJob(sql, id)).toBeUndefined();
    expect(await retryDeadJob(sql, id, { clock })).toBeUndefined();
  });

  it('retryDeadJob only touches dead jobs and yields to a pending duplicate', async () => {
    const pending = await enqueue(sql, { kind: 'k', payload: 1 }, { clock });
    expect(await retryDeadJob(sql, pending, { clock })).toBeUndefined();
    expect(await retryDeadJob(sql, '999', { clock })).toBeUndefined();

    const deadId = await enqueue(sql, { kind: 'k', payload: 'd', dedupeKey: 'poll:1', maxAttempts: 1 }, { clock });
    await runDueJobs({ sql, clock, handlers: { k: async () => { throw new Error('x'); } } });
    expect((await getJob(sql, deadId))!.state).toBe('dead');
    const fresh = await enqueue(sql, { kind: 'k', payload: 'fresh', dedupeKey: 'poll:1', runAt: at(1000) }, { clock });
    expect(fresh).not.toBe(deadId);
    expect(await retryDeadJob(sql, deadId, { clock })).toBe(fresh);
    expect(await getJob(sql, deadId)).toBeUndefined();
  });

  it('dead-letters a job of unknown kind with a clear error, without retrying', async () => {
    const id = await enqueue(sql, { kind: 'nope', payload: null }, { clock });
    expect(await run({})).toBe(1);
    const job = (await getJob(sql, id))!;
    expect([job.state, job.attempts]).toEqual(['dead', 1]);
    expect(job.lastError).toMatch(/^Error: no handler for job kind "nope" \(queue "default"\)/);
  });

  it('does not treat inherited properties as handlers', async () => {
    const id = await enqueue(sql, { kind: 'toString', payload: null }, { clock });
    await run({});
    expect((await getJob(sql, id))!.lastError).toMatch(/no handler for job kind "toString"/);
  });

  it('dead-letters at once on PermanentJobError', async () => {
    const id = await enqueue(sql, { kind: 'k', payload: null }, { clock });
    await run({ k: async () => { throw new PermanentJobError('gone for good'); } });
    const job = (await getJob(sql, id))!;
    expect([job.state, job.attempts]).toEqual(['dead', 1]);
    expect(job.lastError).toMatch(/^PermanentJobError: gone for good/);
  });

  it('puts a job back in place with a new payload and due time on RescheduleJob, not counting an attempt', async () => {
    const first = await enqueue(sql, { kind: 'k', payload: { left: ['a', 'b'] }, orderingKey: 'o', maxAttempts: 1 }, { clock });
    const second = await enqueue(sql, { kind: 'k', payload: { left: ['c'] }, orderingKey: 'o' }, { clock });
    const seen: unknown[] = [];
    const handler: JobHandler = async (payload, job) => {
      seen.push(payload);
      if (job.id === first && (payload as { left: string[] }).left.length === 2) throw new RescheduleJob(at(30_000), { left: ['b'] }, '1 left');
    };
    await run({ k: handler });
    let job = (await getJob(sql, first))!;
    expect([job.state, job.attempts, job.payload, job.runAt.toISOString(), job.lastError]).toEqual(['pending', 0, { left: ['b'] }, at(30_000).toISOString(), '1 left']);
    // The next job of its ordering key waits behind it.
    expect((await getJob(sql, second))!.state).toBe('pending');
    expect(seen).toEqual([{ left: ['a', 'b'] }]);
    clock.set(at(30_000));
    await run({ k: handler });
    expect(seen).toEqual([{ left: ['a', 'b'] }, { left: ['b'] }, { left: ['c'] }]);
    expect(await getJob(sql, first)).toBeUndefined();
    expect(await getJob(sql, second)).toBeUndefined();
  });

  it('stores non-Error throws', async () => {
    const id = await enqueue(sql, { kind: 'k', payload: null, maxAttempts: 1 }, { clock });
    await run({ k: async () => { throw 'plain string'; } });
    expect((await getJob(sql, id))!.lastError).toBe('plain string');
  });
});

describe('exponentialBackoff', () => {
  it('grows by factor, caps, and jitters within bounds', () => {
    const mid = exponentialBackoff({ random: () => 0.5 });
    expect([1, 2, 3, 4, 5, 8, 9, 20].map((n) => mid(n, {} as Job))).toEqual([
      5_000, 15_000, 45_000, 135_000, 405_000, 10_935_000, 21_600_000, 21_600_000,
    ]);
    const low = exponentialBackoff({ baseMs: 1000, factor: 2, maxMs: 60_000, jitter: 0.2, random: () => 0 });
    const high = exponentialBackoff({ baseMs: 1000, factor: 2, maxMs: 60_000, jitter: 0.2, random: () => 1 });
    expect([1, 2, 3, 10].map((n) => low(n, {} as Job))).toEqual([800, 1600, 3200, 48_000]);
    expect([1, 2, 3, 10].map((n) => high(n, {} as Job))).toEqual([1200, 2400, 4800, 72_000]);
  });
});

describe('dedupeKey', () => {
  it('makes a second enqueue of a still-pending job a no-op returning the same id', async () => {
    const a = await enqueue(
      sql,
      { kind: 'poll.update', payload: { v: 1 }, runAt: at(180_000), dedupeKey: 'poll-update:7' },
      { clock },
    );
    const b = await enqueue(sql, { kind: 'poll.update', payload: { v: 2 }, dedupeKey: 'poll-update:7' }, { clock });
    expect(b).toBe(a);
    const other = await enqueue(sql, { kind: 'poll.update', payload: { v: 3 }, dedupeKey: 'poll-update:8' }, { clock });
    expect(other).not.toBe(a);
    const otherQueue = await enqueue(
      sql,
      { kind: 'poll.update', payload: { v: 4 }, dedupeKey: 'poll-update:7', queue: 'q2' },
      { clock },
    );
    expect(otherQueue).not.toBe(a);
    const jobs = await listJobs(sql);
    expect(jobs.map((j) => [j.id, j.payload, j.runAt.toISOString(), j.dedupeKey])).toEqual([
      [a, { v: 1 }, at(180_000).toISOString(), 'poll-update:7'],
      [other, { v: 3 }, T0.toISOString(), 'poll-update:8'],
      [otherQueue, { v: 4 }, T0.toISOString(), 'poll-update:7'],
    ]);
  });

  it('lets a new job in once the pending one has started, and after it finished', async () => {
    const first = await enqueue(sql, { kind: 'k', payload: 1, dedupeKey: 'd' }, { clock });
    const [claimed] = await claimJobs(sql, { limit: 1, clock, workerId: 'w1' });
    expect(claimed!.id).toBe(first);
    const second = await enqueue(sql, { kind: 'k', payload: 2, dedupeKey: 'd' }, { clock });
    expect(second).not.toBe(first);
    expect(await enqueue(sql, { kind: 'k', payload: 3, dedupeKey: 'd' }, { clock })).toBe(second);
    expect((await listJobs(sql)).map((j) => [j.id, j.state])).toEqual([
      [first, 'running'],
      [second, 'pending'],
    ]);
  });

  it('drops a failing job that a pending duplicate supersedes', async () => {
    const first = await enqueue(sql, { kind: 'k', payload: 1, dedupeKey: 'd' }, { clock });
    const ran: number[] = [];
    let second = '';
    await runDueJobs({
      sql,
      clock,
      backoff: linearBackoff,
      concurrency: 1,
      maxJobs: 1,
      handlers: {
        k: async (p: number) => {
          ran.push(p);
          second = await enqueue(sql, { kind: 'k', payload: 2, dedupeKey: 'd', runAt: at(60_000) }, { clock });
          throw new Error('fails while a duplicate is pending');
        },
      },
    });
    expect(ran).toEqual([1]);
    expect(await getJob(sql, first)).toBeUndefined();
    expect((await listJobs(sql)).map((j) => [j.id, j.payload, j.state])).toEqual([[second, 2, 'pending']]);
  });
});

describe('leases', () => {
  it('retakes the job of a crashed worker once its lease expires', async () => {
    const id = await enqueue(sql, { kind: 'k', payload: 'x' }, { clock });
    const [crashed] = await claimJobs(sql, { limit: 10, clock, leaseMs: 30_000, workerId: 'crashed-worker' });
    expect([crashed!.id, crashed!.attempts, crashed!.lockedBy, crashed!.runAt.toISOString()]).toEqual([
      id,
      1,
      'crashed-worker',
      at(30_000).toISOString(),
    ]);
    expect(await countJobs(sql, { clock })).toEqual({ ready: 0, scheduled: 0, running: 1, dead: 0, total: 1 });

    const seen: Job[] = [];
    const handlers = { k: async (_: unknown, job: Job) => void seen.push(job) };
    clock.advance(29_999);
    expect(await run(handlers)).toBe(0);
    clock.advance(1);
    expect(await runDueJobs({ sql, clock, handlers, workerId: 'rescuer' })).toBe(1);
    expect(seen.map((j) => [j.id, j.attempts, j.lockedBy, j.state])).toEqual([[id, 2, 'rescuer', 'running']]);
    expect(await getJob(sql, id)).toBeUndefined();
  });

  it('dead-letters instead of running when the lease expired on the last attempt', async () => {
    const id = await enqueue(sql, { kind: 'k', payload: 'x', maxAttempts: 1 }, { clock });
    await claimJobs(sql, { limit: 1, clock, leaseMs: 1000, workerId: 'crashed' });
    clock.advance(1000);
    let calls = 0;
    expect(await run({ k: async () => void calls++ })).toBe(1);
    expect(calls).toBe(0);
    const job = (await getJob(sql, id))!;
    expect([job.state, job.attempts]).toEqual(['dead', 2]);
    expect(job.lastError).toMatch(/lease expired during the last of 1 attempts/);
  });

  it('a worker whose lease was lost cannot settle the job it lost', async () => {
    const id = await enqueue(sql, { kind: 'k', payload: 'x' }, { clock });
    const [stale] = await claimJobs(sql, { limit: 1, clock, leaseMs: 1000, workerId: 'slow' });
    clock.advance(1000);
    const [fresh] = await claimJobs(sql, { limit: 1, clock, leaseMs: 60_000, workerId: 'fast' });
    expect([fresh!.id, fresh!.attempts]).toEqual([id, 2]);
    expect(stale!.lockToken).not.toBe(fresh!.lockToken);
    // The slow worker finishing now must not delete the job the fast one holds.
    const rows = await sql.query(`DELETE FROM jobs WHERE id = $1::bigint AND lock_token = $2 RETURNING id`, [
      id,
      stale!.lockToken,
    ]);
    expect(rows).toEqual([]);
    expect((await getJob(sql, id))!.lockedBy).toBe('fast');
  });
});

describe('administration', () => {
  it('cancelJob deletes pending and dead jobs but not running ones', async () => {
    const a = await enqueue(sql, { kind: 'k', payload: 1 }, { clock });
    const b = await enqueue(sql, { kind: 'k', payload: 2 }, { clock });
    await claimJobs(sql, { limit: 1, clock });
    expect(await cancelJob(sql, a)).toBe(false);
    expect(await cancelJob(sql, b)).toBe(true);
    expect(await cancelJob(sql, b)).toBe(false);
    expect((await listJobs(sql)).map((j) => j.id)).toEqual([a]);
  });

  it('listJobs filters and pages', async () => {
    for (let i = 0; i < 5; i++) await enqueue(sql, { kind: i % 2 ? 'odd' : 'even', payload: i }, { clock });
    expect((await listJobs(sql, { kind: 'even' })).map((j) => j.payload)).toEqual([0, 2, 4]);
    expect((await listJobs(sql, { limit: 2, afterId: '2' })).map((j) => j.id)).toEqual(['3', '4']);
    expect((await listJobs(sql, { state: 'running' })).length).toBe(0);
  });
});
