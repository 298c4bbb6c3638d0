/**
 * Named prepared statements (src/db/prepared.ts): on a PostgreSQL server a marked text is prepared
 * once per connection under a `roost_N` name and reused; an unmarked one stays unnamed; on PGlite
 * the marker is only a comment. One connection (poolMax 1), so pg_prepared_statements (a
 * session's view) shows what the pool's only client prepared.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { openDatabase, type Database } from '../../src/db/orm.ts';
import { prepared } from '../../src/db/prepared.ts';
import { createTestDatabase } from '../helpers/roost.ts';

let db: Database;
let drop: () => Promise<void>;
beforeAll(async () => {
  const t = await createTestDatabase();
  drop = t.drop;
  db = await openDatabase({ databaseUrl: t.url, poolMax: 1 });
});
afterAll(async () => {
  await db?.close();
  await drop?.();
});

const SUM = prepared(`select $1::int + $2::int as n`);
const LIST = prepared(`select g::text as g from generate_series(1, $1::int) g order by g`);

async function preparedHere(): Promise<{ name: string; statement: string }[]> {
  return db.sql.query(`select name, statement from pg_prepared_statements where name like 'roost\\_%' order by name`);
}

describe('prepared statements', () => {
  it('answer like any statement, in and out of a transaction', async () => {
    expect(SUM.endsWith('/* prepared */')).toBe(true);
    expect(await db.sql.query(SUM, [2, 3])).toEqual([{ n: 5 }]);
    expect(await db.sql.query(SUM, [40, 2])).toEqual([{ n: 42 }]);
    expect(await db.sql.transaction((tx) => tx.query(LIST, [3]))).toEqual([{ g: '1' }, { g: '2' }, { g: '3' }]);
    // A failing execution leaves the statement usable.
    await expect(db.sql.query(SUM, ['x', 1])).rejects.toThrow(/invalid input syntax for type integer/);
    expect(await db.sql.query(SUM, [1, 1])).toEqual([{ n: 2 }]);
  });

  it('on PostgreSQL: named once per connection and reused; unmarked texts stay unnamed', async () => {
    await db.sql.query(`select 1 as unmarked`);
    const before = await preparedHere();
    expect(before.map((p) => p.statement)).toEqual([SUM, LIST]);
    expect(before.map((p) => p.name)).toEqual([expect.stringMatching(/^roost_\d+$/), expect.stringMatching(/^roost_\d+$/)]);
    for (let i = 0; i < 5; i++) expect(await db.sql.query(SUM, [i, 1])).toEqual([{ n: i + 1 }]);
    expect(await preparedHere()).toEqual(before);
  });
});
