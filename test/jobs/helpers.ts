import { createTestSql, type TestSql } from '../helpers/sql.ts';
import { JOBS_SCHEMA_SQL } from '../../src/jobs/schema.ts';
import type { Sql } from '../../src/db/sql.ts';

/** A fresh database on the run's server with the jobs schema. */
export async function createJobsDb(): Promise<TestSql> {
  const db = await createTestSql();
  await applyJobsSchema(db.sql);
  return db;
}

export async function applyJobsSchema(sql: Sql): Promise<void> {
  for (const statement of JOBS_SCHEMA_SQL) await sql.query(statement);
}

export async function resetJobs(sql: Sql): Promise<void> {
  await sql.query('TRUNCATE jobs RESTART IDENTITY');
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls predicate every 10 ms until true; throws after timeoutMs. */
export async function waitUntil(predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** A promise with its resolve exposed: a gate a test opens when it wants. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
