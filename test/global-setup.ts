/**
 * Once per test run: for the embedded database, make a migrated PGlite cluster and keep its dump
 * (.tmp/pglite-template.tar.gz); each test instance clones it in ~0.5 s instead of running initdb.
 * With ROOST_TEST_DATABASE_URL set, check the server answers and say which database is in use.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase } from '../src/db/orm.ts';
import { PGLITE_TEMPLATE } from './helpers/roost.ts';

export default async function setup(): Promise<void> {
  const url = process.env.ROOST_TEST_DATABASE_URL;
  if (url) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      const { rows } = await client.query('show server_version');
      process.stdout.write(`[roost tests] database: PostgreSQL ${rows[0].server_version} at ${new URL(url).host}\n`);
    } catch (e) {
      throw new Error(`ROOST_TEST_DATABASE_URL is set but PostgreSQL cannot be reached: ${(e as Error).message}`);
    } finally {
      await client.end().catch(() => undefined);
    }
    return;
  }
  const t0 = performance.now();
  const pglite = await PGlite.create();
  const db = await openDatabase({ pglite });
  await db.migrate();
  await db.close();
  const dump = await pglite.dumpDataDir('gzip');
  await pglite.close();
  mkdirSync(path.dirname(PGLITE_TEMPLATE), { recursive: true });
  writeFileSync(PGLITE_TEMPLATE, Buffer.from(await dump.arrayBuffer()));
  process.stdout.write(`[roost tests] database: embedded PGlite (template prepared in ${Math.round(performance.now() - t0)} ms)\n`);
}
