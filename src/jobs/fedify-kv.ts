import { isDeepStrictEqual } from 'node:util';
import type { KvKey, KvStore, KvStoreListEntry, KvStoreSetOptions } from '@fedify/fedify';
import type { Sql } from '../db/sql.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { perTurn } from '../lib/per-turn.ts';

/**
 * Fedify's KvStore on the `fedify_kv` table (schema.ts).
 *
 * Keys are stored as text[] in the "C" collation. list(prefix) is the btree range
 * [prefix, prefix with "\x01" appended to its last element): in bytewise order no string lies
 * between s and s + "\x01" (PostgreSQL text cannot hold "\x00"), so the range holds exactly the
 * keys whose first elements equal the prefix — ["a","b"] lists ["a","b"] and ["a","b","c"] but
 * never ["a","bc"].
 *
 * Values are JSON (a `json` column, so strings may hold "\u0000"); what JSON cannot carry
 * (undefined, functions, Dates as such) comes back as JSON.parse(JSON.stringify(value)) would.
 * Setting undefined deletes the key. Entries past their TTL are invisible to every read and
 * are deleted by sweep(), which set() runs at most once per sweepIntervalMs.
 *
 * Limits: a key element may not contain "\u0000"; a key must fit a btree entry (~2.7 kB).
 */
export interface PostgresKvStoreOptions {
  /** Separates stores sharing one database (several instances); '' by default. */
  namespace?: string;
  clock?: Clock;
  /** Minimum time between two automatic sweeps of expired entries; 60 s by default. */
  sweepIntervalMs?: number;
  /** Entries fetched per round trip by list(); 500 by default. */
  listBatchSize?: number;
}

const KEY = (p: string) => `ARRAY(SELECT e FROM json_array_elements_text(${p}::json) WITH ORDINALITY AS k(e, n) ORDER BY n)`;

function encodeKey(key: KvKey): string {
  if (!Array.isArray(key) || key.length === 0) throw new TypeError('a KvKey is a non-empty array of strings');
  for (const part of key) {
    if (typeof part !== 'string') throw new TypeError('a KvKey is a non-empty array of strings');
    if (part.includes('\u0000')) throw new TypeError('a KvKey element may not contain U+0000');
  }
  return JSON.stringify(key);
}

function encodeValue(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('a KvStore value must be JSON-serialisable');
  return text;
}

export class PostgresKvStore implements KvStore {
  readonly #sql: Sql;
  readonly #ns: string;
  readonly #clock: Clock;
  readonly #sweepIntervalMs: number;
  readonly #batch: number;
  #lastSweep = Number.NEGATIVE_INFINITY;

  constructor(sql: Sql, options: PostgresKvStoreOptions = {}) {
    this.#sql = sql;
    this.#ns = options.namespace ?? '';
    this.#clock = options.clock ?? systemClock;
    this.#sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
    this.#batch = options.listBatchSize ?? 500;
  }

  #expiry(options?: KvStoreSetOptions): string | null {
    if (options?.ttl == null) return null;
    const ms = options.ttl.total({ unit: 'millisecond' });
    return new Date(this.#clock.now().getTime() + Math.max(0, ms)).toISOString();
  }

  /**
   * Reads made in one event-loop turn go out together, in one statement (an inbox taking 32
   * deliveries at once asks for 32 activity ids; that is one round trip, not 32). Each read sees
   * what was committed when its statement ran, as a read of its own would.
   */
  get<T = unknown>(key: KvKey): Promise<T | undefined> {
    let encoded: string;
    try {
      encoded = encodeKey(key);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#read(encoded) as Promise<T | undefined>;
  }

  readonly #read = perTurn<string, unknown>(async (reads) => {
    const now = this.#clock.now().toISOString();
    if (reads.length === 1) {
      const rows = await this.#sql.query<{ value: string }>(
        `SELECT value::text AS value FROM fedify_kv
         WHERE namespace = $1 AND key = ${KEY('$2')} AND (expires_at IS NULL OR expires_at > $3::timestamptz)`,
        [this.#ns, reads[0]!.item, now],
      );
      reads[0]!.resolve(rows[0] ? JSON.parse(rows[0].value) : undefined);
      return;
    }
    const rows = await this.#sql.query<{ n: string | number; value: string }>(
      `SELECT i.n, f.value::text AS value
       FROM json_array_elements($2::json) WITH ORDINALITY AS i(k, n)
       CROSS JOIN LATERAL (SELECT ARRAY(SELECT e FROM json_array_elements_text(i.k) WITH ORDINALITY AS k(e, o) ORDER BY o) AS key) q
       JOIN fedify_kv f ON f.namespace = $1 AND f.key = q.key
       WHERE f.expires_at IS NULL OR f.expires_at > $3::timestamptz`,
      [this.#ns, `[${reads.map((r) => r.item).join(',')}]`, now],
    );
    const found = new Map<number, string>(rows.map((r) => [Number(r.n), r.value]));
    reads.forEach((r, i) => {
      const value = found.get(i + 1);
      r.resolve(value === undefined ? undefined : JSON.parse(value));
    });
  });

  async set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    if (value === undefined) return this.delete(key);
    await this.#sql.query(
      `INSERT INTO fedify_kv (namespace, key, value, expires_at) VALUES ($1, ${KEY('$2')}, $3::json, $4::timestamptz)
       ON CONFLICT (namespace, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`,
      [this.#ns, encodeKey(key), encodeValue(value), this.#expiry(options)],
    );
    await this.#maybeSweep();
  }

  async delete(key: KvKey): Promise<void> {
    await this.#sql.query(`DELETE FROM fedify_kv WHERE namespace = $1 AND key = ${KEY('$2')}`, [
      this.#ns,
      encodeKey(key),
    ]);
  }

  /**
   * Atomic compare-and-swap: sets newValue if the current value (undefined when absent or
   * expired) equals expectedValue as JSON (deep equality, key order irrelevant).
   */
  async cas(key: KvKey, expectedValue: unknown, newValue: unknown, options?: KvStoreSetOptions): Promise<boolean> {
    const k = encodeKey(key);
    const expected = expectedValue === undefined ? undefined : JSON.parse(encodeValue(expectedValue));
    const next = newValue === undefined ? undefined : encodeValue(newValue);
    const expiresAt = this.#expiry(options);
    const now = this.#clock.now().toISOString();
    return this.#sql.transaction(async (tx) => {
      const [row] = await tx.query<{ value: string; live: boolean }>(
        `SELECT value::text AS value, (expires_at IS NULL OR expires_at > $3::timestamptz) AS live
         FROM fedify_kv WHERE namespace = $1 AND key = ${KEY('$2')} FOR UPDATE`,
        [this.#ns, k, now],
      );
      const current = row && row.live ? JSON.parse(row.value) : undefined;
      if (!isDeepStrictEqual(current, expected)) return false;
      if (!row) {
        if (next === undefined) return true;
        // Two racing inserts of an absent key: the loser sees no row returned.
        const inserted = await tx.query(
          `INSERT INTO fedify_kv (namespace, key, value, expires_at) VALUES ($1, ${KEY('$2')}, $3::json, $4::timestamptz)
           ON CONFLICT (namespace, key) DO NOTHING RETURNING 1 AS ok`,
          [this.#ns, k, next, expiresAt],
        );
        return inserted.length === 1;
      }
      if (next === undefined) {
        await tx.query(`DELETE FROM fedify_kv WHERE namespace = $1 AND key = ${KEY('$2')}`, [this.#ns, k]);
      } else {
        await tx.query(
          `UPDATE fedify_kv SET value = $3::json, expires_at = $4::timestamptz WHERE namespace = $1 AND key = ${KEY('$2')}`,
          [this.#ns, k, next, expiresAt],
        );
      }
      return true;
    });
  }

  /** Live entries whose key starts with prefix (all entries without one), in key order. */
  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    let lower: string | null = null;
    let upper: string | null = null;
    if (prefix !== undefined) {
      lower = encodeKey(prefix);
      upper = JSON.stringify([...prefix.slice(0, -1), `${prefix[prefix.length - 1]}\u0001`]);
    }
    let after: string | null = null;
    const now = this.#clock.now().toISOString();
    for (;;) {
      const params: unknown[] = [this.#ns, now, this.#batch];
      const where = [`namespace = $1`, `(expires_at IS NULL OR expires_at > $2::timestamptz)`];
      if (lower !== null) {
        params.push(lower, upper);
        where.push(`key >= (${KEY(`$${params.length - 1}`)} COLLATE "C")`, `key < (${KEY(`$${params.length}`)} COLLATE "C")`);
      }
      if (after !== null) {
        params.push(after);
        where.push(`key > (${KEY(`$${params.length}`)} COLLATE "C")`);
      }
      // (Output names must not shadow the column: ORDER BY would sort the JSON text.)
      const rows: { k: string; v: string }[] = await this.#sql.query<{ k: string; v: string }>(
        `SELECT array_to_json(key)::text AS k, value::text AS v FROM fedify_kv
         WHERE ${where.join(' AND ')} ORDER BY fedify_kv.key COLLATE "C" LIMIT $3`,
        params,
      );
      for (const row of rows) yield { key: JSON.parse(row.k) as KvKey, value: JSON.parse(row.v) };
      if (rows.length < this.#batch) return;
      after = rows[rows.length - 1]!.k;
    }
  }

  /** Deletes this namespace's expired entries now; returns how many. */
  async sweep(): Promise<number> {
    const now = this.#clock.now();
    this.#lastSweep = now.getTime();
    const rows = await this.#sql.query<{ n: string | number }>(
      `WITH d AS (DELETE FROM fedify_kv WHERE namespace = $1 AND expires_at <= $2::timestamptz RETURNING 1)
       SELECT count(*) AS n FROM d`,
      [this.#ns, now.toISOString()],
    );
    return Number(rows[0]!.n);
  }

  async #maybeSweep(): Promise<void> {
    if (this.#clock.now().getTime() - this.#lastSweep < this.#sweepIntervalMs) return;
    await this.sweep();
  }
}
