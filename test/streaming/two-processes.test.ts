/**
 * Streaming across processes, with real processes: `roost start --role web,worker` and
 * `roost start --role streaming` on one PostgreSQL database. A status posted through the web
 * process reaches a WebSocket client of the streaming process (streaming_events + LISTEN/NOTIFY);
 * the web process does not serve the streaming API, the streaming process does not serve the REST API.
 * Only in the PostgreSQL run (vitest.config.ts).
 */
import { describe, it, expect, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../../config/index.ts';
import { openRoostServices, type RoostServices } from '../../src/main.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';
import type { Frame } from './client.ts';
import { testDatabaseUrl } from '../helpers/sql.ts';

const PG = testDatabaseUrl();
const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'src/roost.mjs');
const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-roles-'));
const dbName = `roost_roles_${randomBytes(5).toString('hex')}`;
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
  ROOST_HOST: '127.0.0.1',
  ROOST_PORT: '0',
  ROOST_DOMAIN: 'roles.test',
  ROOST_LOG_LEVEL: 'info',
};

const children: ChildProcess[] = [];
let opened: RoostServices | undefined;

function run(args: string[]): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: root, env, stdio: 'ignore' });
    child.on('close', (code) => resolve(code));
  });
}

async function start(role: string): Promise<string> {
  const child = spawn(process.execPath, [cli, 'start', '--role', role], { cwd: root, env });
  children.push(child);
  let out = '';
  return new Promise<string>((resolve, reject) => {
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
}

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)));
  await opened?.close();
  const admin = new pg.Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('roost start --role', () => {
  it('a status posted through a web process reaches a WebSocket client of a streaming process', async () => {
    const admin = new pg.Client({ connectionString: PG });
    await admin.connect();
    await admin.query(`create database ${dbName}`);
    await admin.end();
    expect(await run(['migrate'])).toBe(0);
    opened = await openRoostServices(loadConfig({ env: {}, overrides: { databaseUrl: dbUrl, dataDir, domain: 'roles.test', logLevel: 'silent' } }), { migrate: false });
    const alice = await createLocalAccount(opened.services, { username: 'alice', email: 'alice@example.test', confirmed: true });
    const { token } = await issueAccessToken(opened.services, { applicationId: null, userId: alice.user.id, scopes: ['read', 'write'] });

    const [web, streaming] = await Promise.all([start('web,worker'), start('streaming')]);
    // Each serves its part only.
    expect((await fetch(`${streaming}/api/v1/streaming/health`)).status).toBe(200);
    expect((await fetch(`${streaming}/api/v1/instance`)).status).toBe(404);
    const notHere = await fetch(`${web}/api/v1/streaming/public`, { headers: { authorization: `Bearer ${token}` } });
    expect(notHere.status).toBe(503);

    const ws = new WebSocket(`${streaming.replace('http', 'ws')}/api/v1/streaming?stream=public`, [token]);
    const frames: Frame[] = [];
    ws.addEventListener('message', (e) => frames.push(JSON.parse(String(e.data))));
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve());
      ws.addEventListener('error', () => reject(new Error('websocket failed')));
    });
    const res = await fetch(`${web}/api/v1/statuses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'across processes' }),
    });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    const until = performance.now() + 20_000;
    while (!frames.some((f) => f.event === 'update') && performance.now() < until) await new Promise((r) => setTimeout(r, 50));
    const updates = frames.filter((f) => f.event === 'update');
    expect(updates.length).toBe(1);
    expect(updates[0].stream).toEqual(['public']);
    expect(JSON.parse(updates[0].payload!).id).toBe(id);
    ws.close();
  }, 120_000);
});
