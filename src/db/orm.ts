/**
 * Opens the database: MikroORM on a PostgreSQL server when a URL is configured, on PGlite (the
 * embedded PostgreSQL in WASM) in the data directory otherwise. Same SQL dialect either way.
 */
import { ensurePrivateDir } from '../../config/secrets.ts';
import path from 'node:path';
import type { Logger } from 'pino';
import { PGlite } from '@electric-sql/pglite';
import { MikroORM as PgMikroORM } from '@mikro-orm/postgresql';
import { MikroORM as PgliteMikroORM } from '@mikro-orm/pglite';
import type { EntityManager, MikroORM } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import { ENTITIES } from './entities/index.ts';
import { MIGRATIONS } from './migrations/index.ts';
import { kyselyOf, sqlFromEm, statementSource, type Sql } from './sql.ts';
import type { RoostKysely } from './schema.ts';
import { namePreparedStatements } from './prepared.ts';
import type pg from 'pg';

export interface Database {
  orm: MikroORM;
  kind: 'postgres' | 'pglite';
  /** A fresh entity manager: one per request or job. */
  em(): EntityManager;
  /** Plain SQL outside any transaction. */
  sql: Sql;
  /** Typed queries (db/schema.ts) outside any transaction: the read side's hot paths. */
  kysely: RoostKysely;
  /** The embedded database, when there is one (for dumps and tests). */
  pglite?: PGlite;
  migrate(): Promise<string[]>;
  close(): Promise<void>;
  /**
   * Statements sent to the database since open through its connections (ORM queries and plain
   * SQL alike); with `source`, only those sent inside `statementSource.run(source, …)` (the job
   * workers run as 'jobs'). What tests read to pin how many statements a use case costs.
   */
  statements(source?: string): number;
}

export interface OpenDatabaseOptions {
  databaseUrl?: string;
  /** Data directory; the embedded cluster lives in <dataDir>/pg. */
  dataDir?: string;
  /** An already-open PGlite (tests clone a prepared cluster into one). */
  pglite?: PGlite;
  log?: Logger;
  /** Pool size on a PostgreSQL server. */
  poolMax?: number;
}

export function embeddedClusterDir(dataDir: string): string {
  return path.join(dataDir, 'pg');
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  const log = opts.log?.child({ module: 'db' });
  const common = {
    entities: ENTITIES,
    extensions: [Migrator],
    migrations: { migrationsList: MIGRATIONS, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    debug: false,
    allowGlobalContext: false,
    logger: (msg: string) => log?.debug(msg),
    discovery: { warnWhenNoEntities: false },
  };
  let orm: MikroORM;
  let pglite: PGlite | undefined;
  let ownsPglite = false;
  if (opts.databaseUrl && !opts.pglite) {
    orm = await PgMikroORM.init({
      ...common,
      clientUrl: opts.databaseUrl,
      pool: { min: 0, max: opts.poolMax ?? 10 },
    });
    // The read side's hot statements (db/prepared.ts) go as named prepared statements.
    namePreparedStatements(await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<pg.Pool> }).getNativeClient());
  } else {
    pglite = opts.pglite;
    if (!pglite) {
      if (!opts.dataDir) throw new Error('openDatabase: a databaseUrl or a dataDir is required');
      const dir = embeddedClusterDir(opts.dataDir);
      // Owner only: the cluster's write-ahead log holds private keys (ensurePrivateDir tightens an old 0755 one).
      ensurePrivateDir(opts.dataDir);
      ensurePrivateDir(dir);
      try {
        pglite = await PGlite.create({ dataDir: dir });
      } catch (e) {
        throw new Error(
          `Cannot open the embedded database in ${dir}: ${(e as Error).message}. ` +
            'Is another Roost process using this data directory? Stop it, or use its CLI through the running server.',
          { cause: e },
        );
      }
      ownsPglite = true;
    }
    const instance = pglite;
    orm = await PgliteMikroORM.init({ ...common, dbName: 'roost', driverOptions: { pglite: instance } });
  }

  const counter = countStatements(orm);
  const db: Database = {
    statements: (source?: string) => (source === undefined ? counter.count : (counter.bySource.get(source) ?? 0)),
    orm,
    kind: pglite ? 'pglite' : 'postgres',
    em: () => orm.em.fork(),
    sql: sqlFromEm(orm.em.fork()),
    kysely: kyselyOf(orm.em),
    pglite,
    async migrate() {
      const done = await orm.migrator.up();
      const names = done.map((m) => m.name);
      if (names.length) log?.info({ migrations: names }, 'migrations applied');
      return names;
    },
    async close() {
      await orm.close(true);
      if (ownsPglite && pglite && !pglite.closed) await pglite.close();
    },
  };
  return db;
}

/**
 * Counts the statements of this ORM's Kysely client: every connection its executor hands out
 * (transactions take theirs the same way) is wrapped so `executeQuery` and `streamQuery` count.
 * The driver releases the connection it acquired, never the wrapper.
 */
function countStatements(orm: MikroORM): { count: number; bySource: Map<string, number> } {
  const counter = { count: 0, bySource: new Map<string, number>() };
  const kysely = (orm.em.getConnection() as unknown as { getClient(): { getExecutor(): { provideConnection: Function } } }).getClient();
  const executor = kysely.getExecutor();
  const provide = executor.provideConnection.bind(executor);
  executor.provideConnection = (consumer: (c: object) => Promise<unknown>, options?: unknown) =>
    provide((connection: object) => {
      const counted = new Proxy(connection, {
        get(target, prop) {
          const value = Reflect.get(target, prop, target);
          if (prop === 'executeQuery' || prop === 'streamQuery') {
            return (...args: unknown[]) => {
              counter.count++;
              const source = statementSource.getStore();
              if (source !== undefined) counter.bySource.set(source, (counter.bySource.get(source) ?? 0) + 1);
              return (value as Function).apply(target, args);
            };
          }
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      return consumer(counted);
    }, options);
  return counter;
}
