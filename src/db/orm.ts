/**
 * Opens the database: MikroORM on a PostgreSQL server, the operator's (ROOST_DATABASE_URL) or the
 * embedded one Roost starts itself (db/embedded.ts). Roost's connections run with JIT off.
 */
import type { Logger } from 'pino';
import { MikroORM as PgMikroORM } from '@mikro-orm/postgresql';
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
  /** A fresh entity manager: one per request or job. */
  em(): EntityManager;
  /** Plain SQL outside any transaction. */
  sql: Sql;
  /** Typed queries (db/schema.ts) outside any transaction: the read side's hot paths. */
  kysely: RoostKysely;
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
  databaseUrl: string;
  log?: Logger;
  /** Pool size. */
  poolMax?: number;
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  const log = opts.log?.child({ module: 'db' });
  const orm: MikroORM = await PgMikroORM.init({
    entities: ENTITIES,
    extensions: [Migrator],
    migrations: { migrationsList: MIGRATIONS, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    debug: false,
    allowGlobalContext: false,
    logger: (msg: string) => log?.debug(msg),
    discovery: { warnWhenNoEntities: false },
    clientUrl: opts.databaseUrl,
    pool: { min: 0, max: opts.poolMax ?? 10 },
  });
  // The read side's hot statements (db/prepared.ts) go as named prepared statements.
  namePreparedStatements(await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<pg.Pool> }).getNativeClient());

  const counter = countStatements(orm);
  const db: Database = {
    statements: (source?: string) => (source === undefined ? counter.count : (counter.bySource.get(source) ?? 0)),
    orm,
    em: () => orm.em.fork(),
    sql: sqlFromEm(orm.em.fork()),
    kysely: kyselyOf(orm.em),
    async migrate() {
      const done = await orm.migrator.up();
      const names = done.map((m) => m.name);
      if (names.length) log?.info({ migrations: names }, 'migrations applied');
      return names;
    },
    async close() {
      await orm.close(true);
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
