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
import { insideOpenTransaction, inTransactionScope, kyselyOf, sqlFromEm, sqlFromKysely, statementSource, transactionScope, type Sql, type TransactionScope } from './sql.ts';
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
  /** Statements pending and transactions open now (what the stall detector, src/db/stall.ts, reads). */
  tracker: StatementTracker;
  /** The connection pool. */
  pool: pg.Pool;
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
    // JIT off: on a fresh database, tables never analysed give small statements estimates past
    // jit_above_cost, and every status page paid ~0.6 s of compilation (0.7 ms without it).
    driverOptions: { options: '-c jit=off', application_name: 'roost' },
  });
  // The read side's hot statements (db/prepared.ts) go as named prepared statements.
  const pool = await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<pg.Pool> }).getNativeClient();
  namePreparedStatements(pool);

  const counter = trackStatements(orm, log);
  const db: Database = {
    statements: (source?: string) => (source === undefined ? counter.count : (counter.bySource.get(source) ?? 0)),
    tracker: counter,
    pool,
    orm,
    em: () => orm.em.fork(),
    sql: sqlFromEm(orm.em.fork()),
    kysely: kyselyOf(orm.em),
    async migrate() {
      const done = await orm.migrator.up();
      const names = done.map((m) => m.name);
      if (names.length) {
        // A count and the last one, not every name (a first start applies dozens: a 2 KB line).
        log?.info({ migrations: names.length, latest: names[names.length - 1] }, `${names.length} migration${names.length === 1 ? '' : 's'} applied`);
        // Statistics for the planner at once, rather than when autovacuum first gets round to the
        // new (small, often empty) tables: plans made without them misjudge every page.
        await db.sql.query('analyze');
      }
      return names;
    },
    async close() {
      await orm.close(true);
    },
  };
  return db;
}

/** A statement sent and not answered yet, or a transaction open (src/db/stall.ts reads them). */
export interface PendingStatement {
  text: string;
  /** performance.now() when it was sent (or began waiting for a connection). */
  since: number;
  /** waiting: for a connection (the embedded session, or the pool); running: sent on one. */
  phase: 'waiting' | 'running';
}
export interface OpenTransaction {
  since: number;
  /** The last statement the transaction sent (its text and when). */
  last: { text: string; at: number } | null;
}
export interface StatementTracker {
  count: number;
  bySource: Map<string, number>;
  pending: Set<PendingStatement>;
  transactions: Set<OpenTransaction>;
  /** performance.now() of the last statement answered (or of the open). */
  lastAnsweredAt: number;
}

/** What is logged (with its stack) for a statement sent outside its open transaction: see `transactionScope`. */
export class StatementOutsideTransactionError extends Error {
  override name = 'StatementOutsideTransactionError';
  constructor() {
    super(
      'A statement was sent outside the open transaction of its own async context: it holds one ' +
        'connection while waiting for another, and with every connection so held the pool waits forever. ' +
        'Use the transaction (openTransaction(), sqlFromEm(tx)).',
    );
  }
}

/**
 * Counts and tracks the statements of this ORM's Kysely client: every connection its executor
 * hands out (transactions take theirs the same way) is wrapped so `executeQuery` and
 * `streamQuery` count; the root executor's statements are tracked from when they wait for a
 * connection. The driver releases the connection it acquired, never the wrapper.
 *
 * A connection asked for from inside an open transaction of the same async context (the wedge
 * pattern, see `transactionScope`) is logged at error level: it holds one connection while
 * waiting for another (on the one-session PGlite of before, it waited forever).
 */
function trackStatements(orm: MikroORM, log?: Logger): StatementTracker {
  const tracker: StatementTracker = {
    count: 0,
    bySource: new Map(),
    pending: new Set(),
    transactions: new Set(),
    lastAnsweredAt: performance.now(),
  };
  const connection = orm.em.getConnection() as unknown as {
    getClient(): { getExecutor(): { provideConnection: Function; executeQuery: Function } };
    transactional: (cb: (trx: unknown) => Promise<unknown>, options?: { ctx?: unknown }) => Promise<unknown>;
  };
  // Every transaction of the ORM (em.transactional, flushes, migrations) runs its body in a scope.
  const transactional = connection.transactional.bind(connection);
  connection.transactional = (cb, options) =>
    options?.ctx
      ? transactional(cb, options)
      : inTransactionScope((body) => transactional(body, options), cb, (trx) => sqlFromKysely(trx as never, true));
  const executor = connection.getClient().getExecutor();
  const execute = executor.executeQuery.bind(executor);
  executor.executeQuery = async (query: { sql: string }, ...rest: unknown[]) => {
    const entry: PendingStatement = { text: query.sql, since: performance.now(), phase: 'waiting' };
    tracker.pending.add(entry);
    try {
      return await execute(query, ...rest);
    } finally {
      tracker.pending.delete(entry);
    }
  };
  const warned = new Set<string>();
  const provide = executor.provideConnection.bind(executor);
  executor.provideConnection = (consumer: (c: object) => Promise<unknown>, options?: unknown) => {
    const scope = transactionScope.getStore();
    if (insideOpenTransaction(scope)) {
      const err = new StatementOutsideTransactionError();
      const site = err.stack?.split('\n').slice(2, 6).join('\n') ?? '';
      if (!warned.has(site) && warned.size < 100) {
        warned.add(site);
        log?.error({ err }, 'statement outside its open transaction: holds a connection while waiting for another');
      }
    }
    // A transaction's BEGIN: its connection is held until COMMIT/ROLLBACK.
    const begin = scope && !scope.open ? { text: 'begin (waiting for a connection)', since: performance.now(), phase: 'waiting' as const } : null;
    if (begin) tracker.pending.add(begin);
    return provide(async (connection: object) => {
      let open: OpenTransaction | null = null;
      if (begin) {
        tracker.pending.delete(begin);
        open = { since: performance.now(), last: null };
        tracker.transactions.add(open);
        (scope as TransactionScope & { tracked?: OpenTransaction }).tracked = open;
      }
      const counted = new Proxy(connection, {
        get(target, prop) {
          const value = Reflect.get(target, prop, target);
          if (prop === 'executeQuery' || prop === 'streamQuery') {
            return (...args: unknown[]) => {
              tracker.count++;
              const source = statementSource.getStore();
              if (source !== undefined) tracker.bySource.set(source, (tracker.bySource.get(source) ?? 0) + 1);
              const text = (args[0] as { sql?: string } | undefined)?.sql ?? '';
              const now = performance.now();
              const tx = (transactionScope.getStore() as (TransactionScope & { tracked?: OpenTransaction }) | undefined)?.tracked;
              if (tx && tracker.transactions.has(tx)) tx.last = { text, at: now };
              const entry: PendingStatement = { text, since: now, phase: 'running' };
              tracker.pending.add(entry);
              const done = () => {
                tracker.pending.delete(entry);
                tracker.lastAnsweredAt = performance.now();
              };
              const result = (value as Function).apply(target, args);
              if (result && typeof (result as Promise<unknown>).then === 'function') (result as Promise<unknown>).then(done, done);
              else done();
              return result;
            };
          }
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      try {
        return await consumer(counted);
      } finally {
        if (open) tracker.transactions.delete(open);
      }
    }, options);
  };
  return tracker;
}
