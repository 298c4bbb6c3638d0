/**
 * Once per test run: the database server every test instance gets a database of its own on.
 * By default an embedded PostgreSQL (src/db/embedded.ts) started here in a scratch directory, with
 * settings for tests (TEST_SETTINGS: many pools, no fsync); with ROOST_TEST_DATABASE_URL set, that
 * server. Either way a migrated template database is made once, and each instance's database is a
 * copy of it (`create database … template …`, a file copy) instead of running the migrations.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../src/db/orm.ts';
import { startEmbeddedPostgres, TEST_SETTINGS } from '../src/db/embedded.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A run that was killed (no teardown) leaves its server running: stop the servers of runs whose
 * process is gone, and remove their directories.
 */
function stopAbandonedServers(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith('roost-test-pg-')) continue;
    const dir = path.join(tmpdir(), name);
    try {
      const owner = Number(readFileSync(path.join(dir, 'run.pid'), 'utf8'));
      if (alive(owner)) continue;
      const pidFile = path.join(dir, 'postgres', 'postmaster.pid');
      if (existsSync(pidFile)) {
        const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
        if (pid > 0 && alive(pid)) process.kill(pid, 'SIGQUIT');
      }
      rmSync(dir, { recursive: true, force: true });
    } catch {
      /* another run's, being made or removed */
    }
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const t0 = performance.now();
  let url = process.env.ROOST_TEST_DATABASE_URL || undefined;
  let stop = async () => {};
  let what: string;
  if (url) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      const { rows } = await client.query('show server_version');
      what = `PostgreSQL ${rows[0].server_version} at ${new URL(url).host}`;
    } catch (e) {
      throw new Error(`ROOST_TEST_DATABASE_URL is set but PostgreSQL cannot be reached: ${(e as Error).message}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  } else {
    stopAbandonedServers();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-test-pg-'));
    writeFileSync(path.join(dataDir, 'run.pid'), String(process.pid));
    const server = await startEmbeddedPostgres({ dataDir, settings: { ...TEST_SETTINGS }, database: 'postgres' });
    url = server.url;
    what = `embedded PostgreSQL (${dataDir})`;
    stop = async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    };
  }
  // A template per run: runs on one shared server (several checkouts) never touch each other's.
  const template = `roost_template_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`create database ${template}`);
    const db = await openDatabase({ databaseUrl: withDatabase(url, template), poolMax: 2 });
    await db.migrate();
    await db.close();
    // Nobody may connect to a template while it is copied; none will: tests only copy it.
    await admin.query(`alter database ${template} with allow_connections false`);
  } catch (e) {
    await admin.end();
    await stop();
    throw e;
  }
  await admin.end();
  project.provide('testDatabase', { url, template });
  process.stdout.write(`[roost tests] database: ${what}; template prepared in ${Math.round(performance.now() - t0)} ms\n`);
  return async () => {
    const a = new pg.Client({ connectionString: url });
    await a.connect().then(
      () => a.query(`drop database if exists ${template}`).finally(() => a.end()),
      () => undefined,
    );
    await stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    testDatabase: { url: string; template: string };
  }
}
