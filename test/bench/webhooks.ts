/**
 * `npm run bench -- webhooks`: admin webhook deliveries per second, next to a bare loop that signs
 * and POSTs the same bodies to the same receiver, in the same run.
 *
 *   roost     a running Roost (startRoost, on PostgreSQL) with N local statuses already posted;
 *             a new webhook for status.created, then the webhooks consumer (effects/webhooks.ts)
 *             handed the N `status.created` facts, four at a time as the event job pool runs them:
 *             each fact's Status rendered, its delivery row and job written, then the `webhooks`
 *             job lane signs and POSTs each through the bounded fetcher and records it delivered.
 *             Timed from the first fact until the receiver has verified N signatures.
 *   baseline  the bodies the receiver got, each signed (HMAC-SHA256) and POSTed in a loop, one
 *             after another, with node:http and a keep-alive agent.
 *   The receiver is a plain node:http server in its own process that checks every signature.
 *   Rounds interleaved, medians reported.
 *
 * Goal: Roost ≥ 0.5× the baseline rate.
 *
 * Environment: ROOST_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres; a
 * scratch database is created beside it and dropped at the end), BENCH_WEBHOOKS (default 2000
 * deliveries per round), BENCH_WEBHOOK_ROUNDS (default 3).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { createHmac, randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../../config/index.ts';
import { startRoost } from '../../src/main.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { createStatus } from '../../src/services/statuses.ts';
import { createWebhook, disableWebhook } from '../../src/services/webhooks.ts';
import { WEBHOOK_JOB, WEBHOOK_QUEUE, webhookJobHandler, webhooksConsumer } from '../../src/effects/webhooks.ts';
import { WEBHOOK_CONCURRENCY } from '../../src/main.ts';
import { enqueueMany, startWorkers } from '../../src/jobs/queue.ts';
import { upcast, type StoredEvent } from '../../src/events/catalogue.ts';
import type { OutboxRecord } from '../../src/events/outbox.ts';
import { fmtInt, fmtRatio, table } from './lib/report.ts';
import { startChildServer } from './lib/child.ts';

export async function main(): Promise<number> {
  const total = Number(process.env.BENCH_WEBHOOKS ?? 2000);
  const rounds = Number(process.env.BENCH_WEBHOOK_ROUNDS ?? 3);
  const base = process.env.ROOST_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `roost_bench_webhooks_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-webhooks-'));
  const child = await startChildServer(path.join(import.meta.dirname, 'webhook-receiver-server.ts'), { cpus: null });
  const receiver = `http://127.0.0.1:${child.port}`;
  const stats = async (what = 'stats') => (await fetch(`${receiver}/${what}`)).json() as Promise<{ received: number; bad: number }>;

  const config = loadConfig({
    env: {},
    overrides: { host: '127.0.0.1', port: 0, dataDir, logLevel: 'silent', databaseUrl: url.toString(), federation: { allowPrivateAddresses: true } },
  });
  // No job workers of its own: the bench runs the webhooks lane itself (as main.ts does), so that
  // deliveries can be queued first and drained alone.
  const roost = await startRoost(config, { domainFromPort: true, controlSocket: false, roles: ['web'] });
  const { services } = roost;
  try {
    // N statuses, posted before any webhook exists (their facts queue no delivery).
    const author = await createLocalAccount(services, { username: 'author', email: 'author@bench.test', confirmed: true });
    for (let i = 0; i < total; i++) {
      await createStatus(services, { account: author.account, user: author.user, applicationId: null }, { status: `Status number ${i}, of ordinary length, with a #tag and some more words to make it look real`, visibility: 'public' });
    }
    const facts = await services.db.sql.query<{ id: string; actor_kind: string; actor_id: string; payload: StoredEvent }>(
      `select id::text as id, actor_kind, actor_id::text as actor_id, payload from outbox_events where type = 'status.created' order by id`,
    );
    const records: OutboxRecord[] = facts.map((f) => ({
      id: f.id,
      actorKind: f.actor_kind,
      actorId: f.actor_id,
      actorVersion: null,
      origin: 'client',
      event: upcast({ ...f.payload, type: 'status.created' }, f.actor_id)!,
    }));
    const consumer = webhooksConsumer(services);
    const lane = () =>
      startWorkers({
        sql: services.db.sql,
        clock: services.clock,
        concurrency: WEBHOOK_CONCURRENCY,
        queue: WEBHOOK_QUEUE,
        pollIntervalMs: 20,
        handlers: { [WEBHOOK_JOB]: webhookJobHandler(services) },
      });
    const consumeAll = async () => {
      let next = 0;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < records.length) await consumer(records[next++] as never);
        }),
      );
    };
    const received = async () => {
      for (;;) {
        const s = await stats();
        if (s.bad > 0) throw new Error(`${s.bad} bad signatures`);
        if (s.received >= total) return;
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    /** `lane`: the deliveries queued first, then the lane started and timed alone; `e2e`: facts to delivered. */
    const viaRoost = async (mode: 'lane' | 'e2e'): Promise<number> => {
      const hook = await createWebhook(services, { url: `${receiver}/hook/pending`, events: ['status.created'] }, null);
      // The receiver finds the secret in the path.
      await services.db.sql.query(`update webhooks set url = $2 where id = $1`, [hook.id, `${receiver}/hook/${encodeURIComponent(hook.secret)}`]);
      await stats('reset');
      if (mode === 'lane') await consumeAll();
      const t = performance.now();
      const workers = lane();
      if (mode === 'e2e') await consumeAll();
      await received();
      const rate = total / ((performance.now() - t) / 1000);
      await workers.stop();
      await disableWebhook(services, hook.id, null);
      return rate;
    };

    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const bare = async (bodies: string[], secret: string): Promise<number> => {
      await stats('reset');
      const target = new URL(`${receiver}/hook/${encodeURIComponent(secret)}`);
      const t = performance.now();
      for (const body of bodies) {
        const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
        await new Promise<void>((resolve, reject) => {
          const req = http.request(target, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-hub-signature': signature, 'content-length': Buffer.byteLength(body) } }, (res) => {
            res.resume();
            res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
          });
          req.on('error', reject);
          req.end(body);
        });
      }
      const rate = bodies.length / ((performance.now() - t) / 1000);
      const s = await stats();
      if (s.received !== bodies.length || s.bad) throw new Error(`baseline: ${s.received} verified, ${s.bad} bad`);
      return rate;
    };

    /** The floor: the same lane running N no-op jobs (the queue's own cost per job). */
    const floor = async (): Promise<number> => {
      let done = 0;
      await enqueueMany(services.db.sql, Array.from({ length: total }, (_, i) => ({ kind: 'bench.noop', queue: WEBHOOK_QUEUE, payload: { i } })));
      const t = performance.now();
      const workers = startWorkers({
        sql: services.db.sql,
        clock: services.clock,
        concurrency: WEBHOOK_CONCURRENCY,
        queue: WEBHOOK_QUEUE,
        pollIntervalMs: 20,
        handlers: { 'bench.noop': async () => void done++ },
      });
      while (done < total) await new Promise((r) => setTimeout(r, 5));
      const rate = total / ((performance.now() - t) / 1000);
      await workers.stop();
      return rate;
    };
    const floorRates: number[] = [];
    const roostRates: number[] = [];
    const e2eRates: number[] = [];
    const bareRates: number[] = [];
    let bytes = 0;
    for (let r = 0; r < rounds; r++) {
      floorRates.push(await floor());
      e2eRates.push(await viaRoost('e2e'));
      roostRates.push(await viaRoost('lane'));
      const bodies = (await (await fetch(`${receiver}/bodies`)).json()) as string[];
      bytes = bodies.reduce((n, b) => n + Buffer.byteLength(b), 0) / bodies.length;
      bareRates.push(await bare(bodies, randomBytes(20).toString('hex')));
    }
    agent.destroy();
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const roostRate = median(roostRates);
    const e2eRate = median(e2eRates);
    const bareRate = median(bareRates);
    console.log(`${fmtInt(total)} status.created deliveries per round (bodies ${fmtInt(Math.round(bytes))} bytes on average), ${rounds} rounds interleaved, PostgreSQL (${name}), receiver on loopback in its own process\n`);
    console.log(
      table(
        ['', 'deliveries/s (median)', 'rounds'],
        [
          ['Roost, the lane: queued jobs → signed POST through the bounded fetcher → recorded', fmtInt(roostRate), roostRates.map((x) => fmtInt(x)).join(', ')],
          ['Roost, end to end: facts → consumer (Status rendered, rows, jobs) → lane', fmtInt(e2eRate), e2eRates.map((x) => fmtInt(x)).join(', ')],
          ['floor: the same lane running no-op jobs', fmtInt(median(floorRates)), floorRates.map((x) => fmtInt(x)).join(', ')],
          ['bare loop: sign + POST (keep-alive), one at a time', fmtInt(bareRate), bareRates.map((x) => fmtInt(x)).join(', ')],
        ],
      ),
    );
    const ratio = roostRate / bareRate;
    console.log(`\nRoost's lane / bare loop: ${fmtRatio(ratio)} (goal ≥ 0.5×); end to end / bare loop: ${fmtRatio(e2eRate / bareRate)}`);
    return ratio >= 0.5 ? 0 : 1;
  } finally {
    await roost.close();
    await child.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
