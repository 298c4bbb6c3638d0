/**
 * Starts real Roost instances for tests: the real HTTP server on an OS-chosen port, a database of
 * its own on the run's server (a copy of the migrated template test/global-setup.ts makes once per
 * run), the real job workers and federation. Several per process is fine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig, type RoostConfig } from '../../config/index.ts';
import { startRoost, type RunningRoost, type StartOptions } from '../../src/main.ts';
import { databaseUrlFor, onServer, testTemplate } from './sql.ts';
import { statementSource } from '../../src/db/sql.ts';

export interface TestRoost extends RunningRoost {
  config: RoostConfig;
  dataDir: string;
  /** Absolute URL on this instance. */
  at(pathname: string): string;
}

/** A database of its own on the run's server, a copy of the migrated template. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `roost_t_${randomBytes(6).toString('hex')}`;
  await onServer((c) => c.query(`create database ${name} template ${testTemplate()}`));
  return {
    url: databaseUrlFor(name),
    drop: () => onServer((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

const GENEROUS = { limit: 1_000_000, periodSeconds: 300 };
export const GENEROUS_RATE_LIMITS = {
  perToken: GENEROUS,
  perIp: GENEROUS,
  signIn: GENEROUS,
  signInPerLogin: GENEROUS,
  signUp: GENEROUS,
  uploads: GENEROUS,
};

export async function startTestRoost(
  overrides: Record<string, unknown> = {},
  opts: StartOptions = {},
): Promise<TestRoost> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-test-'));
  const db = await createTestDatabase();
  const config = loadConfig({
    env: {},
    overrides: {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      databaseUrl: db.url,
      logLevel: process.env.ROOST_TEST_LOG_LEVEL ?? 'silent',
      ...overrides,
      // Generous limits, so tests that make many requests from one address never meet them;
      // a test of the limits tightens the ones it checks.
      rateLimits: { ...GENEROUS_RATE_LIMITS, ...(overrides.rateLimits as object) },
      federation: { allowPrivateAddresses: true, ...(overrides.federation as object) },
    },
  });
  let roost: RunningRoost;
  try {
    roost = await startRoost(config, { domainFromPort: true, controlSocket: false, ...opts });
  } catch (e) {
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  return {
    ...roost,
    // The instance's own configuration (its port, domain and public URL); `config` is not changed.
    config: roost.config,
    dataDir,
    at: (p: string) => `${roost.url}${p}`,
    async close() {
      await roost.close();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls until fn returns a truthy value (federation is asynchronous). */
export async function eventually<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

/**
 * Waits until no job (effects, Fedify deliveries, inbox work) is left on any of the instances.
 * Timers not yet due on the instance's clock (a poll's close an hour away) are not work left.
 */
export async function settled(...roosts: TestRoost[]): Promise<void> {
  const busy = async (r: TestRoost) =>
    (
      await r.services.db.sql.query(
        `select 1 from jobs where state <> 'dead' and not (kind = 'timer' and state = 'pending' and run_at > $1) limit 1`,
        [r.services.clock.now()],
      )
    ).length > 0;
  await eventually(
    async () => {
      for (const r of roosts) if (await busy(r)) return false;
      return true;
    },
    20_000,
    'the job queues to drain',
  );
}

/**
 * The statements `fn` sends through the instance's SQL (every read module goes through it), each
 * cut to `width` characters, once the job queues are idle and leaving out the job workers'
 * polling, which shares it.
 */
export async function capturedStatements(
  roost: TestRoost,
  fn: () => Promise<unknown>,
  width = 60,
  /** jobWrites: keep statements that write jobs themselves (an outbox step's); the job pools' own are left out by their source. */
  opts: { viewer?: boolean; jobWrites?: boolean } = {},
): Promise<string[]> {
  await settled(roost);
  const seen: string[] = [];
  await watchStatements(
    roost,
    (text) => {
      // The token's viewer lookup is left out unless asked for (reads/viewer.ts caches it for 5 s of
      // wall time: a slow `settled` above may let it lapse, and a page's cost is what it counts).
      const viewerLookup = /^\s*select t\.id::text as t_id/.test(text);
      // The IP-block index's refresh (services/ip-blocks.ts: per process, every few seconds) likewise.
      const ipIndex = text.startsWith('/* ip-block index */');
      const jobs = opts.jobWrites ? statementSource.getStore() === 'jobs' : /\b(from|into|update) jobs\b/i.test(text);
      if (!jobs && !ipIndex && (opts.viewer || !viewerLookup)) seen.push(text.replace(/\s+/g, ' ').trim().slice(0, width));
    },
    fn,
  );
  return seen;
}

/** Runs `fn` with `see` called on every statement (text, parameters) sent through the instance's plain-SQL client meanwhile. */
export async function watchStatements(
  roost: TestRoost,
  see: (text: string, params?: readonly unknown[]) => void,
  fn: () => Promise<unknown>,
): Promise<void> {
  const sql = roost.services.db.sql;
  const original = sql.query;
  sql.query = ((text: string, params?: readonly unknown[]) => {
    see(text, params);
    return original.call(sql, text, params);
  }) as typeof original;
  try {
    await fn();
  } finally {
    sql.query = original;
  }
}
