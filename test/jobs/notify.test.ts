import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { Sql } from '../../src/db/sql.ts';
import { enqueue, startWorkers, type JobWorkers } from '../../src/jobs/queue.ts';
import { PostgresMessageQueue } from '../../src/jobs/fedify-mq.ts';
import {
  pgNotifyListener,
  type JobNotifyListener,
  type PgNotifyListener,
} from '../../src/jobs/notify.ts';
import { JOBS_NOTIFY_CHANNEL } from '../../src/jobs/schema.ts';
import { applyJobsSchema, createJobsDb, sleep, waitUntil } from './helpers.ts';

/**
 * Pools that poll only once a minute must still run a committed job at once: the NOTIFY sent by
 * enqueue wakes them through the listener (a LISTEN connection).
 */
interface Env {
  sql: Sql;
  listener: JobNotifyListener;
}

function wakeSuite(getEnv: () => Env) {
  const SLOW_POLL = 60_000;

  async function withPool<T>(fn: (ran: string[], pool: JobWorkers) => Promise<T>): Promise<T> {
    const { sql, listener } = getEnv();
    const ran: string[] = [];
    const pool = startWorkers({
      sql,
      listener,
      pollIntervalMs: SLOW_POLL,
      handlers: { k: async (p: string) => void ran.push(p) },
    });
    try {
      await sleep(300); // subscribed, polled the empty queue, now asleep for a minute
      return await fn(ran, pool);
    } finally {
      await pool.stop();
    }
  }

  it('a committed enqueue wakes a sleeping pool at once', async () => {
    await withPool(async (ran) => {
      const t0 = Date.now();
      await enqueue(getEnv().sql, { kind: 'k', payload: 'woken' });
      await waitUntil(() => ran.length === 1, 5_000, 'job run after NOTIFY');
      expect(Date.now() - t0).toBeLessThan(2_000);
      expect(ran).toEqual(['woken']);
    });
  });

  it('an enqueue wakes nobody before its transaction commits, and nobody if it rolls back', async () => {
    const { sql } = getEnv();
    await withPool(async (ran) => {
      await expect(
        sql.transaction(async (tx) => {
          await enqueue(tx, { kind: 'k', payload: 'rolled back' });
          throw new Error('rollback');
        }),
      ).rejects.toThrow('rollback');
      await sleep(300);
      expect(ran).toEqual([]);

      let committedAt = 0;
      await sql.transaction(async (tx) => {
        await enqueue(tx, { kind: 'k', payload: 'committed' });
        await sleep(300);
        // Nothing ran while the transaction was open (after the commit it may run at once).
        expect(ran).toEqual([]);
        committedAt = Date.now();
      });
      await waitUntil(() => ran.length === 1, 5_000, 'job run after commit');
      expect(Date.now() - committedAt).toBeLessThan(2_000);
      expect(ran).toEqual(['committed']);
    });
  });

  it('one Fedify queue instance wakes the listener of another in the same database', async () => {
    const { sql, listener } = getEnv();
    const mq1 = new PostgresMessageQueue(sql, { name: 'wake', listener, pollIntervalMs: SLOW_POLL });
    const mq2 = new PostgresMessageQueue(sql, { name: 'wake', listener, pollIntervalMs: SLOW_POLL });
    const got: string[] = [];
    const controller = new AbortController();
    const listening = mq2.listen((m: string) => void got.push(m), { signal: controller.signal });
    await sleep(300);
    const t0 = Date.now();
    await mq1.enqueue('cross-instance');
    await waitUntil(() => got.length === 1, 5_000, 'message via NOTIFY');
    expect(Date.now() - t0).toBeLessThan(2_000);
    controller.abort();
    await listening;
  });
}

describe('pgNotifyListener', () => {
  let close: () => Promise<void>;
  let listener: PgNotifyListener;
  let env: Env;
  let url: string;
  beforeAll(async () => {
    const db = await createJobsDb();
    close = db.close;
    url = db.url!;
    listener = pgNotifyListener(url, { reconnectDelayMs: 50 });
    env = { sql: db.sql, listener };
  });
  afterAll(async () => {
    await listener?.close();
    await close?.();
  });
  wakeSuite(() => env);

  it('unsubscribing stops the callbacks', async () => {
    const got: (string | undefined)[] = [];
    const off = await env.listener.subscribe(JOBS_NOTIFY_CHANNEL, (p) => got.push(p));
    await env.sql.query(`SELECT pg_notify($1, 'one') AS n`, [JOBS_NOTIFY_CHANNEL]);
    await waitUntil(() => got.length === 1, 2_000, 'notification');
    await off();
    await env.sql.query(`SELECT pg_notify($1, 'two') AS n`, [JOBS_NOTIFY_CHANNEL]);
    await sleep(100);
    expect(got).toEqual(['one']);
  });

  it('reconnects after losing its connection, tells subscribers to re-check, and keeps waking', async () => {
    const got: (string | undefined)[] = [];
    const off = await listener.subscribe(JOBS_NOTIFY_CHANNEL, (p) => got.push(p));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const killed = await admin.query(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'`,
      );
      expect(killed.rows.length).toBe(1);
      await waitUntil(() => got.includes(undefined), 5_000, 're-check after reconnect');
      await admin.query(`SELECT pg_notify($1, 'after-reconnect')`, [JOBS_NOTIFY_CHANNEL]);
      await waitUntil(() => got.includes('after-reconnect'), 5_000, 'notification after reconnect');
    } finally {
      await admin.end();
      await off();
    }
  });
});
