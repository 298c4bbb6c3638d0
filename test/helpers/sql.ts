import { randomBytes } from 'node:crypto';
import { Kysely, PGliteDialect, PostgresDialect } from 'kysely';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { sqlFromKysely, type Sql } from '../../src/db/sql.ts';

/**
 * Which database the test run uses: the embedded PGlite by default (a fresh machine has nothing
 * else), the PostgreSQL server named by ROOST_TEST_DATABASE_URL otherwise (CI runs both).
 */
export function testDatabaseUrl(): string | undefined {
  return process.env.ROOST_TEST_DATABASE_URL || undefined;
}

export interface TestSql {
  sql: Sql;
  kind: 'postgres' | 'pglite';
  /** For PostgreSQL: the URL of the fresh database. */
  url?: string;
  close(): Promise<void>;
}

/** A fresh, empty database with no Roost schema: for tests of code that brings its own DDL. */
export async function createTestSql(): Promise<TestSql> {
  const url = testDatabaseUrl();
  if (url) {
    const name = `roost_t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const dbUrl = new URL(url);
    dbUrl.pathname = `/${name}`;
    const pool = new pg.Pool({ connectionString: dbUrl.toString(), max: 8 });
    // DROP DATABASE … WITH (FORCE) ends connections pool.end() has not closed yet.
    pool.on('error', () => {});
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
    return {
      sql: sqlFromKysely(db),
      kind: 'postgres',
      url: dbUrl.toString(),
      async close() {
        await db.destroy();
        const a = new pg.Client({ connectionString: url });
        await a.connect();
        await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await a.end();
      },
    };
  }
  const pglite = await PGlite.create();
  const db = new Kysely<any>({ dialect: new PGliteDialect({ pglite }) });
  return {
    sql: sqlFromKysely(db),
    kind: 'pglite',
    async close() {
      await db.destroy();
    },
  };
}
