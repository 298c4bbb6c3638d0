// `npm run bench -- search`: full-text search of statuses, GET /api/v2/search?type=statuses on
// Roost (a child process, the whole server: auth, the search statement with every visibility rule,
// the rendering), next to the bare PostgreSQL full-text query for the same words on the same table
// in the same run:
//   select id from statuses where search_vector @@ to_tsquery('simple', $1)
//    order by ts_rank(search_vector, to_tsquery('simple', $1)) desc limit 20
// and Roost's search statement alone (services/reads/search.ts, sent by this process as Roost sends
// it), and the same statuses fetched by id (GET /api/v1/statuses?id[]=: the rendering without the
// search, the floor of any request that shows them). Sequential
// requests, one at a time (latency, not throughput): p50 and p99 of each, for three kinds of word:
// rare (one status), medium (~1 in 1,000 statuses) and common (~1 in 100). Each request's word is
// read once unmeasured first (its statuses' pages in PostgreSQL's buffers for all three sides), and
// the three sides take turns at going first. Then the GIN index's size next to the statuses table's.
// Goal: Roost's p50 ≤ 1.5× the bare query's, for the medium and common words.
//
// The data: the timelines bench's seed (test/bench/timelines.ts: 10,000 accounts, 1,000,000
// statuses, follows, mentions, hashtags, counters) with a vocabulary in the texts
// ('Status number <g> kw<g % 1000> cw<g % 100>') and every account indexable; the searcher is one
// of its readers. BENCH_TL_STATUSES / BENCH_TL_ACCOUNTS scale it down; BENCH_SEARCH_QUERIES
// (default 200) requests per word kind and side; BENCH_SEARCH_EXPLAIN=1 prints the statement's plans.
// BENCH_SEARCH_KEEP=1 keeps the seeded database (its name is printed); BENCH_SEARCH_REUSE=<name>
// runs on such a kept database (same sizes) without seeding or dropping it, so tries of a change
// do not pay the seed's minutes each.
// ROOST_BENCH_DATABASE_URL as for the others.

import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { startChildServer } from './lib/child.ts';
import { fmtInt, fmtMs, fmtRatio, table } from './lib/report.ts';
import { benchServer } from './lib/database.ts';
import { ACCOUNTS, STATUSES, accountId, seed, token } from './timelines.ts';
import { searchStatusIds } from '../../src/services/reads/search.ts';
import { parseSearch } from '../../src/lib/search-query.ts';
import type { Services } from '../../src/context.ts';
import { namePreparedStatements } from '../../src/db/prepared.ts';

const QUERIES = Number(process.env.BENCH_SEARCH_QUERIES) > 0 ? Number(process.env.BENCH_SEARCH_QUERIES) : 200;

const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

/** The words of each kind, varied per request (statuses g % 10 = 3 are reblogs with no text: skipped). */
function words(kind: 'rare' | 'medium' | 'common', i: number): string {
  if (kind === 'rare') {
    let g = 1 + ((i * 7919) % STATUSES);
    if (g % 10 === 3) g++;
    return String(g);
  }
  return kind === 'medium' ? `kw${(i * 37) % 1000}` : `cw${(i * 7) % 100}`;
}

export async function main(_args: string[]): Promise<number> {
  const dbServer = await benchServer();
  console.log(`database: ${dbServer.label}`);
  const reuse = process.env.BENCH_SEARCH_REUSE && /^roost_bench_search_[0-9a-f]{8}$/.test(process.env.BENCH_SEARCH_REUSE) ? process.env.BENCH_SEARCH_REUSE : null;
  const keep = reuse !== null || process.env.BENCH_SEARCH_KEEP === '1';
  const name = reuse ?? `roost_bench_search_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: dbServer.url });
  await admin.connect();
  if (!reuse) await admin.query(`create database ${name}`);
  const u = new URL(dbServer.url);
  u.pathname = `/${name}`;
  const url = u.toString();
  try {
    const t0 = performance.now();
    const c = new pg.Client({ connectionString: url });
    if (!reuse) {
      await seed(url, (s) => console.log(s), { text: `'Status number ' || g || ' kw' || (g % 1000) || ' cw' || (g % 100)` });
      await c.connect();
      await c.query(`update accounts set indexable = true`);
    } else await c.connect();
    await c.query('analyze');
    if (keep) console.log(`  database ${name} is kept (BENCH_SEARCH_REUSE=${name} runs on it again)`);
    const server = await c.query('show server_version');
    const load = (await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ');
    console.log(
      `search bench: PostgreSQL ${server.rows[0].server_version}, ${fmtInt(ACCOUNTS)} accounts, ${fmtInt(STATUSES)} statuses ` +
        `(seeded in ${Math.round((performance.now() - t0) / 1000)} s); ${QUERIES} sequential requests per word kind; load average ${load}; Node ${process.version}`,
    );

    const viewer = accountId(1);
    const child = await startChildServer(path.join(import.meta.dirname, 'reads-roost-server.ts'), { cpus: null, args: [url] });
    const rows: string[][] = [];
    const closers: (() => Promise<void>)[] = [];
    let met = true;
    try {
      // The statement alone goes as Roost sends it: on a connection with Roost's options (JIT off),
      // a text marked prepared as a named statement (src/db/prepared.ts).
      const roostPool = new pg.Pool({ connectionString: url, max: 1, options: '-c jit=off' });
      namePreparedStatements(roostPool);
      const roostClient = await roostPool.connect();
      closers.push(async () => {
        roostClient.release();
        await roostPool.end();
      });
      const services = { clock: { now: () => new Date() }, config: { domain: 'roost.example' }, db: { sql: { query: async (text: string, params: unknown[]) => (await roostClient.query(text, params)).rows } } } as unknown as Services;
      const bare = async (w: string) => {
        const t = performance.now();
        const r = await c.query(
          `select id from statuses where search_vector @@ to_tsquery('simple', $1) order by ts_rank(search_vector, to_tsquery('simple', $1)) desc limit 20`,
          [parseSearch(w).tsquery],
        );
        return { ms: performance.now() - t, n: r.rowCount ?? 0 };
      };
      const statement = async (w: string) => {
        const t = performance.now();
        const ids = await searchStatusIds(services, { viewerId: viewer, query: parseSearch(w), accountId: null, maxId: null, minId: null, limit: 20, offset: 0 });
        return { ms: performance.now() - t, n: ids.length, ids };
      };
      // The rendering floor: the same statuses by id through GET /api/v1/statuses?id[]= (its
      // visibility check, then the batched view every status list uses), with no search.
      const byIds = async (ids: string[]) => {
        const t = performance.now();
        const res = await fetch(`http://127.0.0.1:${child.port}/api/v1/statuses?${ids.map((id) => `id[]=${id}`).join('&')}`, {
          headers: { authorization: `Bearer ${token(1)}` },
        });
        const body = (await res.json()) as unknown[];
        if (res.status !== 200) throw new Error(`statuses answered ${res.status}: ${JSON.stringify(body)}`);
        return { ms: performance.now() - t, n: body.length };
      };
      const http = async (w: string) => {
        const t = performance.now();
        const res = await fetch(`http://127.0.0.1:${child.port}/api/v2/search?type=statuses&limit=20&q=${encodeURIComponent(w)}`, {
          headers: { authorization: `Bearer ${token(1)}` },
        });
        const body = (await res.json()) as { statuses?: unknown[] };
        if (res.status !== 200) throw new Error(`search answered ${res.status}: ${JSON.stringify(body)}`);
        return { ms: performance.now() - t, n: body.statuses!.length };
      };
      if (process.env.BENCH_SEARCH_EXPLAIN) {
        for (const kind of ['rare', 'medium', 'common'] as const) {
          const explaining = { ...services, db: { sql: { query: async (text: string, params: unknown[]) => {
            console.log((await c.query(`explain (analyze, buffers) ${text}`, params)).rows.map((r) => r['QUERY PLAN']).join('\n'));
            return [];
          } } } } as unknown as Services;
          await searchStatusIds(explaining, { viewerId: viewer, query: parseSearch(words(kind, 1)), accountId: null, maxId: null, minId: null, limit: 20, offset: 0 });
        }
      }
      for (const kind of ['rare', 'medium', 'common'] as const) {
        // Warm each side (caches, prepared plans), then interleave them request by request.
        for (let i = 0; i < 10; i++) {
          await bare(words(kind, i));
          await byIds((await statement(words(kind, i))).ids);
          await http(words(kind, i));
        }
        const times = { bare: [] as number[], statement: [] as number[], http: [] as number[], byIds: [] as number[] };
        let found = 0;
        for (let i = 0; i < QUERIES; i++) {
          const w = words(kind, i + 10);
          // The word's statuses are read once, unmeasured, so no side pays for bringing its pages
          // into PostgreSQL's buffers (the first to run paid it: the bare query, which flattered
          // the ratios), and the sides take turns at going first.
          await bare(w);
          const { ids } = await statement(w);
          const sides = [
            async () => times.byIds.push((await byIds(ids)).ms),
            async () => times.bare.push((await bare(w)).ms),
            async () => times.statement.push((await statement(w)).ms),
            async () => {
              const h = await http(w);
              times.http.push(h.ms);
              found += h.n;
            },
          ];
          for (let k = 0; k < sides.length; k++) await sides[(i + k) % sides.length]!();
        }
        const matches = (await c.query(`select count(*)::int as n from statuses where search_vector @@ to_tsquery('simple', $1)`, [parseSearch(words(kind, 10)).tsquery])).rows[0].n;
        const ratio = pct(times.http, 0.5) / pct(times.bare, 0.5);
        if (kind !== 'rare' && ratio > 1.5) met = false;
        rows.push([
          `${kind} (${fmtInt(matches)} matches; ${(found / QUERIES).toFixed(1)} shown)`,
          `${fmtMs(pct(times.bare, 0.5))} / ${fmtMs(pct(times.bare, 0.99))}`,
          `${fmtMs(pct(times.statement, 0.5))} / ${fmtMs(pct(times.statement, 0.99))}`,
          `${fmtMs(pct(times.http, 0.5))} / ${fmtMs(pct(times.http, 0.99))}`,
          `${fmtMs(pct(times.byIds, 0.5))} / ${fmtMs(pct(times.byIds, 0.99))}`,
          fmtRatio(ratio),
        ]);
      }
    } finally {
      await child.stop();
    }
    console.log('');
    console.log(table(['words', 'bare query p50 / p99', 'Roost statement p50 / p99', 'Roost HTTP p50 / p99', 'same statuses by id p50 / p99', 'HTTP p50 / bare'], rows));
    const sizes = (
      await c.query(
        `select pg_relation_size('statuses_search_idx') as idx, pg_table_size('statuses') as tbl, pg_total_relation_size('statuses') as total,
                (select sum(pg_column_size(search_vector))::bigint from statuses) as col`,
      )
    ).rows[0];
    const mb = (n: unknown) => `${(Number(n) / 1024 / 1024).toFixed(1)} MB`;
    console.log('');
    console.log(
      `GIN index statuses_search_idx ${mb(sizes.idx)} next to the statuses table's ${mb(sizes.tbl)} (of which the stored search_vector column ${mb(sizes.col)}); ` +
        `the table with all its indexes ${mb(sizes.total)}`,
    );
    console.log(`goal ${met ? 'met' : 'MISSED'} (Roost's HTTP p50 ≤ 1.5x the bare query's, medium and common words)`);
    for (const close of closers) await close();
    await c.end();
    return 0;
  } finally {
    if (!keep) await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
    await dbServer.stop();
  }
}
