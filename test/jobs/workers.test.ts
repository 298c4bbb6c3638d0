import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestSql } from '../helpers/sql.ts';
import type { Sql } from '../../src/db/sql.ts';
import { createManualClock, systemClock } from '../../src/lib/clock.ts';
import {
  claimJobs,
  countJobs,
  enqueue,
  enqueueMany,
  getJob,
  RetryRemaining,
  startWorkers,
  type ClaimedJob,
  type Job,
  type JobOutcome,
  type JobWorkers,
} from '../../src/jobs/queue.ts';
import { createJobsDb, gate, resetJobs, sleep, waitUntil } from './helpers.ts';

let db: TestSql;
let sql: Sql;
const pools: JobWorkers[] = [];

beforeAll(async () => {
  db = await createJobsDb();
  sql = db.sql;
});
afterAll(async () => {
  await db?.close();
});
beforeEach(async () => {
  await resetJobs(sql);
});
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.stop()));
});

function pool(options: Parameters<typeof startWorkers>[0]): JobWorkers {
  const p = startWorkers(options);
  pools.push(p);
  return p;
}

describe('worker pool', () => {
  it('two pools run each of 200 jobs exactly once (SKIP LOCKED claims)', async () => {
    const runs = new Map<number, number>();
    const byPool = [0, 0];
    const handlerFor = (index: number) => async (payload: { n: number }) => {
      runs.set(payload.n, (runs.get(payload.n) ?? 0) + 1);
      byPool[index]!++;
      await sleep(payload.n % 3); // let the pools interleave
    };
    // Enqueue first, then start both pools at once so they compete for the same rows.
    await enqueueMany(
      sql,
      Array.from({ length: 200 }, (_, n) => ({ kind: 'count', payload: { n } })),
    );
    pool({ sql, handlers: { count: handlerFor(0) }, concurrency: 4, pollIntervalMs: 20, workerId: 'pool-a' });
    pool({ sql, handlers: { count: handlerFor(1) }, concurrency: 4, pollIntervalMs: 20, workerId: 'pool-b' });
    await waitUntil(async () => (await countJobs(sql)).total === 0, 30_000, 'queue drained');
    await Promise.all(pools.splice(0).map((p) => p.stop()));

    expect(runs.size).toBe(200);
    expect([...runs.values()].reduce((a, b) => a + b, 0)).toBe(200);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(byPool[0]! + byPool[1]!).toBe(200);
    // Both pools take a share.
    expect(Math.min(...byPool)).toBeGreaterThan(0);
  });

  it('stop() stops claiming and waits for running jobs to settle', async () => {
    const g = gate();
    const started: string[] = [];
    const p = pool({
      sql,
      handlers: {
        slow: async (payload: string) => {
          started.push(payload);
          await g.promise;
        },
      },
      concurrency: 1,
      pollIntervalMs: 20,
    });
    const id = await enqueue(sql, { kind: 'slow', payload: 'first' });
    await enqueue(sql, { kind: 'slow', payload: 'second' });
    p.wake();
    await waitUntil(() => started.length === 1, 10_000, 'first job started');
    expect(p.running).toBe(1);

    let stopped = false;
    const stopping = p.stop().then(() => {
      stopped = true;
    });
    await sleep(150);
    expect(stopped).toBe(false);
    expect((await getJob(sql, id))!.state).toBe('running');

    g.open();
    await stopping;
    expect(stopped).toBe(true);
    expect(p.running).toBe(0);
    expect(await getJob(sql, id)).toBeUndefined();
    await sleep(100);
    expect(started).toEqual(['first']);
    expect((await countJobs(sql)).ready).toBe(1);
  });

  it('wake() claims at once instead of waiting for the next poll', async () => {
    const done: number[] = [];
    const p = pool({ sql, handlers: { k: async (n: number) => void done.push(n) }, pollIntervalMs: 60_000 });
    await sleep(50); // the pool has polled an empty queue and sleeps for a minute
    await enqueue(sql, { kind: 'k', payload: 1 });
    const t0 = Date.now();
    p.wake();
    await waitUntil(() => done.length === 1, 5_000, 'job after wake');
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it('sleeps until the next scheduled job instead of a whole poll interval', async () => {
    const ranAt: number[] = [];
    pool({ sql, handlers: { k: async () => void ranAt.push(Date.now()) }, pollIntervalMs: 60_000 });
    const t0 = Date.now();
    await enqueue(sql, { kind: 'k', payload: null, runAt: new Date(t0 + 400) });
    // The pool already sleeps for a minute; a retry of an earlier failure would wake it, so
    // make it look once more (as a NOTIFY would) and check it then waits ~400 ms, not 60 s.
    pools[0]!.wake();
    await waitUntil(() => ranAt.length === 1, 5_000, 'scheduled job');
    expect(ranAt[0]! - t0).toBeGreaterThanOrEqual(400);
    expect(ranAt[0]! - t0).toBeLessThan(2_000);
  });

  it('runs a job that fell due between its claim and the look for the next one', async () => {
    // The interleaving that once stalled CI: the claim sees the job not yet due, then the job
    // falls due before the pool asks when the next job is; it must not sleep a whole poll interval.
    const clock = createManualClock(new Date('2026-05-01T00:00:00Z'));
    const runAt = new Date(clock.now().getTime() + 50);
    const id = await enqueue(sql, { kind: 'k', payload: null, runAt }, { clock });
    let claims = 0;
    const racing: Sql = {
      async query<T>(text: string, params?: readonly unknown[]) {
        const rows = await sql.query<T>(text, params);
        if (text.trimStart().startsWith('WITH due AS') && ++claims === 1) {
          expect(rows).toEqual([]);
          clock.set(new Date(runAt.getTime() + 1)); // the job falls due right after the claim
        }
        return rows;
      },
      transaction: (fn) => sql.transaction(fn),
    };
    const ran: string[] = [];
    pool({ sql: racing, clock, handlers: { k: async (_p: unknown, job: Job) => void ran.push(job.id) }, pollIntervalMs: 60_000 });
    // Before the fix the pool slept its 60 s poll interval here.
    await waitUntil(() => ran.length === 1, 5_000, 'the job that fell due');
    expect(ran).toEqual([id]);
  });

  it('retakes the job of a crashed worker after its lease, and reports outcomes', async () => {
    const id = await enqueue(sql, { kind: 'k', payload: 'orphan' });
    const [crashed] = await claimJobs(sql, { limit: 1, leaseMs: 300, workerId: 'crashed' });
    expect(crashed!.id).toBe(id);
    const seen: Job[] = [];
    const settled: [string, JobOutcome][] = [];
    const t0 = Date.now();
    pool({
      sql,
      handlers: { k: async (_p: unknown, job: Job) => void seen.push(job) },
      pollIntervalMs: 50,
      workerId: 'rescuer',
      onJobSettled: (job: ClaimedJob, outcome) => settled.push([job.id, outcome]),
    });
    await waitUntil(() => settled.length === 1, 10_000, 'orphan retaken');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(seen.map((j) => [j.id, j.attempts, j.lockedBy])).toEqual([[id, 2, 'rescuer']]);
    expect(settled).toEqual([[id, 'done']]);
  });

  it('renews the lease of a long job so no other pool takes it', async () => {
    const runs: string[] = [];
    const handlers = {
      long: async (_p: unknown, job: Job) => {
        runs.push(job.lockedBy!);
        await sleep(900);
      },
    };
    // The lease (300 ms) is far shorter than the job (900 ms); heartbeats every 100 ms keep it.
    pool({ sql, handlers, leaseMs: 300, pollIntervalMs: 30, workerId: 'a' });
    const id = await enqueue(sql, { kind: 'long', payload: null });
    await waitUntil(() => runs.length === 1, 5_000, 'long job started');
    pool({ sql, handlers, leaseMs: 300, pollIntervalMs: 30, workerId: 'b' });
    await waitUntil(async () => (await getJob(sql, id)) === undefined, 10_000, 'long job done');
    await sleep(100);
    expect(runs).toEqual(['a']);
  });

  it('renews the leases of all running jobs in ONE statement per heartbeat, not one per job', async () => {
    // A Sql that records the heartbeat's statements (and passes everything through).
    const beats: (readonly unknown[])[] = [];
    const counting: Sql = {
      query: (text, params) => {
        if (text.includes('lock_token = ANY')) beats.push(params ?? []);
        return sql.query(text, params);
      },
      transaction: (fn) => sql.transaction(fn),
    };
    const runs: string[] = [];
    const handlers = {
      long: async (_p: unknown, job: Job) => {
        runs.push(job.id);
        await sleep(1_000);
      },
    };
    const ids = await enqueueMany(
      sql,
      Array.from({ length: 4 }, (_, n) => ({ kind: 'long', payload: { n } })),
    );
    // Lease 300 ms: a beat every 100 ms; the jobs run ~1 s, three times their lease.
    pool({ sql: counting, handlers, concurrency: 4, leaseMs: 300, pollIntervalMs: 30, workerId: 'a' });
    await waitUntil(() => runs.length === 4, 5_000, 'four jobs running');
    // Another pool on the same queue finds nothing to retake while the beats keep the leases.
    pool({ sql, handlers, concurrency: 4, leaseMs: 300, pollIntervalMs: 30, workerId: 'b' });
    await waitUntil(async () => (await countJobs(sql)).total === 0, 10_000, 'jobs done');
    expect(runs.sort()).toEqual([...ids].sort());
    // About 10 beats (1 s / 100 ms), each for the four jobs at once: per-job timers would have made ~40.
    expect(beats.length).toBeGreaterThanOrEqual(5);
    expect(beats.length).toBeLessThanOrEqual(14);
    const full = beats.filter((params) => (params[0] as string[]).length === 4);
    expect(full.length).toBeGreaterThanOrEqual(5);
    for (const params of full) expect([...(params[0] as string[])].sort()).toEqual([...ids].sort());
  });

  it('a job whose worker stops beating is retaken within its (short) lease, not a minute later', async () => {
    const id = await enqueue(sql, { kind: 'k', payload: 'orphan' });
    // Claimed with the default lease by a worker that then dies (no heartbeat ever runs).
    const [crashed] = await claimJobs(sql, { limit: 1, workerId: 'dead-process' });
    expect(crashed!.id).toBe(id);
    const leaseLeft = crashed!.runAt.getTime() - Date.now();
    expect(leaseLeft).toBeGreaterThan(14_000);
    expect(leaseLeft).toBeLessThanOrEqual(15_000);
  });

  it('retries failures with backoff on its own clock', async () => {
    const clock = createManualClock(new Date('2026-05-01T00:00:00Z'));
    let calls = 0;
    const p = pool({
      sql,
      clock,
      backoff: () => 5_000,
      pollIntervalMs: 20,
      handlers: {
        k: async () => {
          calls++;
          if (calls === 1) throw new Error('first try fails');
        },
      },
    });
    const id = await enqueue(sql, { kind: 'k', payload: null }, { clock });
    await waitUntil(() => calls === 1, 5_000, 'first attempt');
    await waitUntil(async () => (await getJob(sql, id))?.state === 'pending', 5_000, 'back to pending');
    expect((await getJob(sql, id))!.runAt.toISOString()).toBe('2026-05-01T00:00:05.000Z');
    await sleep(100);
    expect(calls).toBe(1);
    clock.advance(5_000);
    p.wake();
    await waitUntil(async () => (await getJob(sql, id)) === undefined, 5_000, 'second attempt');
    expect(calls).toBe(2);
  });

  it('retries only what is left of a job that partly failed (RetryRemaining), counting the attempt', async () => {
    const clock = createManualClock(new Date('2026-05-01T00:00:00Z'));
    const seen: unknown[] = [];
    const p = pool({
      sql,
      clock,
      backoff: () => 5_000,
      pollIntervalMs: 20,
      handlers: {
        parts: async (payload: { left: string[] }) => {
          seen.push(payload.left);
          if (payload.left.length > 1) throw new RetryRemaining({ left: payload.left.slice(1) }, `${payload.left[0]} done, the rest failed`);
        },
      },
    });
    const id = await enqueue(sql, { kind: 'parts', payload: { left: ['a', 'b', 'c'] }, maxAttempts: 5 }, { clock });
    await waitUntil(async () => (await getJob(sql, id))?.state === 'pending' && seen.length === 1, 5_000, 'the first attempt to settle');
    const after = (await getJob(sql, id))!;
    expect(after.payload).toEqual({ left: ['b', 'c'] });
    expect(after.attempts).toBe(1);
    expect(after.runAt.toISOString()).toBe('2026-05-01T00:00:05.000Z');
    expect(after.lastError).toContain('a done, the rest failed');
    clock.advance(5_000);
    p.wake();
    await waitUntil(async () => (await getJob(sql, id))?.attempts === 2 && seen.length === 2, 5_000, 'the second attempt');
    clock.advance(5_000);
    p.wake();
    await waitUntil(async () => (await getJob(sql, id)) === undefined, 5_000, 'the last part to finish');
    expect(seen).toEqual([['a', 'b', 'c'], ['b', 'c'], ['c']]);
  });

  it('keeps running after a handler throws and dead-letters unknown kinds', async () => {
    const done: number[] = [];
    pool({
      sql,
      pollIntervalMs: 20,
      handlers: {
        ok: async (n: number) => void done.push(n),
        bad: async () => {
          throw new Error('bad');
        },
      },
    });
    await enqueue(sql, { kind: 'bad', payload: null, maxAttempts: 1 });
    await enqueue(sql, { kind: 'mystery', payload: null });
    await enqueue(sql, { kind: 'ok', payload: 1 });
    // (done is pushed inside the handler, before the finished row is deleted: wait for that too.)
    await waitUntil(async () => (await countJobs(sql)).total === 2 && (await countJobs(sql)).dead === 2 && done.length === 1, 5_000, 'settled');
    expect(await countJobs(sql)).toEqual({ ready: 0, scheduled: 0, running: 0, dead: 2, total: 2 });
  });

  it('deletes the jobs that finish in one turn in one statement, and claims their places in one', async () => {
    const statements: string[] = [];
    const claimed: number[] = [];
    const counted: Sql = {
      query: async <T,>(text: string, params?: readonly unknown[]) => {
        const head = text.trim().split(/\s+/).slice(0, 3).join(' ');
        statements.push(head);
        const rows = await sql.query<T>(text, params);
        if (head === 'WITH due AS') claimed.push(rows.length);
        return rows;
      },
      transaction: (fn) => sql.transaction(fn),
    };
    const g = gate();
    const done: number[] = [];
    const outcomes: JobOutcome[] = [];
    pool({
      sql: counted,
      concurrency: 20,
      pollIntervalMs: 60_000,
      handlers: { slow: async (n: number) => void (await g.promise, done.push(n)) },
      onJobSettled: (_job, outcome) => void outcomes.push(outcome),
    });
    await enqueueMany(sql, Array.from({ length: 40 }, (_, i) => ({ kind: 'slow', payload: i })));
    const p = pools[pools.length - 1]!;
    p.wake();
    await waitUntil(async () => p.running === 20, 5_000, 'twenty running');
    statements.length = 0;
    claimed.length = 0;
    g.open(); // all twenty finish in the same turn; so do the twenty that take their places
    await waitUntil(async () => (await countJobs(sql)).total === 0, 5_000, 'all done');
    expect(done.length).toBe(40);
    expect(outcomes).toEqual(Array(40).fill('done'));
    expect(statements.filter((t) => t.startsWith('WITH del AS'))).toHaveLength(2);
    // The twenty waiting jobs were taken by one claim (the others found nothing left).
    expect(claimed.filter((n) => n > 0)).toEqual([20]);
  });

  it('uses systemClock by default', () => {
    expect(Math.abs(systemClock.now().getTime() - Date.now())).toBeLessThan(50);
  });
});
