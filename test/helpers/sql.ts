import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { sqlFromKysely, type Sql } from '../../src/db/sql.ts';

/**
 * The database server of this test run (test/global-setup.ts): an embedded PostgreSQL started for
 * the run by default (a fresh machine has nothing else), the server named by
 * ROOST_TEST_DATABASE_URL otherwise (CI runs both). A URL to its maintenance database.
 */
export function testDatabaseUrl(): string {
  return inject('testDatabase').url;
}

/** Whether the run is on the operator's server (ROOST_TEST_DATABASE_URL) rather than the embedded one. */
export function onExternalServer(): boolean {
  return !!process.env.ROOST_TEST_DATABASE_URL;
}

/** The migrated database each test instance's database is copied from. */
export function testTemplate(): string {
  return inject('testDatabase').template;
}

/** The same server, another database. */
export function databaseUrlFor(name: string): string {
  const u = new URL(testDatabaseUrl());
  u.pathname = `/${name}`;
  return u.toString();
}

/** Runs statements on the server's maintenance database. */
export async function onServer<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: testDatabaseUrl() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export interface TestSql {
  sql: Sql;
  /** The URL of the fresh database. */
  url: string;
  close(): Promise<void>;
}

/** A fresh, empty database with no Roost schema: for tests of code that brings its own DDL. */
export async function createTestSql(): Promise<TestSql> {
  const name = `roost_t_${randomBytes(6).toString('hex')}`;
  await onServer((c) => c.query(`CREATE DATABASE ${name}`));
  const url = databaseUrlFor(name);
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  // DROP DATABASE … WITH (FORCE) ends connections pool.end() has not closed yet.
  pool.on('error', () => {});
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  return {
    sql: sqlFromKysely(db),
    url,
    async close() {
      await db.destroy();
      await onServer((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
