/**
 * Crash safety of delivery, with a real process: `roost start` as a child process on a scratch
 * PostgreSQL database, an account with 120 followers spread over four slow sink servers, the
 * process killed with SIGKILL in the middle of the fan-out of a post, then started again on the
 * same data directory and database: every inbox gets the Create at least once (the job row was
 * 'running' with a 15-second lease its process no longer renews; once it expires the restarted
 * process retakes the job), the retaken job sends only to the inboxes its checkpoints do not
 * name (a second copy only for the few whose POST went out after the last checkpoint batch),
 * recovery starts well within a minute of the kill, and the deliveries row ends settled.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startSinks, type Sinks } from '../helpers/sink.ts';
import { eventually } from '../helpers/roost.ts';
import { testDatabaseUrl } from '../helpers/sql.ts';

const PG = testDatabaseUrl();
const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'src/roost.mjs');
const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-crash-'));
const dbName = `roost_crash_${randomBytes(5).toString('hex')}`;
const dbUrl = (() => {
  const u = new URL(PG);
  u.pathname = `/${dbName}`;
  return u.toString();
})();
const env = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/tmp',
  ROOST_DATA_DIR: dataDir,
  ROOST_DATABASE_URL: dbUrl,
  ROOST_PORT: '0',
  ROOST_LOG_LEVEL: 'info',
  ROOST_ALLOW_PRIVATE_ADDRESSES: 'true',
  ROOST_DELIVERY_CONCURRENCY: '4',
};
const FOLLOWERS_PER_SINK = 30;
const SINKS = 4;

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: root, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const children: ChildProcess[] = [];
async function start(): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const child = spawn(process.execPath, [cli, 'start'], { cwd: root, env });
  children.push(child);
  let out = '';
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 60_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.stderr!.on('data', (d) => (out += d));
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return { child, base, output: () => out };
}

let sinks: Sinks | undefined;
let db: pg.Client | undefined;

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await db?.end().catch(() => undefined);
  await sinks?.close();
  const admin = new pg.Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('delivery survives kill -9', () => {
  it('a fan-out interrupted by SIGKILL reaches every inbox after a restart on the same data', async () => {
    const admin = new pg.Client({ connectionString: PG });
    await admin.connect();
    await admin.query(`create database ${dbName}`);
    await admin.end();
    expect((await run(['migrate'])).code).toBe(0);
    const created = await run(['accounts', 'create', 'alice', '--email', 'alice@example.test', '--confirmed']);
    expect(created.code).toBe(0);
    const password = /New password: ([0-9a-f]{32})/.exec(created.stdout)![1]!;

    // 120 remote followers, 30 on each of four sinks that take 150 ms per request.
    sinks = await startSinks(SINKS);
    sinks.answer = () => ({ status: 202, delayMs: 150 });
    db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    const [alice] = (await db.query<{ id: string }>(`select id::text from accounts where username = 'alice' and domain is null`)).rows;
    const inboxes: string[] = [];
    const now = new Date().toISOString();
    for (let s = 0; s < SINKS; s++) {
      const base = sinks.urls[s]!;
      for (let i = 0; i < FOLLOWERS_PER_SINK; i++) {
        const n = s * FOLLOWERS_PER_SINK + i;
        const inbox = `${base}/users/f${n}/inbox`;
        inboxes.push(inbox);
        await db.query(
          `insert into accounts (id, username, domain, uri, inbox_url, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $6)`,
          [String(9_000_000_000 + n), `f${n}`, new URL(base).host, `${base}/users/f${n}`, inbox, now],
        );
        await db.query(
          `insert into follows (id, account_id, target_account_id, state, created_at, updated_at) values ($1, $2, $3, 'accepted', $4, $4)`,
          [String(9_100_000_000 + n), String(9_000_000_000 + n), alice!.id, now],
        );
      }
    }

    const first = await start();
    const app = (await (
      await fetch(`${first.base}/api/v1/apps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'crash', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' }),
      })
    ).json()) as { client_id: string; client_secret: string };
    const tokenRes = await fetch(`${first.base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'password', client_id: app.client_id, client_secret: app.client_secret, username: 'alice@example.test', password, scope: 'read write' }),
    });
    expect(tokenRes.status).toBe(200);
    const { access_token: token } = (await tokenRes.json()) as { access_token: string };

    const creates = () => sinks!.posts.filter((p) => p.type === 'Create');
    // Kill -9 as soon as a part of the fan-out has gone out.
    let killed = false;
    let killedAt = 0;
    sinks.onPost = (p) => {
      if (!killed && p.type === 'Create' && creates().length >= 20) {
        killed = true;
        killedAt = Date.now();
        first.child.kill('SIGKILL');
      }
    };
    const posted = await fetch(`${first.base}/api/v1/statuses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ status: 'Hello, followers' }),
    });
    expect(posted.status).toBe(200);
    const { uri } = (await posted.json()) as { uri: string };
    await eventually(async () => first.child.signalCode === 'SIGKILL', 60_000, 'the kill');
    const before = new Set(creates().map((p) => `http://${p.host}${p.path}`));
    expect(before.size).toBeGreaterThanOrEqual(20);
    expect(before.size).toBeLessThan(inboxes.length);
    // The job is left behind, claimed by the dead process.
    const left = (await db.query<{ state: string; kind: string }>(`select state, kind from jobs where queue = 'delivery-bulk'`)).rows;
    expect(left).toEqual([{ state: 'running', kind: 'delivery' }]);
    // What the dead process had recorded: the inboxes its checkpoint batches wrote, every one of
    // them among those that got the Create, and the deliveries row counting exactly those.
    const recorded = new Set(
      (await db.query<{ inbox: string; status: number }>(`select inbox, status from delivery_checkpoints`)).rows.map((r) => {
        expect(r.status).toBe(200);
        return r.inbox;
      }),
    );
    expect(recorded.size).toBeGreaterThanOrEqual(4);
    for (const inbox of recorded) expect(before.has(inbox)).toBe(true);
    // Unrecorded but sent: the in-flight window (4 POSTs at a time, a batch written every 250 ms).
    const window = before.size - recorded.size;
    expect(window).toBeLessThanOrEqual(20);
    const [midway] = (await db.query(`select inboxes, delivered, failed, pending from deliveries`)).rows;
    expect(midway).toEqual({ inboxes: 120, delivered: recorded.size, failed: 0, pending: 120 - recorded.size });
    const postsBefore = creates().length;

    const second = await start();
    try {
      // Once the dead worker's lease expires, the restarted process retakes the job.
      const all = await eventually(
        async () => {
          const got = new Set(creates().map((p) => `http://${p.host}${p.path}`));
          return inboxes.every((i) => got.has(i)) ? got : null;
        },
        150_000,
        'every inbox to get the Create',
      );
      expect([...all].sort()).toEqual([...inboxes].sort());
      // Recovery began within the lease (15 s) and a restart, well under the old 60 s lease.
      const firstRetaken = creates()[postsBefore]!;
      expect(firstRetaken.at - killedAt).toBeLessThan(30_000);
      // Per inbox: one POST each, a second only for an inbox sent before the kill but not
      // recorded; none for an inbox the checkpoints name.
      const perInbox = new Map<string, number>();
      for (const p of creates()) {
        const inbox = `http://${p.host}${p.path}`;
        perInbox.set(inbox, (perInbox.get(inbox) ?? 0) + 1);
      }
      const twice = [...perInbox].filter(([, n]) => n > 1).map(([inbox]) => inbox);
      for (const [, n] of perInbox) expect(n).toBeLessThanOrEqual(2);
      for (const inbox of twice) {
        expect(recorded.has(inbox)).toBe(false);
        expect(before.has(inbox)).toBe(true);
      }
      expect(twice.length).toBeLessThanOrEqual(window);
      expect(creates().length).toBe(inboxes.length + twice.length);
      console.log(
        `delivery-crash: ${before.size} sent before the kill, ${recorded.size} recorded, ${twice.length} sent twice; ` +
          `first retaken POST ${firstRetaken.at - killedAt} ms after the kill`,
      );
      // Each copy is the same activity.
      const ids = new Set(creates().map((p) => p.activityId));
      expect(ids.size).toBe(1);
      const activityId = [...ids][0]!;
      expect(activityId.startsWith(uri)).toBe(true);
      const state = await eventually(
        async () => {
          const [r] = (await db!.query(`select inboxes, delivered, failed, pending from deliveries where activity_id = $1`, [activityId])).rows;
          return r && Number(r.pending) === 0 ? r : null;
        },
        30_000,
        'the deliveries row to settle',
      );
      expect(state).toEqual({ inboxes: 120, delivered: 120, failed: 0, pending: 0 });
      // The job row goes once its run ends, just after the row above settles: wait for it, not race it.
      await eventually(async () => Number((await db!.query(`select count(*)::int as n from jobs where queue = 'delivery-bulk'`)).rows[0].n) === 0, 30_000, 'the bulk lane to empty');
      // The round's checkpoints went with it.
      expect((await db.query(`select count(*)::int as n from delivery_checkpoints`)).rows).toEqual([{ n: 0 }]);
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((r) => second.child.once('exit', r));
    }
  }, 300_000);
});
