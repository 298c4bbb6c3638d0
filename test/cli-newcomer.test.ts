/**
 * What a newcomer meets at the command line, as processes: the identity follows ROOST_PORT and a
 * changed domain is refused; a port in use is one line, before the data directory is touched;
 * --help at every level, usage on a mistyped option, --version, `accounts list`, and `migrate`
 * while the server runs.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const cli = path.join(root, 'src/cli.ts');
const dirs: string[] = [];
const children: ChildProcess[] = [];
const newDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'roost-newcomer-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function env(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ROOST_LOG_LEVEL: 'info', ROOST_LOG_FORMAT: 'json', ...extra };
}

function run(args: string[], extra: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: root, env: env(extra) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function start(extra: Record<string, string>): Promise<{ child: ChildProcess; output: () => string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [cli, 'start'], { cwd: root, env: env(extra) });
  children.push(child);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 60_000);
    child.stdout!.on('data', (d) => {
      out += d;
      if (/listening on http/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on('data', (d) => (out += d));
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return {
    child,
    output: () => out,
    stop: () =>
      new Promise((resolve) => {
        child.removeAllListeners('exit');
        child.on('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

describe('the first start', () => {
  it('logs the migrations as a count, ready once and only when ready, and warns of an unknown ROOST_* variable', async () => {
    const server = await start({ ROOST_DATA_DIR: newDir(), ROOST_PORT: String(await freePort()), ROOST_PORTT: '1' });
    try {
      const lines = server.output().trim().split('\n').map((l) => JSON.parse(l) as { msg: string; level: number; migrations?: unknown });
      const applied = lines.filter((l) => /migrations? applied$/.test(l.msg));
      expect(applied).toHaveLength(1);
      expect(typeof applied[0]!.migrations).toBe('number');
      expect(applied[0]!.migrations).toBeGreaterThan(30);
      expect(Math.max(...server.output().trim().split('\n').map((l) => l.length))).toBeLessThan(1000);
      // One line says it listens, the last: the port bound earlier is not announced as ready.
      expect(lines.filter((l) => /listening/.test(l.msg))).toHaveLength(1);
      expect(lines[lines.length - 1]!.msg).toMatch(/listening on http/);
      expect(lines.filter((l) => l.msg === 'configuration: unknown variable ROOST_PORTT (did you mean ROOST_PORT?)')).toHaveLength(1);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 120_000);
});

describe('the identity follows ROOST_PORT', () => {
  it('serves its actors, WebFinger, OAuth discovery and avatars as localhost:PORT, and refuses a changed domain later', async () => {
    const dataDir = newDir();
    const port = await freePort();
    const created = await run(['accounts', 'create', 'alice', '--email', 'alice@example.test', '--confirmed'], { ROOST_DATA_DIR: dataDir, ROOST_PORT: String(port) });
    expect(created.code).toBe(0);
    const server = await start({ ROOST_DATA_DIR: dataDir, ROOST_PORT: String(port) });
    const base = `http://127.0.0.1:${port}`;
    const self = `http://localhost:${port}`;
    try {
      const wf = await fetch(`${base}/.well-known/webfinger?resource=acct:alice@localhost:${port}`);
      expect(wf.status).toBe(200);
      expect(((await wf.json()) as any).subject).toBe(`acct:alice@localhost:${port}`);
      const actor = (await (await fetch(`${base}/users/alice`, { headers: { accept: 'application/activity+json' } })).json()) as any;
      expect(actor.id).toBe(`${self}/users/alice`);
      expect(actor.inbox).toBe(`${self}/users/alice/inbox`);
      const oauth = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as any;
      expect(oauth.issuer).toBe(`${self}/`);
      expect(oauth.token_endpoint).toBe(`${self}/oauth/token`);
      const account = (await (await fetch(`${base}/api/v1/accounts/lookup?acct=alice`)).json()) as any;
      expect(account.url).toBe(`${self}/@alice`);
      expect(account.avatar.startsWith(`${self}/`)).toBe(true);
      const instance = (await (await fetch(`${base}/api/v2/instance`)).json()) as any;
      expect(instance.domain).toBe(`localhost:${port}`);
    } finally {
      expect(await server.stop()).toBe(0);
    }

    const other = await freePort();
    const refused = await run(['start'], { ROOST_DATA_DIR: dataDir, ROOST_PORT: String(other) });
    expect(refused.code).toBe(78);
    expect(refused.stderr.trim()).toBe(
      `roost: The database (${dataDir}) belongs to the domain localhost:${port}, but this configuration says localhost:${other}. ` +
        "A server's domain cannot change: its accounts and what other servers know of them are bound to it. " +
        `Set ROOST_DOMAIN=localhost:${port} (ROOST_PORT can still be anything), or use a new data directory or database for localhost:${other}.`,
    );
    // The CLI refuses too, rather than create an account under the wrong domain.
    const cliRefused = await run(['accounts', 'create', 'bob', '--email', 'bob@example.test'], { ROOST_DATA_DIR: dataDir, ROOST_PORT: String(other) });
    expect(cliRefused.code).toBe(78);
    // Keeping the domain and moving the port is fine.
    const moved = await start({ ROOST_DATA_DIR: dataDir, ROOST_PORT: String(other), ROOST_DOMAIN: `localhost:${port}` });
    try {
      const wf = await fetch(`http://127.0.0.1:${other}/.well-known/webfinger?resource=acct:alice@localhost:${port}`);
      expect(wf.status).toBe(200);
    } finally {
      expect(await moved.stop()).toBe(0);
    }
  }, 240_000);
});

describe('a port in use', () => {
  it('stops a second server with one line naming ROOST_PORT, before its data directory is touched', async () => {
    const port = await freePort();
    const first = await start({ ROOST_DATA_DIR: newDir(), ROOST_PORT: String(port) });
    try {
      const fresh = path.join(newDir(), 'data');
      const second = await run(['start'], { ROOST_DATA_DIR: fresh, ROOST_PORT: String(port) });
      expect(second.code).toBe(1);
      expect(second.stderr).toBe(`roost: port ${port} on 127.0.0.1 is already in use by another process: stop it, or set ROOST_PORT to a free port.\n`);
      expect(readdirSync(path.dirname(fresh))).toEqual([]); // no data directory, no database, no secrets
      // The first server still answers every request.
      for (let i = 0; i < 10; i++) expect((await fetch(`http://127.0.0.1:${port}/api/v1/instance`)).status).toBe(200);
    } finally {
      expect(await first.stop()).toBe(0);
    }
  }, 120_000);
});

describe('the roost command', () => {
  it('prints --help at every level and --version, and usage for a mistyped option', async () => {
    const top = await run(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/^Usage: roost <command> \[options\]\n/);
    expect(top.stdout).toContain('roost accounts list');
    const group = await run(['accounts', '--help']);
    expect([group.code, group.stdout.split('\n')[0]]).toEqual([0, 'Usage:']);
    expect(group.stdout).toContain('roost accounts create USERNAME --email EMAIL');
    expect(group.stdout).not.toContain('roost start');
    const commands = [['start'], ['migrate'], ['accounts', 'create'], ['accounts', 'modify'], ['accounts', 'alias'], ['accounts', 'migrate'], ['accounts', 'list']];
    const helps = await Promise.all(commands.map((cmd) => run([...cmd, '--help'])));
    commands.forEach((cmd, i) => {
      expect([helps[i].code, helps[i].stderr]).toEqual([0, '']);
      expect(helps[i].stdout).toContain(`  roost ${cmd.join(' ')}`);
      expect(helps[i].stdout.split('\n').filter((l) => l.startsWith('  roost '))).toHaveLength(1);
    });
    const version = await run(['--version']);
    const { version: v } = (await import('../package.json', { with: { type: 'json' } })).default;
    expect([version.code, version.stdout]).toEqual([0, `roost ${v}\n`]);

    const typo = await run(['accounts', 'create', 'carol', '--emial', 'c@example.test']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^roost accounts create: unknown option --emial\n\nUsage:\n  roost accounts create USERNAME --email EMAIL/);
    expect(typo.stderr).not.toContain('    at ');
    const missing = await run(['accounts', 'alias', 'carol', '--add']);
    expect(missing.code).toBe(2);
    expect(missing.stderr.split('\n')[0]).toBe('roost accounts alias: option --add <value> needs a value');
    const unknown = await run(['acounts', 'list']);
    // A mistyped command names the nearest one and points at --help, instead of the whole usage.
    expect([unknown.code, unknown.stderr]).toEqual([2, 'roost: unknown command acounts (did you mean roost accounts?)\nRun roost --help for every command.\n']);
    const far = await run(['frobnicate']);
    expect([far.code, far.stderr]).toEqual([2, 'roost: unknown command frobnicate\nRun roost --help for every command.\n']);
    const unknownSub = await run(['accounts', 'lst']);
    expect([unknownSub.code, unknownSub.stderr.split('\n')[0]]).toEqual([2, 'roost accounts: unknown subcommand lst (did you mean roost accounts list?)']);
  }, 120_000);

  it('lists accounts and migrates, stopped and while the server runs', async () => {
    const dataDir = newDir();
    const e = { ROOST_DATA_DIR: dataDir, ROOST_PORT: '0' };
    const first = await run(['migrate'], e);
    expect(first.stdout).toMatch(/^Applied: /);
    expect((await run(['accounts', 'list'], e)).stdout).toBe('No local accounts.\n');
    await run(['accounts', 'create', 'ann', '--email', 'ann@example.test', '--confirmed', '--role', 'Owner'], e);
    const server = await start(e);
    try {
      await run(['accounts', 'create', 'ben', '--email', 'ben@example.test'], e);
      await run(['accounts', 'modify', 'ben', '--disable'], e);
      const list = await run(['accounts', 'list'], e);
      expect(list.code).toBe(0);
      const lines = list.stdout.trimEnd().split('\n');
      expect(lines[0].split(/\s+/)).toEqual(['USERNAME', 'ROLE', 'CONFIRMED', 'APPROVED', 'DISABLED', 'CREATED']);
      expect(lines[1]).toMatch(/^ann +Owner +yes +yes +no +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(lines[2]).toMatch(/^ben +- +no +yes +yes +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(lines).toHaveLength(3);
      // The server holds the embedded database: migrate goes through its control socket.
      const migrated = await run(['migrate'], e);
      expect([migrated.code, migrated.stdout, migrated.stderr]).toEqual([0, 'The database is up to date.\n', '']);
      expect(server.output()).toContain('"command":"migrate"');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 180_000);
});
