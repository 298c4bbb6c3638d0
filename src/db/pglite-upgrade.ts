/**
 * Until 2026-11-28 the embedded database was PGlite (PostgreSQL compiled to WebAssembly) in
 * `<dataDir>/pg`. Its files cannot be opened by a native server, so the first start on the
 * embedded PostgreSQL copies them: the old cluster is opened with PGlite, brought to the current
 * schema by Roost's own migrations, and every table's rows and every sequence's position are
 * copied into the new cluster (already migrated) in one transaction, with foreign-key triggers
 * held off (`session_replication_role = replica`) so the order of tables does not matter. The
 * transaction also marks the database (a comment on it), so a copy is never made twice and a
 * crash half-way leaves nothing behind. The old directory is kept until the operator removes it.
 *
 * This is what PGlite stays in the dependencies for: it is loaded only here, only when an old
 * directory is found.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import pg from 'pg';
import { MIGRATIONS } from './migrations/index.ts';
import { ENTITIES } from './entities/index.ts';

/** Where PGlite kept its cluster. */
export function pgliteDirOf(dataDir: string): string {
  return path.join(dataDir, 'pg');
}

const MARK = 'roost: copied from PGlite';

/** One database session: the copy reads and writes through a single connection at each end. */
export interface Session {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

export function sessionOfClient(client: pg.Client): Session {
  return { query: async <T>(text: string, params?: unknown[]) => (await client.query(text, params)).rows as T[] };
}

const BATCH = 500;

/**
 * Copies every table but the migrations' own from `source` to `target`, both on the same schema
 * version, replacing what `target` holds (a new database: only the migrations' seed rows), inside
 * the caller's transaction on `target` (and a read-only one on `source`). Returns
 * the rows copied per table.
 */
export async function copyRoostTables(source: Session, target: Session): Promise<Record<string, number>> {
  const tables = (
    await target.query<{ name: string }>(
      `select tablename as name from pg_tables where schemaname = 'public' and tablename <> 'mikro_orm_migrations' order by tablename`,
    )
  ).map((r) => r.name);
  await target.query(`set local session_replication_role = replica`);
  // The migrations seed rows (roles, …) that the source holds too, perhaps changed since: the
  // source's are the ones kept.
  if (tables.length) await target.query(`truncate ${tables.map((t) => pg.escapeIdentifier(t)).join(', ')}`);
  const copied: Record<string, number> = {};
  for (const table of tables) {
    const columns = (
      await target.query<{ name: string }>(
        `select attname as name from pg_attribute
          where attrelid = $1::regclass and attnum > 0 and not attisdropped and attgenerated = ''
          order by attnum`,
        [`public.${pg.escapeIdentifier(table)}`],
      )
    ).map((r) => pg.escapeIdentifier(r.name));
    const t = pg.escapeIdentifier(table);
    const list = columns.join(', ');
    let n = 0;
    await source.query(`declare roost_copy no scroll cursor for select row_to_json(t)::text as j from ${t} t`);
    for (;;) {
      const rows = await source.query<{ j: string }>(`fetch ${BATCH} from roost_copy`);
      if (!rows.length) break;
      await target.query(
        `insert into ${t} (${list}) overriding system value select ${list} from json_populate_recordset(null::${t}, $1::json)`,
        [`[${rows.map((r) => r.j).join(',')}]`],
      );
      n += rows.length;
    }
    await source.query(`close roost_copy`);
    copied[table] = n;
  }
  const sequences = await target.query<{ name: string }>(
    `select quote_ident(schemaname) || '.' || quote_ident(sequencename) as name from pg_sequences where schemaname = 'public'`,
  );
  for (const { name } of sequences) {
    const [at] = await source.query<{ last_value: string; is_called: boolean }>(`select last_value::text, is_called from ${name}`);
    if (at) await target.query(`select setval($1::regclass, $2::bigint, $3)`, [name, at.last_value, at.is_called]);
  }
  return copied;
}

/** Whether the target database already holds a finished copy. */
async function alreadyCopied(target: Session): Promise<boolean> {
  const [row] = await target.query<{ d: string | null }>(
    `select shobj_description(oid, 'pg_database') as d from pg_database where datname = current_database()`,
  );
  return !!row?.d?.startsWith(MARK);
}

/** Opens an old PGlite cluster and brings it to the current schema with Roost's migrations. */
export async function openPgliteCluster(dir: string): Promise<{ session: Session; close(): Promise<void> }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { MikroORM } = await import('@mikro-orm/pglite');
  const { Migrator } = await import('@mikro-orm/migrations');
  const pglite = await PGlite.create({ dataDir: dir });
  try {
    const orm = await MikroORM.init({
      entities: ENTITIES,
      extensions: [Migrator],
      discovery: { warnWhenNoEntities: false },
      migrations: { migrationsList: MIGRATIONS, transactional: true, allOrNothing: true, snapshot: false, silent: true },
      dbName: 'roost',
      driverOptions: { pglite },
      debug: false,
      allowGlobalContext: false,
    });
    await orm.migrator.up();
    await orm.close(false);
  } catch (e) {
    await pglite.close();
    throw e;
  }
  return {
    session: { query: async <T>(text: string, params?: unknown[]) => (await pglite.query(text, params)).rows as T[] },
    close: () => pglite.close(),
  };
}

/**
 * On a start on the embedded PostgreSQL: if the data directory still holds a PGlite cluster whose
 * rows were never copied, copy them into `targetUrl` (migrated, otherwise empty). Returns the rows
 * copied per table, or null when there was nothing to do.
 */
export async function upgradeFromPglite(dataDir: string, targetUrl: string, log?: Logger): Promise<Record<string, number> | null> {
  const oldDir = pgliteDirOf(dataDir);
  if (!existsSync(path.join(oldDir, 'PG_VERSION'))) return null;
  const client = new pg.Client({ connectionString: targetUrl });
  await client.connect();
  const target = sessionOfClient(client);
  try {
    if (await alreadyCopied(target)) {
      log?.info({ dir: oldDir }, 'the PGlite directory of an earlier Roost is still here; its data was copied, so it can be removed');
      return null;
    }
    log?.warn({ dir: oldDir }, 'copying the PGlite database of an earlier Roost into the embedded PostgreSQL');
    const t0 = performance.now();
    const old = await openPgliteCluster(oldDir);
    try {
      await old.session.query('begin transaction isolation level repeatable read read only');
      await client.query('begin');
      const copied = await copyRoostTables(old.session, target);
      const db = (await target.query<{ d: string }>('select current_database() as d'))[0]!.d;
      await client.query(`comment on database ${pg.escapeIdentifier(db)} is ${pg.escapeLiteral(`${MARK} at ${new Date().toISOString()} from ${oldDir}`)}`);
      await client.query('commit');
      await old.session.query('commit');
      const rows = Object.values(copied).reduce((a, b) => a + b, 0);
      log?.warn(
        { dir: oldDir, rows, ms: Math.round(performance.now() - t0) },
        'copied the PGlite database into the embedded PostgreSQL; the old directory is kept: remove it once you are satisfied',
      );
      return copied;
    } catch (e) {
      await client.query('rollback').catch(() => undefined);
      throw new Error(`Copying the PGlite database in ${oldDir} failed, nothing was changed: ${(e as Error).message}`, { cause: e });
    } finally {
      await old.close();
    }
  } finally {
    await client.end();
  }
}
