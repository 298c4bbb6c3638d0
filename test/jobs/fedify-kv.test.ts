import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
// Fedify's own Temporal (a dependency of @fedify/fedify): Node 24 has no global Temporal.
import { Temporal } from '@js-temporal/polyfill';
import type { KvKey, KvStoreListEntry } from '@fedify/fedify';
import type { TestSql } from '../helpers/sql.ts';
import type { Sql } from '../../src/db/sql.ts';
import { createManualClock, type ManualClock } from '../../src/lib/clock.ts';
import { PostgresKvStore } from '../../src/jobs/fedify-kv.ts';
import { createJobsDb } from './helpers.ts';

let db: TestSql;
let sql: Sql;
let clock: ManualClock;
let kv: PostgresKvStore;

beforeAll(async () => {
  db = await createJobsDb();
  sql = db.sql;
});
afterAll(async () => {
  await db?.close();
});
beforeEach(async () => {
  await sql.query('TRUNCATE fedify_kv');
  clock = createManualClock(new Date('2026-02-01T00:00:00.000Z'));
  kv = new PostgresKvStore(sql, { clock });
});

async function collect(iterable: AsyncIterable<KvStoreListEntry>): Promise<[KvKey, unknown][]> {
  const out: [KvKey, unknown][] = [];
  for await (const { key, value } of iterable) out.push([key, value]);
  return out;
}
const ttl = (seconds: number) => ({ ttl: Temporal.Duration.from({ seconds }) as never });

describe('get / set / delete', () => {
  it('round-trips JSON values and overwrites', async () => {
    expect(await kv.get(['missing'])).toBeUndefined();
    const values: unknown[] = [
      { a: 1, nested: { list: [1, 'two', null, true, { x: -0.5 }] } },
      [],
      'text with "quotes", \\backslashes\\, emoji 🐘 and a NUL \u0000 inside',
      0,
      1e21,
      -123.456,
      null,
      false,
    ];
    for (const [i, value] of values.entries()) {
      await kv.set(['v', String(i)], value);
      expect(await kv.get(['v', String(i)])).toEqual(value);
    }
    await kv.set(['v', '0'], { replaced: true });
    expect(await kv.get(['v', '0'])).toEqual({ replaced: true });
    const [{ n }] = await sql.query<{ n: string | number }>('SELECT count(*) AS n FROM fedify_kv');
    expect(Number(n)).toBe(values.length);
  });

  it('answers the reads of one event-loop turn with one statement, each its own value', async () => {
    await kv.set(['a', 'b'], { v: 1 });
    await kv.set(['a', 'bc'], 'two');
    await kv.set(['gone'], true, ttl(1));
    clock.advance(2000);
    const statements: string[] = [];
    const counting = new PostgresKvStore({ query: (text, params) => (statements.push(text), sql.query(text, params)), transaction: (fn) => sql.transaction(fn) }, { clock });
    const keys: KvKey[] = [['a', 'b'], ['missing'], ['a', 'bc'], ['gone'], ['a', 'b']];
    const values = await Promise.all(keys.map((k) => counting.get(k)));
    expect(values).toEqual([{ v: 1 }, undefined, 'two', undefined, { v: 1 }]);
    expect(values[0]).not.toBe(values[4]);
    expect(statements).toHaveLength(1);
    // A key PostgreSQL cannot store fails alone, before anything is sent.
    statements.length = 0;
    const mixed = await Promise.allSettled([counting.get(['a', 'b']), counting.get(['bad\u0000']), counting.get(['a', 'bc'])]);
    expect(mixed.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(statements).toHaveLength(1);
  });

  it('delete removes one key only; deleting a missing key is fine; set(undefined) deletes', async () => {
    await kv.set(['a'], 1);
    await kv.set(['a', 'b'], 2);
    await kv.delete(['a']);
    await kv.delete(['nothing', 'here']);
    expect(await kv.get(['a'])).toBeUndefined();
    expect(await kv.get(['a', 'b'])).toBe(2);
    await kv.set(['a', 'b'], undefined);
    expect(await kv.get(['a', 'b'])).toBeUndefined();
  });

  it('treats keys element-wise: no collisions between look-alike keys', async () => {
    const keys: KvKey[] = [['a', 'b'], ['a,b'], ['ab'], ['a', 'b', ''], ['a', ''], ['{a}'], ['"a"', 'b'], ['NULL']];
    for (const [i, key] of keys.entries()) await kv.set(key, i);
    for (const [i, key] of keys.entries()) expect(await kv.get(key)).toBe(i);
  });

  it('rejects keys PostgreSQL cannot store', async () => {
    await expect(kv.set([] as unknown as KvKey, 1)).rejects.toThrow(TypeError);
    await expect(kv.set(['a\u0000b'], 1)).rejects.toThrow(TypeError);
    await expect(kv.set(['a', 1 as unknown as string], 1)).rejects.toThrow(TypeError);
  });

  it('separates namespaces', async () => {
    const other = new PostgresKvStore(sql, { clock, namespace: 'instance-b' });
    await kv.set(['k'], 'a');
    await other.set(['k'], 'b');
    expect(await kv.get(['k'])).toBe('a');
    expect(await other.get(['k'])).toBe('b');
    expect(await collect(other.list())).toEqual([[['k'], 'b']]);
    await other.delete(['k']);
    expect(await kv.get(['k'])).toBe('a');
  });
});

describe('list', () => {
  beforeEach(async () => {
    const keys: KvKey[] = [
      ['a'],
      ['a', 'b'],
      ['a', 'b', 'c'],
      ['a', 'b', 'c', 'd'],
      ['a', 'bc'],
      ['a', 'b\u0001'],
      ['a', 'b ', 'x'],
      ['a', 'a', 'z'],
      ['ab'],
      ['b'],
      ['a', 'é'],
      ['a', 'b', ''],
    ];
    for (const key of keys) await kv.set(key, key.join('/'));
  });

  it('lists exactly the keys with the given prefix', async () => {
    expect(await collect(kv.list(['a', 'b']))).toEqual([
      [['a', 'b'], 'a/b'],
      [['a', 'b', ''], 'a/b/'],
      [['a', 'b', 'c'], 'a/b/c'],
      [['a', 'b', 'c', 'd'], 'a/b/c/d'],
    ]);
    expect((await collect(kv.list(['a']))).map(([k]) => k)).toEqual([
      ['a'],
      ['a', 'a', 'z'],
      ['a', 'b'],
      ['a', 'b', ''],
      ['a', 'b', 'c'],
      ['a', 'b', 'c', 'd'],
      ['a', 'b\u0001'],
      ['a', 'b ', 'x'],
      ['a', 'bc'],
      ['a', 'é'],
    ]);
    expect(await collect(kv.list(['a', 'b', 'c', 'd']))).toEqual([[['a', 'b', 'c', 'd'], 'a/b/c/d']]);
    expect(await collect(kv.list(['a', 'b', 'c', 'd', 'e']))).toEqual([]);
    expect(await collect(kv.list(['zzz']))).toEqual([]);
  });

  it('lists everything without a prefix, in key order', async () => {
    const all = await collect(kv.list());
    expect(all.length).toBe(12);
    expect(all[0]![0]).toEqual(['a']);
    expect(all[all.length - 1]![0]).toEqual(['b']);
  });

  it('pages through large results', async () => {
    const small = new PostgresKvStore(sql, { clock, listBatchSize: 3 });
    expect(await collect(small.list(['a']))).toEqual(await collect(kv.list(['a'])));
    expect((await collect(small.list())).length).toBe(12);
  });

  it('agrees with Fedify MemoryKvStore on the same data', async () => {
    const { MemoryKvStore } = await import('@fedify/fedify');
    const mem = new MemoryKvStore();
    for (const [key, value] of await collect(kv.list())) await mem.set(key, value);
    for (const prefix of [['a'], ['a', 'b'], ['a', 'b', 'c'], ['ab'], ['a', ''], ['b']] as KvKey[]) {
      const sortKey = (e: [KvKey, unknown]) => JSON.stringify(e[0]);
      const fromMem = (await collect(mem.list(prefix))).map(sortKey).sort();
      const fromPg = (await collect(kv.list(prefix))).map(sortKey).sort();
      expect(fromPg).toEqual(fromMem);
    }
  });
});

describe('ttl', () => {
  it('hides expired entries from get, list and cas, then sweeps them', async () => {
    await kv.set(['session', '1'], 'short', ttl(10));
    await kv.set(['session', '2'], 'long', ttl(3600));
    await kv.set(['session', '3'], 'forever');
    expect(await kv.get(['session', '1'])).toBe('short');

    clock.advance(9_999);
    expect(await kv.get(['session', '1'])).toBe('short');
    clock.advance(1);
    expect(await kv.get(['session', '1'])).toBeUndefined();
    expect(await collect(kv.list(['session']))).toEqual([
      [['session', '2'], 'long'],
      [['session', '3'], 'forever'],
    ]);
    // For cas an expired entry is absent.
    expect(await kv.cas(['session', '1'], 'short', 'x')).toBe(false);
    expect(await kv.cas(['session', '1'], undefined, 'renewed')).toBe(true);
    expect(await kv.get(['session', '1'])).toBe('renewed');

    clock.advance(3600_000);
    expect(await kv.sweep()).toBe(1); // session/2; session/1 no longer has a ttl
    const rows = await sql.query<{ k: string }>(`SELECT array_to_json(key)::text AS k FROM fedify_kv ORDER BY key`);
    expect(rows.map((r) => r.k)).toEqual(['["session","1"]', '["session","3"]']);
  });

  it('set without ttl clears a previous ttl; set with ttl sets one', async () => {
    await kv.set(['k'], 1, ttl(5));
    await kv.set(['k'], 2);
    clock.advance(10_000);
    expect(await kv.get(['k'])).toBe(2);
    await kv.set(['k'], 3, ttl(5));
    clock.advance(5_000);
    expect(await kv.get(['k'])).toBeUndefined();
  });

  it('sweeps automatically on set, at most once per sweep interval', async () => {
    const store = new PostgresKvStore(sql, { clock, sweepIntervalMs: 60_000 });
    await store.set(['old'], 1, ttl(1)); // first set sweeps (nothing to sweep yet)
    clock.advance(2_000);
    await store.set(['x'], 1);
    const count = async () => Number((await sql.query<{ n: string }>('SELECT count(*) AS n FROM fedify_kv'))[0]!.n);
    expect(await count()).toBe(2); // expired but not swept yet: the interval has not passed
    clock.advance(60_000);
    await store.set(['y'], 1);
    expect(await count()).toBe(2); // 'old' swept
    expect(await store.get(['old'])).toBeUndefined();
  });

  it('works with real time and a Temporal ttl', async () => {
    const real = new PostgresKvStore(sql);
    await real.set(['t'], 'v', { ttl: Temporal.Duration.from({ milliseconds: 200 }) as never });
    expect(await real.get(['t'])).toBe('v');
    await new Promise((r) => setTimeout(r, 250));
    expect(await real.get(['t'])).toBeUndefined();
  });
});

describe('cas', () => {
  it('swaps only when the current value matches', async () => {
    expect(await kv.cas(['c'], undefined, { v: 1 })).toBe(true);
    expect(await kv.get(['c'])).toEqual({ v: 1 });
    expect(await kv.cas(['c'], undefined, { v: 2 })).toBe(false);
    expect(await kv.cas(['c'], { v: 99 }, { v: 2 })).toBe(false);
    expect(await kv.get(['c'])).toEqual({ v: 1 });
    expect(await kv.cas(['c'], { v: 1 }, { v: 2 })).toBe(true);
    expect(await kv.get(['c'])).toEqual({ v: 2 });
  });

  it('compares as JSON: key order does not matter, types do', async () => {
    await kv.set(['c'], { a: 1, b: [1, 2], c: { d: null } });
    expect(await kv.cas(['c'], { c: { d: null }, b: [1, 2], a: 1 }, 'next')).toBe(true);
    expect(await kv.cas(['c'], 'nexT', 'x')).toBe(false);
    await kv.set(['n'], 1);
    expect(await kv.cas(['n'], '1', 2)).toBe(false);
    expect(await kv.cas(['n'], 1, 2)).toBe(true);
    await kv.set(['arr'], [1, 2]);
    expect(await kv.cas(['arr'], [2, 1], 0)).toBe(false);
  });

  it('can delete (newValue undefined) and sets a ttl', async () => {
    await kv.set(['c'], 'v');
    expect(await kv.cas(['c'], 'v', undefined)).toBe(true);
    expect(await kv.get(['c'])).toBeUndefined();
    expect(await kv.cas(['c'], undefined, 'w', ttl(1))).toBe(true);
    clock.advance(1_000);
    expect(await kv.get(['c'])).toBeUndefined();
  });

  it('lets exactly one of many concurrent swaps from the same value win', async () => {
    await kv.set(['lock'], 0);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => kv.cas(['lock'], 0, i + 1)));
    expect(results.filter(Boolean).length).toBe(1);
    const winner = results.indexOf(true) + 1;
    expect(await kv.get(['lock'])).toBe(winner);

    const inserts = await Promise.all(Array.from({ length: 12 }, (_, i) => kv.cas(['fresh'], undefined, i)));
    expect(inserts.filter(Boolean).length).toBe(1);
    expect(await kv.get(['fresh'])).toBe(inserts.indexOf(true));
  });
});
