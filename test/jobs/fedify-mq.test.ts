import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testMessageQueue } from '@fedify/testing';
import { Temporal } from '@js-temporal/polyfill';
import type { TestSql } from '../helpers/sql.ts';
import type { Sql } from '../../src/db/sql.ts';
import { createManualClock } from '../../src/lib/clock.ts';
import { PostgresMessageQueue, FEDIFY_MESSAGE_KIND } from '../../src/jobs/fedify-mq.ts';
import { listJobs } from '../../src/jobs/queue.ts';
import { createJobsDb, gate, sleep, waitUntil } from './helpers.ts';

let db: TestSql;
let sql: Sql;

beforeAll(async () => {
  db = await createJobsDb();
  sql = db.sql;
});
afterAll(async () => {
  await db?.close();
});

describe('PostgresMessageQueue', () => {
  it('passes @fedify/testing testMessageQueue, ordering keys included', async () => {
    await testMessageQueue(
      () => new PostgresMessageQueue(sql, { name: 'suite', pollIntervalMs: 200 }),
      async ({ controller }) => {
        controller.abort();
      },
      { testOrderingKey: true },
    );
    expect(await listJobs(sql, { queue: 'suite' })).toEqual([]);
  });

  it('delivers each of 150 messages exactly once across two instances with parallel listeners', async () => {
    const mq1 = new PostgresMessageQueue(sql, { name: 'once', pollIntervalMs: 50, concurrency: 3 });
    const mq2 = new PostgresMessageQueue(sql, { name: 'once', pollIntervalMs: 50, concurrency: 3 });
    const seen = new Map<number, number>();
    const controller = new AbortController();
    const handler = async (m: { n: number }) => {
      seen.set(m.n, (seen.get(m.n) ?? 0) + 1);
      await sleep(m.n % 2);
    };
    const listening = [
      mq1.listen(handler, { signal: controller.signal }),
      mq2.listen(handler, { signal: controller.signal }),
      mq2.listen(handler, { signal: controller.signal }),
    ];
    for (let n = 0; n < 50; n++) await (n % 2 ? mq1 : mq2).enqueue({ n });
    await mq1.enqueueMany(Array.from({ length: 100 }, (_, i) => ({ n: 50 + i })));
    await waitUntil(() => seen.size === 150, 30_000, '150 messages');
    await sleep(200);
    controller.abort();
    await Promise.all(listening);
    expect([...seen.values()].every((c) => c === 1)).toBe(true);
    expect(seen.size).toBe(150);
    expect(await listJobs(sql, { queue: 'once' })).toEqual([]);
  });

  it('sends the enqueues of one event-loop turn in one statement, in order; a message the database refuses fails alone', async () => {
    const counted: string[] = [];
    const countingSql: Sql = { query: (text, params) => (counted.push(text), sql.query(text, params)), transaction: (fn) => sql.transaction(fn) };
    const mq = new PostgresMessageQueue(countingSql, { name: 'batched' });
    await Promise.all(Array.from({ length: 5 }, (_, n) => mq.enqueue({ n }, { orderingKey: 'one sender' })));
    expect(counted).toHaveLength(1);
    const jobs = await listJobs(sql, { queue: 'batched' });
    expect(jobs.map((j) => j.payload)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    expect(jobs.map((j) => Number(j.id))).toEqual(jobs.map((j) => Number(j.id)).sort((a, b) => a - b));
    expect(jobs.every((j) => j.orderingKey === 'one sender')).toBe(true);

    // PostgreSQL text cannot hold U+0000: the batch fails, then each message goes alone.
    counted.length = 0;
    const results = await Promise.allSettled([
      mq.enqueue({ n: 5 }),
      mq.enqueue({ n: 6 }, { orderingKey: 'bad\u0000key' }),
      mq.enqueue({ n: 7 }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(counted).toHaveLength(4);
    expect((await listJobs(sql, { queue: 'batched' })).map((j) => j.payload)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }, { n: 7 }]);
    // Not JSON: refused at once, nothing sent.
    counted.length = 0;
    await expect(mq.enqueue(undefined)).rejects.toThrow(TypeError);
    expect(counted).toHaveLength(0);
  });

  it('puts the enqueues made while one INSERT runs into the next one (group commit)', async () => {
    const counted: string[] = [];
    const slow = gate();
    let first = true;
    const countingSql: Sql = {
      query: async (text, params) => {
        counted.push(text);
        if (first) {
          first = false;
          await slow.promise;
        }
        return sql.query(text, params);
      },
      transaction: (fn) => sql.transaction(fn),
    };
    const mq = new PostgresMessageQueue(countingSql, { name: 'grouped' });
    const a = mq.enqueue({ n: 0 });
    await sleep(5);
    const rest: Promise<void>[] = [];
    for (let n = 1; n <= 4; n++) {
      rest.push(mq.enqueue({ n }));
      await sleep(2); // separate turns
    }
    expect(counted).toHaveLength(1);
    slow.open();
    await Promise.all([a, ...rest]);
    expect(counted).toHaveLength(2);
    expect((await listJobs(sql, { queue: 'grouped' })).map((j) => j.payload)).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
  });

  it('handles one message at a time while inbox deliveries flood in, and `concurrency` at a time otherwise', async () => {
    const measure = async (name: string, floodPerSecond: number | undefined) => {
      const mq = new PostgresMessageQueue(sql, { name, pollIntervalMs: 20, concurrency: 4, floodPerSecond });
      let running = 0;
      let most = 0;
      let handled = 0;
      const controller = new AbortController();
      const listening = mq.listen(
        async () => {
          running++;
          most = Math.max(most, running);
          await sleep(15);
          running--;
          handled++;
        },
        { signal: controller.signal },
      );
      // 60 inbox messages within a few milliseconds: 600+ a second.
      await Promise.all(Array.from({ length: 60 }, (_, n) => mq.enqueue({ type: 'inbox', id: `m${n}`, activity: {} })));
      await sleep(100);
      const duringFlood = most;
      await waitUntil(() => handled === 60, 20_000, 'all 60 handled');
      controller.abort();
      await listening;
      return { duringFlood, most };
    };
    const flooded = await measure('flooded', 300);
    expect(flooded.duringFlood).toBe(1);
    // After the flood (nothing arriving for 200 ms) the rest go 4 at a time.
    expect(flooded.most).toBe(4);
    const never = await measure('never-flooded', 0);
    expect(never.duringFlood).toBe(4);
  });

  it('keeps queues of different names apart', async () => {
    const a = new PostgresMessageQueue(sql, { name: 'instance-a', pollIntervalMs: 50 });
    const b = new PostgresMessageQueue(sql, { name: 'instance-b', pollIntervalMs: 50 });
    expect([a.name, b.name]).toEqual(['instance-a', 'instance-b']);
    const gotA: string[] = [];
    const gotB: string[] = [];
    const controller = new AbortController();
    const listening = [
      a.listen((m: string) => void gotA.push(m), { signal: controller.signal }),
      b.listen((m: string) => void gotB.push(m), { signal: controller.signal }),
    ];
    await a.enqueue('for a');
    await b.enqueue('for b');
    await waitUntil(() => gotA.length + gotB.length === 2, 5_000, 'both messages');
    controller.abort();
    await Promise.all(listening);
    expect([gotA, gotB]).toEqual([['for a'], ['for b']]);
  });

  it('reports its depth: ready and delayed, not the ones being handled', async () => {
    const clock = createManualClock(new Date('2026-04-01T00:00:00Z'));
    const mq = new PostgresMessageQueue(sql, { name: 'depth', clock, pollIntervalMs: 50, concurrency: 1 });
    expect(await mq.getDepth()).toEqual({ queued: 0, ready: 0, delayed: 0 });
    await mq.enqueue({ i: 1 });
    await mq.enqueueMany([{ i: 2 }, { i: 3 }]);
    await mq.enqueue({ i: 4 }, { delay: Temporal.Duration.from({ minutes: 5 }) as never });
    expect(await mq.getDepth()).toEqual({ queued: 4, ready: 3, delayed: 1 });

    const g = gate();
    const controller = new AbortController();
    const handled: number[] = [];
    const listening = mq.listen(
      async (m: { i: number }) => {
        handled.push(m.i);
        await g.promise;
      },
      { signal: controller.signal },
    );
    await waitUntil(() => handled.length === 1, 5_000, 'first message taken');
    expect(await mq.getDepth()).toEqual({ queued: 3, ready: 2, delayed: 1 });
    g.open();
    await waitUntil(() => handled.length === 3, 5_000, 'ready messages handled');
    expect(await mq.getDepth()).toEqual({ queued: 1, ready: 0, delayed: 1 });
    clock.advance(5 * 60_000);
    await waitUntil(() => handled.length === 4, 5_000, 'delayed message after the clock moved');
    expect(handled).toEqual([1, 2, 3, 4]);
    controller.abort();
    await listening;
    expect(await mq.getDepth()).toEqual({ queued: 0, ready: 0, delayed: 0 });
  });

  it('retries a throwing handler, then keeps the message as a dead job; listen never rejects', async () => {
    const mq = new PostgresMessageQueue(sql, { name: 'failing', pollIntervalMs: 20, maxAttempts: 2, backoff: () => 0 });
    let calls = 0;
    const controller = new AbortController();
    const listening = mq.listen(
      () => {
        calls++;
        throw new Error('handler blew up');
      },
      { signal: controller.signal },
    );
    await mq.enqueue({ activity: 'Create' });
    await waitUntil(async () => (await listJobs(sql, { queue: 'failing', state: 'dead' })).length === 1, 5_000, 'dead');
    controller.abort();
    await expect(listening).resolves.toBeUndefined();
    expect(calls).toBe(2);
    const [dead] = await listJobs(sql, { queue: 'failing' });
    expect([dead!.kind, dead!.payload, dead!.attempts]).toEqual([FEDIFY_MESSAGE_KIND, { activity: 'Create' }, 2]);
    expect(dead!.lastError).toMatch(/^Error: handler blew up/);
  });

  it('carries messages with "\\u0000" and nested JSON-LD verbatim', async () => {
    const mq = new PostgresMessageQueue(sql, { name: 'verbatim', pollIntervalMs: 20 });
    const message = {
      type: 'inbox',
      activity: { '@context': 'https://www.w3.org/ns/activitystreams', content: 'nul:\u0000 end', tag: [] },
      started: '2026-01-01T00:00:00Z',
    };
    const got: unknown[] = [];
    const controller = new AbortController();
    const listening = mq.listen((m) => void got.push(m), { signal: controller.signal });
    await mq.enqueue(message);
    await mq.enqueueMany([message]);
    await waitUntil(() => got.length === 2, 5_000, 'messages');
    controller.abort();
    await listening;
    expect(got).toEqual([message, message]);
  });

  it('listen: resolves at once on an aborted signal, and after abort once running handlers finish', async () => {
    const mq = new PostgresMessageQueue(sql, { name: 'abort', pollIntervalMs: 20 });
    const pre = new AbortController();
    pre.abort();
    await expect(mq.listen(() => {}, { signal: pre.signal })).resolves.toBeUndefined();

    const g = gate();
    let finished = false;
    const controller = new AbortController();
    let started = false;
    const listening = mq.listen(
      async () => {
        started = true;
        await g.promise;
        finished = true;
      },
      { signal: controller.signal },
    );
    await mq.enqueue('slow');
    await waitUntil(() => started, 5_000, 'handler started');
    let resolved = false;
    void listening.then(() => {
      resolved = true;
    });
    controller.abort();
    await sleep(100);
    expect(resolved).toBe(false);
    g.open();
    await listening;
    expect(finished).toBe(true);
    expect(await listJobs(sql, { queue: 'abort' })).toEqual([]);
  });
});

describe('with Fedify', () => {
  it('carries a real outbox delivery: sendActivity → jobs table → listener → signed POST to the inbox', async () => {
    const { createServer } = await import('node:http');
    const { createFederation, generateCryptoKeyPair } = await import('@fedify/fedify');
    const { Create, Note } = await import('@fedify/vocab');
    const { PostgresKvStore } = await import('../../src/jobs/fedify-kv.ts');

    const received: { signature: string; body: any }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ signature: String(req.headers['signature-input'] ?? req.headers.signature), body: JSON.parse(Buffer.concat(chunks).toString()) });
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;

    const queue = new PostgresMessageQueue(sql, { name: 'fedify-e2e', pollIntervalMs: 50 });
    const federation = createFederation<void>({
      kv: new PostgresKvStore(sql, { namespace: 'fedify-e2e' }),
      queue,
      allowPrivateAddress: true,
    });
    const controller = new AbortController();
    const running = federation.startQueue(undefined, { signal: controller.signal });
    try {
      const { privateKey } = await generateCryptoKeyPair('RSASSA-PKCS1-v1_5');
      const ctx = federation.createContext(new URL('http://roost.test/'), undefined);
      await ctx.sendActivity(
        { privateKey, keyId: new URL('http://roost.test/users/alice#main-key') },
        { id: new URL(`http://127.0.0.1:${port}/users/bob`), inboxId: new URL(`http://127.0.0.1:${port}/inbox`) },
        new Create({
          id: new URL('http://roost.test/activities/1'),
          actor: new URL('http://roost.test/users/alice'),
          object: new Note({ id: new URL('http://roost.test/notes/1'), content: 'hello through postgres' }),
        }),
      );
      await waitUntil(() => received.length === 1, 15_000, 'delivery');
      expect(received[0]!.body.type).toBe('Create');
      expect(received[0]!.body.object.content).toBe('hello through postgres');
      // Fedify 2 signs with RFC 9421 (Signature-Input) first.
      expect(received[0]!.signature).toMatch(/keyid="http:\/\/roost\.test\/users\/alice#main-key"/i);
      // The job row goes once the handler has returned (just after the inbox answered).
      await waitUntil(async () => (await listJobs(sql, { queue: 'fedify-e2e' })).length === 0, 5_000, 'job settled');
      expect(await queue.getDepth()).toEqual({ queued: 0, ready: 0, delayed: 0 });
    } finally {
      controller.abort();
      await running;
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
