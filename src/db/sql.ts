import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { EntityManager } from '@mikro-orm/core';
import type { DB } from './schema.ts';
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Who is sending statements: the job workers run inside `statementSource.run('jobs', …)`, so the
 * database layer's statement counter (Database.statements) can tell a request's statements from
 * the background's. Nothing else reads it.
 */
export const statementSource = new AsyncLocalStorage<string>();

/**
 * The transaction an async context is inside. Every transaction Roost opens (em.transactional,
 * Sql.transaction, and the ORM's own flushes) runs its body in this scope, so the database layer
 * can see the one pattern that wedges an instance: code inside a transaction that sends a
 * statement outside it (through `db.sql`, `db.kysely` or another em) and awaits it. On the
 * embedded database the transaction holds its only session, so that statement waits for the
 * transaction's end, which waits for the statement: forever. On a PostgreSQL server it needs a
 * second connection while holding one: with the pool's every connection held that way, the same.
 * `openTransaction()` gives such code the transaction to use instead.
 */
export interface TransactionScope {
  /** The transaction's Sql, set once BEGIN is through. */
  sql: Sql | null;
  /** True while the transaction's body runs (after BEGIN, before COMMIT/ROLLBACK). */
  open: boolean;
  /** The scope this transaction was opened in (an outer transaction of the same context). */
  parent: TransactionScope | undefined;
}
export const transactionScope = new AsyncLocalStorage<TransactionScope>();

/** The Sql of the transaction this async context is inside, or null outside any. */
export function openTransaction(): Sql | null {
  for (let scope = transactionScope.getStore(); scope; scope = scope.parent) if (scope.open) return scope.sql;
  return null;
}

/** Whether the async context is inside an open transaction (this scope's or an outer one's). */
export function insideOpenTransaction(scope: TransactionScope | undefined): boolean {
  for (; scope; scope = scope.parent) if (scope.open) return true;
  return false;
}

/**
 * Runs `begin(body)` (a transaction opener that calls `body` with its transaction) so that the
 * body runs inside a {@link transactionScope}. `sqlOf` gives the Sql of the opener's transaction.
 */
export function inTransactionScope<T, R>(begin: (body: (trx: T) => Promise<R>) => Promise<R>, body: (trx: T) => Promise<R>, sqlOf: (trx: T) => Sql): Promise<R> {
  const scope: TransactionScope = { sql: null, open: false, parent: transactionScope.getStore() };
  return transactionScope.run(scope, () =>
    begin(async (trx) => {
      scope.sql = sqlOf(trx);
      scope.open = true;
      try {
        return await body(trx);
      } finally {
        scope.open = false;
      }
    }),
  );
}

/**
 * Plain parameterised SQL ($1, $2 … placeholders, sent to the server as real parameters) for the
 * parts of Roost that do not go through entities: the job queue, Fedify's KV store and message
 * queue, counters. Works the same on PostgreSQL and PGlite.
 */
export interface Sql {
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs fn in a transaction; inside one already, fn joins it. */
  transaction<R>(fn: (tx: Sql) => Promise<R>): Promise<R>;
}

type Executor = Kysely<DB> | Transaction<DB>;

/** Sql over a Kysely instance (or a transaction of one, which nested transactions join). */
export function sqlFromKysely(exec: Executor, inTransaction = false): Sql {
  const sql: Sql = {
    async query<T>(text: string, params: readonly unknown[] = []) {
      const result = await exec.executeQuery<T>(CompiledQuery.raw(text, [...params]));
      return result.rows as T[];
    },
    async transaction<R>(fn: (tx: Sql) => Promise<R>) {
      if (inTransaction) return fn(sql);
      return inTransactionScope<Transaction<DB>, R>(
        (body) => (exec as Kysely<DB>).transaction().execute(body),
        (trx) => fn(sqlFromKysely(trx, true)),
        (trx) => sqlFromKysely(trx, true),
      );
    },
  };
  return sql;
}

/** Sql bound to an entity manager: joins the em's open transaction when there is one. */
export function sqlFromEm(em: EntityManager): Sql {
  const trx = em.getTransactionContext<Transaction<DB>>();
  if (trx) return sqlFromKysely(trx, true);
  return sqlFromKysely(kyselyOf(em), false);
}

/** The Kysely instance under an entity manager's connection, typed with Roost's tables (db/schema.ts). */
export function kyselyOf(em: EntityManager): Kysely<DB> {
  return (em.getConnection() as unknown as { getClient(): Kysely<DB> }).getClient();
}
