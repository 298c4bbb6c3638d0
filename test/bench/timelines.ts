// `npm run bench -- timelines`: timelines on PostgreSQL, Roost next to a plain node:http + pg server
// (timelines-baseline-server.ts) answering the same JSON from the same tables with a precomputed
// feed, in the same run:
//   GET /api/v1/timelines/home?limit=20   (full entities; the token varies over 200 readers)
//   GET /api/v1/statuses/:id              (no token; the id varies over 1,000 statuses)
// on a scratch database with 10,000 accounts following 200 each (2,000,000 follows) and 1,000,000
// statuses (reblogs, self-replies, unlisted and private ones, mentions, hashtags, counters), each
// reader's home feed precomputed (its 800 newest, as Mastodon keeps), all made with set-based SQL
// and dropped at the end. Both servers start from the same database in their own process with a
// pool of 10; wrk (1 thread) drives them in interleaved rounds; each figure is its median over the
// rounds. Then POST /api/v1/statuses, one after the other, alternately by an author with 10
// followers and one with 10,000 (fan-out runs after commit, from the outbox): median and p99 of
// each, and how long the 10,000-follower fan-out took to land.
// Goals: home and status ≥ 0.5× the baseline's req/s, home p99 ≤ 2× its p99; the two POST
// latencies within 10 ms of each other.
//
// Environment: ROOST_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres, or
// `embedded` for an embedded PostgreSQL with the default install's settings; a
// scratch database is created beside it), BENCH_TL_ACCOUNTS (default 10000), BENCH_TL_STATUSES
// (default 1000000), BENCH_TL_FOLLOWS (default 200) to scale down for a quick run,
// BENCH_DURATION (s, default 5), BENCH_WARMUP (s, default 2), BENCH_CONNECTIONS (default 50),
// BENCH_ROUNDS (default 3), BENCH_POSTS (per author, default 100). BENCH_TL_KEEP=1 keeps the
// scratch database (its name is printed); BENCH_TL_REUSE=<name> runs on such a kept database
// (same sizes; analyzed first) without seeding or dropping it; BENCH_TL_EXPLAIN=1 prints the home statement's plan.

import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase } from '../../src/db/orm.ts';
import { startChildServer } from './lib/child.ts';
import { fmtInt, fmtMs, fmtRatio, table } from './lib/report.ts';
import { benchServer } from './lib/database.ts';
import { requireWrk, runWrkWithCpu, type WrkResult } from './lib/wrk.ts';
import { homeTimelinePage } from '../../src/services/reads/timelines.ts';
import type { Services } from '../../src/context.ts';

function envNum(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

export const ACCOUNTS = envNum('BENCH_TL_ACCOUNTS', 10_000);
export const STATUSES = envNum('BENCH_TL_STATUSES', 1_000_000);
const FOLLOWS = Math.min(envNum('BENCH_TL_FOLLOWS', 200), ACCOUNTS - 1);
/** Readers of the home timeline: each has a user, a token and a precomputed feed. */
const READERS = Math.min(200, ACCOUNTS);
/** A reader's feed: its FEED newest statuses (Mastodon's FeedManager::MAX_ITEMS). */
const FEED = 800;
const ACCOUNT_BASE = 1_000_000n;
const STATUS_BASE = 10_000_000_000n;
export const accountId = (n: number) => String(ACCOUNT_BASE + BigInt(n));
const statusId = (g: number) => String(STATUS_BASE + BigInt(g));
/** Two more accounts: one followed by 10 accounts, one by every account. */
const SMALL = ACCOUNTS + 1;
const BIG = ACCOUNTS + 2;
export const token = (n: number) => `bench-tl-${n}`;

/**
 * The scratch database's rows (see the header). `opts.text`: the SQL expression (in the series
 * number `g`) of a status's text instead of 'Status number ' || g (the search bench's vocabulary).
 */
export async function seed(url: string, log: (s: string) => void, opts: { text?: string } = {}): Promise<void> {
  const db = await openDatabase({ databaseUrl: url });
  await db.migrate();
  await db.close();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const step = async (what: string, sql: string, params: unknown[] = []) => {
    const t = performance.now();
    const r = await c.query(sql, params);
    log(`  seed: ${what}: ${fmtInt(r.rowCount ?? 0)} rows in ${Math.round(performance.now() - t)} ms`);
  };
  try {
    await c.query(`set maintenance_work_mem = '256MB'`);
    await step(
      'accounts',
      `insert into accounts (id, username, domain, display_name, note, uri, url, actor_type, fields, created_at, updated_at)
       select $1::bigint + g, 'user' || g, null, 'User number ' || g, 'Hello, I am user ' || g || ' and I like birds.',
              'https://roost.example/users/user' || g, 'https://roost.example/@user' || g, 'Person', '[]'::jsonb,
              timestamptz '2025-01-01' + g * interval '1 minute', timestamptz '2025-01-01'
         from generate_series(1, $2::int) g`,
      [ACCOUNT_BASE, ACCOUNTS + 2],
    );
    await step(
      'users (readers and the two authors)',
      `insert into users (id, account_id, email, encrypted_password, confirmed_at, approved, created_at, updated_at)
       select $1::bigint + g, $1::bigint + g, 'user' || g || '@roost.example', 'x', now(), true, now(), now()
         from generate_series(1, $2::int) g where g <= $3 or g > $2 - 2`,
      [ACCOUNT_BASE, ACCOUNTS + 2, READERS],
    );
    await c.query(
      `insert into oauth_applications (id, name, redirect_uris, scopes, client_id, client_secret, created_at, updated_at)
       values (1, 'bench', '{urn:ietf:wg:oauth:2.0:oob}', 'read write follow', 'bench-client', 'bench-secret', now(), now())`,
    );
    const tokens = [...Array.from({ length: READERS }, (_, i) => i + 1), SMALL, BIG];
    await c.query(
      `insert into oauth_access_tokens (id, application_id, user_id, token_hash, scopes, last_used_at, created_at)
       select n, 1, $1::bigint + n, h, 'read write follow', now(), now() from unnest($2::int[], $3::text[]) as x(n, h)`,
      [ACCOUNT_BASE, tokens, tokens.map((n) => createHash('sha256').update(token(n)).digest('hex'))],
    );
    // Each account follows the next FOLLOWS accounts; the first 10 follow SMALL, everyone BIG.
    await step(
      'follows',
      `insert into follows (id, account_id, target_account_id, state, created_at, updated_at)
       select g::bigint * 1000 + k, $1::bigint + g, $1::bigint + ((g - 1 + k) % $2::int) + 1, 'accepted', now(), now()
         from generate_series(1, $2::int) g, generate_series(1, $3::int) k`,
      [ACCOUNT_BASE, ACCOUNTS, FOLLOWS],
    );
    await step(
      'follows of the two authors',
      `insert into follows (id, account_id, target_account_id, state, created_at, updated_at)
       select g::bigint * 1000 + 998, $1::bigint + g, $1::bigint + $3, 'accepted', now(), now() from generate_series(1, 10) g
       union all
       select g::bigint * 1000 + 999, $1::bigint + g, $1::bigint + $4, 'accepted', now(), now() from generate_series(1, $2::int) g`,
      [ACCOUNT_BASE, ACCOUNTS, SMALL, BIG],
    );
    // Status g is by account ((g - 1) % ACCOUNTS) + 1, one second after status g - 1. Of ten:
    // one reblogs status g - 5, one replies to its author's previous status, one is unlisted;
    // one in twenty is private. One in ten carries #birds, one in ten mentions the next account.
    await step(
      'statuses',
      `insert into statuses (id, account_id, uri, url, text, content, visibility, local, in_reply_to_id, in_reply_to_account_id,
                             reblog_of_id, language, created_at, updated_at)
       select $1::bigint + g, a, 'https://roost.example/users/user' || (a - $2::bigint) || '/statuses/' || ($1::bigint + g),
              case when g % 10 = 3 then null else 'https://roost.example/@user' || (a - $2::bigint) || '/' || ($1::bigint + g) end,
              case when g % 10 = 3 then '' else ${opts.text ?? `'Status number ' || g`} end,
              case when g % 10 = 3 then '' when g % 10 = 1 then '<p>Status number ' || g || ' about <a href="https://roost.example/tags/birds" class="mention hashtag" rel="tag">#<span>birds</span></a></p>'
                   else '<p>Status number ' || g || ', nothing special.</p>' end,
              case when g % 20 = 9 then 'private' when g % 10 = 9 then 'unlisted' else 'public' end, true,
              case when g % 10 = 6 and g > $3::int then $1::bigint + g - $3::int end,
              case when g % 10 = 6 and g > $3::int then a end,
              case when g % 10 = 3 and g > 5 then $1::bigint + g - 5 end,
              case when g % 10 = 3 then null else 'en' end,
              timestamptz '2026-01-01' + g * interval '1 second', timestamptz '2026-01-01' + g * interval '1 second'
         from (select g, $2::bigint + ((g - 1) % $3::int) + 1 as a from generate_series(1, $4::int) g) x`,
      [STATUS_BASE, ACCOUNT_BASE, ACCOUNTS, STATUSES],
    );
    await c.query(`insert into tags (id, name, created_at) values (1, 'birds', now())`);
    await step('hashtags', `insert into statuses_tags (status_id, tag_id) select $1::bigint + g, 1 from generate_series(1, $2::int) g where g % 10 = 1`, [STATUS_BASE, STATUSES]);
    await step(
      'mentions',
      `insert into mentions (id, status_id, account_id, silent, created_at)
       select g, $1::bigint + g, $2::bigint + (g % $3::int) + 1, false, now() from generate_series(1, $4::int) g where g % 10 = 2`,
      [STATUS_BASE, ACCOUNT_BASE, ACCOUNTS, STATUSES],
    );
    await step(
      'status counters',
      `insert into status_stats (status_id, replies_count, reblogs_count, favourites_count)
       select $1::bigint + g, g % 3, g % 5, g % 7 from generate_series(1, $2::int) g where g % 4 = 0`,
      [STATUS_BASE, STATUSES],
    );
    await c.query(`delete from account_stats`);
    await step(
      'account counters',
      `insert into account_stats (account_id, followers_count, following_count, statuses_count, last_status_at)
       select a.id, coalesce(fi.n, 0), coalesce(fo.n, 0), coalesce(st.n, 0), st.last
         from accounts a
         left join (select target_account_id as id, count(*) as n from follows group by 1) fi on fi.id = a.id
         left join (select account_id as id, count(*) as n from follows group by 1) fo on fo.id = a.id
         left join (select account_id as id, count(*) as n, max(created_at) as last from statuses group by 1) st on st.id = a.id`,
    );
    // Each reader's feed as the fan-out leaves it: the newest statuses of the accounts it follows
    // and its own. Statuses go round the accounts, so its FEED newest are the newest
    // FEED / (FOLLOWS + 1) of each.
    await step(
      'home feeds',
      `insert into home_feeds (account_id, status_id)
       select r.id, s.id
         from (select $1::bigint + g as id from generate_series(1, $2::int) g) r
         cross join lateral (select f.target_account_id as id from follows f where f.account_id = r.id and f.target_account_id <> $1::bigint + $4
                             union all select r.id) t
         cross join lateral (select s.id from statuses s where s.account_id = t.id order by s.id desc limit $3) s`,
      [ACCOUNT_BASE, READERS, Math.ceil(FEED / (FOLLOWS + 1)), BIG],
    );
    await step('vacuum analyze', 'vacuum analyze');
  } finally {
    await c.end();
  }
}

interface Route {
  key: string;
  label: string;
  /** Lua script that varies the request. */
  script: string;
  /** One path to compare the two servers' answers on, and its token (if any). */
  check: { path: string; token?: string }[];
  /** Compared with the baseline on p99 too. */
  p99Goal: boolean;
}

async function postLatencies(port: number, posts: number, url: string): Promise<{ small: number[]; big: number[]; fanOutMs: number }> {
  const post = async (who: number, i: number): Promise<{ ms: number; id: string }> => {
    const t = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/statuses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token(who)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: `Bench post ${i} by ${who === BIG ? 'the big' : 'the small'} author` }),
    });
    const body = (await res.json()) as { id: string };
    const ms = performance.now() - t;
    if (res.status !== 200) throw new Error(`POST /api/v1/statuses answered ${res.status}: ${JSON.stringify(body)}`);
    return { ms, id: body.id };
  };
  const small: number[] = [];
  const big: number[] = [];
  for (let i = 0; i < 10; i++) {
    await post(SMALL, i);
    await post(BIG, i);
  }
  for (let i = 0; i < posts; i++) {
    small.push((await post(SMALL, i)).ms);
    big.push((await post(BIG, i)).ms);
  }
  // How long a 10,000-follower post takes to reach every feed, once the queue is idle.
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const idle = async () => {
      for (;;) {
        const { rows } = await c.query(`select count(*)::int as n from jobs where state in ('pending', 'running')`);
        if (rows[0].n === 0) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await idle();
    const t = performance.now();
    const { id } = await post(BIG, posts);
    for (;;) {
      const { rows } = await c.query(`select count(*)::int as n from home_feeds where status_id = $1`, [id]);
      if (rows[0].n >= ACCOUNTS) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    return { small, big, fanOutMs: performance.now() - t };
  } finally {
    await c.end();
  }
}

export async function main(_args: string[]): Promise<number> {
  requireWrk();
  const duration = envNum('BENCH_DURATION', 5);
  const warmup = envNum('BENCH_WARMUP', 2);
  const connections = envNum('BENCH_CONNECTIONS', 50);
  const rounds = envNum('BENCH_ROUNDS', 3);
  const posts = envNum('BENCH_POSTS', 100);
  const dbServer = await benchServer();
  const adminUrl = dbServer.url;
  console.log(`database: ${dbServer.label}`);
  const reuse = process.env.BENCH_TL_REUSE && /^roost_bench_timelines_[0-9a-f]{8}$/.test(process.env.BENCH_TL_REUSE) ? process.env.BENCH_TL_REUSE : null;
  const keep = reuse !== null || process.env.BENCH_TL_KEEP === '1';
  const name = reuse ?? `roost_bench_timelines_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  if (!reuse) await admin.query(`create database ${name}`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  const tmp = mkdtempSync(path.join(tmpdir(), 'roost-bench-timelines-'));
  try {
    if (reuse) {
      // Every run's POST phase leaves its statuses and their fan-out (a million home_feeds rows a
      // run): the planner's statistics must see them, or the home statement's estimated cost grows
      // past jit_above_cost and PostgreSQL compiles it with JIT on every request (300 ms each, seen
      // after nine runs on a server with autovacuum off).
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      const t = performance.now();
      await c.query('analyze');
      await c.end();
      console.log(`  reused database analyzed in ${Math.round(performance.now() - t)} ms`);
    }
    const t0 = performance.now();
    if (!reuse) await seed(url, (s) => console.log(s));
    if (keep) console.log(`  database ${name} is kept (BENCH_TL_REUSE=${name} runs on it again)`);
    const server = await admin.query('show server_version');
    console.log(
      `timelines bench: PostgreSQL ${server.rows[0].server_version}, ${fmtInt(ACCOUNTS)} accounts following ${FOLLOWS} each, ` +
        `${fmtInt(STATUSES)} statuses (seeded in ${Math.round((performance.now() - t0) / 1000)} s); ` +
        `wrk -t1 -c${connections} -d${duration}s (warm-up ${warmup}s), ${rounds} interleaved round(s), Node ${process.version}`,
    );
    // The plan of Roost's home page statement, as it runs for reader 1 (the read module's own SQL).
    {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        // The read module with a stand-in Sql that answers its statement with the statement's plan.
        const explain = async (): Promise<string[]> => {
          let plan: string[] = [];
          const services = {
            clock: { now: () => new Date() },
            db: { sql: { query: async (text: string, params: unknown[]) => {
              plan = (await c.query(`explain (analyze, buffers) ${text}`, params)).rows.map((r) => r['QUERY PLAN'] as string);
              return [];
            } } },
          } as unknown as Services;
          await homeTimelinePage(services, accountId(1), { maxId: null, sinceId: null, minId: null, limit: 20 });
          return plan;
        };
        await explain(); // warm
        const lines = await explain();
        if (process.env.BENCH_TL_EXPLAIN) console.log(lines.join('\n'));
        // Push (Roost's statement over home_feeds) against pull: the newest statuses of every
        // followed account merged at read time, with no filtering at all (pull's lower bound).
        // Planning + execution as EXPLAIN ANALYZE reports them, the median over 20 readers.
        const timeOf = (plan: string[]) => plan.filter((l) => /^(Planning|Execution) Time/.test(l)).reduce((t, l) => t + Number(/([\d.]+) ms/.exec(l)![1]), 0);
        const push: number[] = [];
        const pull: number[] = [];
        for (let n = 1; n <= 20; n++) {
          const services = {
            clock: { now: () => new Date() },
            db: { sql: { query: async (text: string, params: unknown[]) => {
              push.push(timeOf((await c.query(`explain (analyze) ${text}`, params)).rows.map((r) => r['QUERY PLAN'] as string)));
              return [];
            } } },
          } as unknown as Services;
          await homeTimelinePage(services, accountId(n), { maxId: null, sinceId: null, minId: null, limit: 20 });
          const plan = await c.query(
            `explain (analyze) select x.id from (
               select s.id from follows f cross join lateral (
                 select s.id from statuses s where s.account_id = f.target_account_id and s.deleted_at is null order by s.id desc limit 20) s
                where f.account_id = $1 and f.state = 'accepted'
               union all
               (select s.id from statuses s where s.account_id = $1 and s.deleted_at is null order by s.id desc limit 20)) x
             order by x.id desc limit 20`,
            [accountId(n)],
          );
          pull.push(timeOf(plan.rows.map((r) => r['QUERY PLAN'] as string)));
        }
        const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
        console.log(
          `  home page statement, planning + execution (median of 20 readers): push (Roost, home_feeds, every rule checked) ${fmtMs(med(push))}; ` +
            `pull (merging the ${FOLLOWS} followed accounts' newest at read time, no rule checked) ${fmtMs(med(pull))}`,
        );
      } finally {
        await c.end();
      }
    }
    const homeScript = path.join(tmp, 'home.lua');
    writeFileSync(
      homeScript,
      `local n = 0\nrequest = function()\n  n = n + 1\n  return wrk.format("GET", "/api/v1/timelines/home?limit=20", { ["Authorization"] = "Bearer bench-tl-" .. (n % ${READERS} + 1) })\nend\n`,
    );
    // Statuses 10, 20, 30 … from the newest: public, not reblogs, half with counters.
    const top = Math.floor(STATUSES / 10) * 10;
    const statusScript = path.join(tmp, 'status.lua');
    writeFileSync(
      statusScript,
      `local n = 0\nrequest = function()\n  n = n + 1\n  return wrk.format("GET", "/api/v1/statuses/" .. (${STATUS_BASE} + ${top} - 10 * ((n * 7919) % 1000)))\nend\n`,
    );
    const routes: Route[] = [
      {
        key: 'home',
        label: 'GET /api/v1/timelines/home?limit=20',
        script: homeScript,
        check: [1, 2, READERS].map((n) => ({ path: '/api/v1/timelines/home?limit=20', token: token(n) })),
        p99Goal: true,
      },
      {
        key: 'status',
        label: 'GET /api/v1/statuses/:id',
        script: statusScript,
        check: [0, 1, 2].map((k) => ({ path: `/api/v1/statuses/${statusId(top - 10 * k)}` })),
        p99Goal: false,
      },
    ];
    const servers = [
      { key: 'roost', label: 'Roost', script: path.join(import.meta.dirname, 'reads-roost-server.ts') },
      { key: 'base', label: 'node:http + pg', script: path.join(import.meta.dirname, 'timelines-baseline-server.ts') },
    ] as const;

    // Same JSON from both (checked once, on every route).
    const bodies = new Map<string, string>();
    for (const s of servers) {
      const child = await startChildServer(s.script, { cpus: null, args: [url] });
      try {
        for (const r of routes) {
          for (const check of r.check) {
            const res = await fetch(`http://127.0.0.1:${child.port}${check.path}`, { headers: check.token ? { authorization: `Bearer ${check.token}` } : {} });
            const text = await res.text();
            if (res.status !== 200) throw new Error(`${s.label}: GET ${check.path} answered ${res.status}: ${text}`);
            const k = `${check.path} ${check.token ?? ''}`;
            const other = bodies.get(k);
            if (other === undefined) bodies.set(k, text);
            else if (JSON.stringify(JSON.parse(other)) !== JSON.stringify(JSON.parse(text))) {
              throw new Error(`Roost and the baseline answer GET ${check.path} differently:\n${other}\n${text}`);
            }
            if (r.key === 'home' && JSON.parse(text).length !== 20) throw new Error(`${s.label}: a home page of ${JSON.parse(text).length} statuses`);
          }
        }
      } finally {
        await child.stop();
      }
    }
    console.log(`  same JSON from both servers on every route (${[...bodies.values()].map((b) => `${fmtInt(b.length)} B`).join(', ')})`);

    const results = new Map<string, (WrkResult & { cpuUsPerReq: number })[]>();
    for (let round = 0; round < rounds; round++) {
      for (const s of servers) {
        const child = await startChildServer(s.script, { cpus: null, args: [url] });
        try {
          for (const r of routes) {
            const opts = { url: `http://127.0.0.1:${child.port}/`, connections, threads: 1, cpus: null, script: r.script };
            const res = await runWrkWithCpu(child, opts, warmup, duration);
            if (res.errors > 0) console.log(`  warning: ${s.label} ${r.label}: ${res.errors} errors / non-2xx responses`);
            const k = `${s.key}:${r.key}`;
            results.set(k, [...(results.get(k) ?? []), res]);
          }
        } finally {
          await child.stop();
        }
      }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const median = (k: string) => {
      const list = results.get(k)!;
      return {
        requestsPerSec: med(list.map((x) => x.requestsPerSec)),
        p99Ms: med(list.map((x) => x.p99Ms)),
        cpuUsPerReq: med(list.map((x) => x.cpuUsPerReq)),
      };
    };
    const rows: string[][] = [];
    let met = true;
    for (const r of routes) {
      const roost = median(`roost:${r.key}`);
      const base = median(`base:${r.key}`);
      const rps = roost.requestsPerSec / base.requestsPerSec;
      const p99 = roost.p99Ms / base.p99Ms;
      const errors = [...results.get(`roost:${r.key}`)!, ...results.get(`base:${r.key}`)!].reduce((n, x) => n + x.errors, 0);
      const ok = errors === 0 && rps >= 0.5 && (!r.p99Goal || p99 <= 2);
      met &&= ok;
      rows.push([
        r.label, fmtInt(roost.requestsPerSec), fmtInt(base.requestsPerSec), fmtRatio(rps), fmtMs(roost.p99Ms), fmtMs(base.p99Ms), fmtRatio(p99),
        `${roost.cpuUsPerReq.toFixed(0)} / ${base.cpuUsPerReq.toFixed(0)} us`, errors > 0 ? `INVALID (${errors} errors)` : ok ? 'met' : 'MISSED',
      ]);
    }
    console.log('');
    console.log(table(['route', 'Roost req/s', 'baseline req/s', 'ratio', 'Roost p99', 'baseline p99', 'p99 ratio', 'server CPU/req R / b', 'goal'], rows));
    if (rounds > 1) {
      console.log('');
      for (const r of routes) {
        console.log(`  ${r.label}: Roost ${results.get(`roost:${r.key}`)!.map((x) => fmtInt(x.requestsPerSec)).join(' / ')}; baseline ${results.get(`base:${r.key}`)!.map((x) => fmtInt(x.requestsPerSec)).join(' / ')} req/s per round`);
      }
    }

    // Posting: latency with 10 followers and with 10,000.
    const child = await startChildServer(servers[0].script, { cpus: null, args: [url] });
    let postMet = false;
    try {
      const { small, big, fanOutMs } = await postLatencies(child.port, posts, url);
      const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;
      const diff = Math.abs(pct(big, 0.5) - pct(small, 0.5));
      postMet = diff <= 10;
      console.log('');
      console.log(
        table(
          ['POST /api/v1/statuses', 'median', 'p99'],
          [
            [`author with 10 followers (${posts} posts)`, fmtMs(pct(small, 0.5)), fmtMs(pct(small, 0.99))],
            [`author with ${fmtInt(ACCOUNTS)} followers (${posts} posts)`, fmtMs(pct(big, 0.5)), fmtMs(pct(big, 0.99))],
          ],
        ),
      );
      console.log(`  medians ${fmtMs(diff)} apart: goal (within 10 ms) ${postMet ? 'met' : 'MISSED'}; a ${fmtInt(ACCOUNTS)}-follower post reached every home feed ${fmtMs(fanOutMs)} after it was posted (fan-out after commit, from the outbox)`);
    } finally {
      await child.stop();
    }
    console.log('');
    console.log(`goal ${met && postMet ? 'met' : 'MISSED'} (reads ≥ 0.5x the baseline's req/s, home p99 ≤ 2x; POST latency independent of the follower count)`);
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    if (!keep) await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
    await dbServer.stop();
  }
}
