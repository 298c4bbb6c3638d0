/**
 * The embedded PostgreSQL's life beside Roost's, with real processes: `roost start` on a data
 * directory of its own (the default install, no ROOST_DATABASE_URL).
 *
 * - kill -9 of Roost in the middle of a burst of writes leaves its postmaster running (nothing
 *   kills a child when its parent dies); the next start stops that orphan, starts its own server
 *   and serves, every write Roost acknowledged is there, and a clean stop leaves no postmaster.
 * - When the server dies under a running Roost, Roost says so and exits instead of hanging.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { embeddedClusterDir, embeddedUrl } from '../../src/db/embedded.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'src/roost.mjs');
const dirs: string[] = [];
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) {
    const pid = postmasterPid(d);
    if (pid && alive(pid)) process.kill(pid, 'SIGQUIT');
    rmSync(d, { recursive: true, force: true });
  }
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function postmasterPid(dataDir: string): number | null {
  const file = path.join(embeddedClusterDir(dataDir), 'postmaster.pid');
  if (!existsSync(file)) return null;
  return Number(readFileSync(file, 'utf8').split('\n')[0]);
}

function start(dataDir: string): Promise<{ child: ChildProcess; base: string; output: () => string; ms: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [cli, 'start'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ROOST_DATA_DIR: dataDir, ROOST_PORT: '0', ROOST_LOG_LEVEL: 'info', ROOST_RATE_LIMITS: 'false' },
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${out}`)), 90_000);
    const check = () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, base: m[1]!, output: () => out, ms: performance.now() - t0 });
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
}

async function createApp(base: string, name: string): Promise<string | null> {
  try {
    const res = await fetch(`${base}/api/v1/apps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: name, redirect_uris: 'urn:ietf:wg:oauth:2.0:oob' }),
    });
    if (res.status !== 200) return null;
    return ((await res.json()) as { client_id: string }).client_id;
  } catch {
    return null; // the connection died with the process
  }
}

describe('the embedded PostgreSQL beside Roost', () => {
  it('after kill -9 of Roost mid-burst: the next start stops the orphaned server, serves, and has every acknowledged write; a clean stop leaves no server', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-life-'));
    dirs.push(dataDir);
    const first = await start(dataDir);
    const orphan = postmasterPid(dataDir)!;
    expect(alive(orphan)).toBe(true);

    // A burst of writes, 8 in flight; kill -9 once 40 are acknowledged.
    const acknowledged: string[] = [];
    let killed = false;
    let n = 0;
    const worker = async () => {
      while (!killed && n < 2_000) {
        const id = await createApp(first.base, `burst-${n++}`);
        if (id) acknowledged.push(id);
        if (acknowledged.length >= 40 && !killed) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(await exited(first.child)).toEqual({ code: null, signal: 'SIGKILL' });
    // The server outlived it.
    expect(alive(orphan)).toBe(true);

    const second = await start(dataDir);
    expect(second.output()).toMatch(/stopping the embedded PostgreSQL a previous Roost left running/);
    expect(alive(orphan)).toBe(false);
    const own = postmasterPid(dataDir)!;
    expect(own).not.toBe(orphan);
    expect((await fetch(`${second.base}/api/v1/instance`)).status).toBe(200);
    const db = new pg.Client({ connectionString: embeddedUrl(embeddedClusterDir(dataDir)) });
    await db.connect();
    try {
      const { rows } = await db.query<{ client_id: string }>(`select client_id from oauth_applications where client_id = any($1)`, [acknowledged]);
      expect(rows.map((r) => r.client_id).sort()).toEqual([...acknowledged].sort());
    } finally {
      await db.end();
    }
    console.log(`restart after kill -9: ready in ${second.ms.toFixed(0)} ms, ${acknowledged.length} acknowledged writes all present`);

    second.child.kill('SIGTERM');
    expect((await exited(second.child)).code).toBe(0);
    expect(alive(own)).toBe(false);
    expect(existsSync(path.join(embeddedClusterDir(dataDir), 'postmaster.pid'))).toBe(false);
  }, 240_000);

  it('when the server dies under a running Roost, Roost says so and exits', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-life-'));
    dirs.push(dataDir);
    const roost = await start(dataDir);
    process.kill(postmasterPid(dataDir)!, 'SIGKILL');
    const how = await exited(roost.child);
    expect(how.code).toBe(1);
    expect(roost.output()).toMatch(/the embedded PostgreSQL stopped while Roost was running; Roost stops/);
  }, 120_000);
});
