/**
 * The operator's path, as processes: `roost migrate` on a fresh data directory, `roost accounts
 * create` on a stopped and on a running server (embedded database, through the control socket),
 * `roost start` serving WebFinger and the actor, a second process refused on the held directory,
 * a restart keeping the data, and boot errors that name the bad key.
 *
 * One embedded cluster for the whole file: the lifecycle is one smoke test on one data directory
 * (creating a cluster costs seconds and a few hundred MB); the other cases fail before any
 * database is opened.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const cli = path.join(root, 'src/cli.ts');
const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-cli-'));
const baseEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ROOST_DATA_DIR: dataDir, ROOST_PORT: '0', ROOST_LOG_LEVEL: 'info' };

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: root, env: { ...baseEnv, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function startServer() {
  return startServerIn(dataDir);
}

async function startServerIn(dir: string): Promise<{ child: ChildProcess; base: string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [cli, 'start'], { cwd: root, env: { ...baseEnv, ROOST_DATA_DIR: dir } });
  let out = '';
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 60_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.stderr!.on('data', (d) => (out += d));
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return {
    child,
    base,
    stop: () =>
      new Promise((resolve) => {
        child.removeAllListeners('exit');
        child.on('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('roost CLI', () => {
  it('migrates a fresh directory once, creates, serves, refuses a second process, creates while serving, and keeps data across a restart', async () => {
    const first = await run(['migrate']);
    expect(first.code).toBe(0);
    // Every committed migration, in order, then nothing the second time.
    const { MIGRATIONS } = await import('../src/db/migrations/index.ts');
    expect(first.stdout).toBe(`Applied: ${MIGRATIONS.map((m) => m.name).join(', ')}\n`);
    const again0 = await run(['migrate']);
    expect(again0.stdout).toBe('The database is up to date.\n');

    const created = await run(['accounts', 'create', 'alice', '--email', 'alice@example.test', '--confirmed', '--role', 'Owner']);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const lines = created.stdout.trim().split('\n');
    expect(lines[lines.length - 1]).toMatch(/^New password: [0-9a-f]{32}$/);

    const server = await startServer();
    try {
      const second = await run(['start']);
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(/^roost: The data directory .* is in use by process \d+\./);

      // The server holds the embedded database; the CLI goes through its control socket.
      const whileRunning = await run(['accounts', 'create', 'bob', '--email', 'bob@example.test']);
      expect(whileRunning.code).toBe(0);
      expect(whileRunning.stdout.trim().split('\n').pop()).toMatch(/^New password: [0-9a-f]{32}$/);

      const modified = await run(['accounts', 'modify', 'bob', '--role', 'moderator', '--confirm']);
      expect(modified.stderr).toBe('');
      expect(modified.stdout).toBe('OK: bob: role Moderator, confirmed\n');
      const nobody = await run(['accounts', 'modify', 'nobody', '--approve']);
      expect(nobody.code).toBe(1);
      expect(nobody.stderr.trim()).toBe('roost: No local account nobody');

      const dup = await run(['accounts', 'create', 'bob', '--email', 'other@example.test']);
      expect(dup.code).toBe(1);
      expect(dup.stderr).toContain('Username is already taken');
      expect(dup.stderr).toContain('username: is already taken (ERR_TAKEN)');

      // Aliases and a migration, through the control socket too.
      const alias = await run(['accounts', 'alias', 'bob', '--add', 'alice']);
      expect([alias.code, alias.stdout]).toEqual([0, 'OK: bob is also known as: http://localhost:3000/users/alice\n']);
      const moved = await run(['accounts', 'migrate', 'alice', '--target', '@bob@localhost:3000']);
      expect([moved.code, moved.stdout]).toEqual([
        0,
        'OK: alice moved to http://localhost:3000/users/bob; 0 local follower(s) moved, 0 could not; the Move is on its way to the other servers\n',
      ]);
      const aliceActor = await fetch(`${server.base}/users/alice`, { headers: { accept: 'application/activity+json' } });
      expect(((await aliceActor.json()) as any).movedTo).toBe('http://localhost:3000/users/bob');

      for (const name of ['alice', 'bob']) {
        const wf = await fetch(`${server.base}/.well-known/webfinger?resource=acct:${name}@localhost:3000`);
        expect(wf.status).toBe(200);
        const actor = await fetch(`http://localhost:3000/users/${name}`.replace('http://localhost:3000', server.base), {
          headers: { accept: 'application/activity+json' },
        });
        expect(actor.headers.get('content-type')).toMatch(/^application\/activity\+json/);
        expect(((await actor.json()) as any).id).toBe(`http://localhost:3000/users/${name}`);
      }
      const nodeinfo = (await (await fetch(`${server.base}/nodeinfo/2.0`)).json()) as any;
      expect(nodeinfo.usage.users.total).toBe(2);
    } finally {
      expect(await server.stop()).toBe(0);
    }

    const again = await startServer();
    try {
      const wf = await fetch(`${again.base}/.well-known/webfinger?resource=acct:bob@localhost:3000`);
      expect(wf.status).toBe(200);
      const nodeinfo = (await (await fetch(`${again.base}/nodeinfo/2.0`)).json()) as any;
      expect(nodeinfo.usage.users.total).toBe(2);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  }, 180_000);

  it('stops the boot on a bad configuration value, naming it', async () => {
    const res = await run(['start'], { ROOST_PORT: 'abc' });
    expect(res.code).toBe(78);
    expect(res.stderr.trim()).toBe('roost: Invalid configuration ROOST_PORT: must be an integer from 0 to 65535, got "abc"');
  });

  it('refuses bad usage with exit code 2', async () => {
    const res = await run(['accounts', 'create', 'carol']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--email is required');
    const cases: [string[], string][] = [
      [['accounts', 'migrate', 'carol'], 'roost accounts migrate: give --target ACCOUNT, or --replay'],
      [['accounts', 'migrate', 'carol', '--replay', '--force'], 'roost accounts migrate: --replay and --force exclude each other'],
      [['accounts', 'alias', 'carol'], 'roost accounts alias: give --add or --remove'],
      [['accounts', 'alias', '--add', 'x@y.example'], 'roost accounts alias: give exactly one USERNAME'],
    ];
    for (const [args, message] of cases) {
      const r = await run(args);
      expect([r.code, r.stderr.split('\n')[0]]).toEqual([2, message]);
    }
  });
});
