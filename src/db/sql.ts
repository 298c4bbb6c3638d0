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
      return (exec as Kysely<DB>).transaction().execute((trx) => fn(sqlFromKysely(trx, true)));
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
