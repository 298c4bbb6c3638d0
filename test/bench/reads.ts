// `npm run bench -- reads`: the read path on PostgreSQL, Roost next to a plain node:http + pg server
// (reads-baseline-server.ts) answering the same JSON from the same tables, in the same run:
//   GET /api/v1/accounts/:id                (no token; the id varies over 1,000 accounts)
//   GET /api/v1/accounts/verify_credentials (a user token)
//   GET /api/v1/accounts/relationships?id[]=… (5 ids: followed, blocked, muted, plain, remote)
// on a scratch database with 10,000 accounts (half local with a user, half remote) and 30,000
// follows, dropped at the end. Both servers start from the same database, each in its own process
// with a pool of 10; wrk (1 thread) drives them in interleaved rounds; each figure is its median
// over the rounds, and the server process's CPU time per request is printed beside them.
// Goal: each route ≥ 0.5× the baseline's requests/s with p99 ≤ 2× its p99.
//
// Environment: ROOST_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres, or
// `embedded` for an embedded PostgreSQL with the default install's settings; a
// scratch database is created beside it), BENCH_DURATION (s, default 3), BENCH_WARMUP (s, default
// 1), BENCH_CONNECTIONS (default 50), BENCH_ROUNDS (default 3).

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

const ACCOUNTS = 10_000;
const TOKEN = 'bench-reads-token';
const VIEWER = 1_000_001n;
const id = (n: number) => String(VIEWER - 1n + BigInt(n));
const REL_IDS = [id(2), id(3), id(5), id(6), id(7000)];

function envNum(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

async function seed(url: string): Promise<void> {
  const db = await openDatabase({ databaseUrl: url });
  await db.migrate();
  await db.close();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('begin');
    // Accounts 1..5000 are local (each with a user), 5001..10000 remote.
    await c.query(
      `insert into accounts (id, username, domain, display_name, note, uri, url, inbox_url, actor_type, fields, created_at, updated_at)
       select $1::bigint - 1 + g, 'user' || g, case when g <= 5000 then null else 'remote' || (g % 50) || '.example' end,
              'User number ' || g, case when g <= 5000 then 'Hello, I am user ' || g || ' and I like #birds.' else '<p>Remote bio ' || g || '</p>' end,
              case when g <= 5000 then 'https://roost.example/users/user' || g else 'https://remote' || (g % 50) || '.example/users/user' || g end,
              case when g <= 5000 then 'https://roost.example/@user' || g else 'https://remote' || (g % 50) || '.example/@user' || g end,
              case when g <= 5000 then null else 'https://remote' || (g % 50) || '.example/users/user' || g || '/inbox' end,
              'Person', '[{"name":"Website","value":"https://example.com","verified_at":null}]'::jsonb,
              timestamptz '2025-01-01' + g * interval '1 minute', now()
         from generate_series(1, $2::int) g`,
      [VIEWER, ACCOUNTS],
    );
    await c.query(
      `insert into users (id, account_id, email, encrypted_password, role_id, confirmed_at, approved, created_at, updated_at)
       select $1::bigint - 1 + g, $1::bigint - 1 + g, 'user' || g || '@roost.example', 'x', case when g = 1 then 1 end, now(), true, now(), now()
         from generate_series(1, 5000) g`,
      [VIEWER],
    );
    // Each account follows the next three (accepted): 30,000 follows.
    await c.query(
      `insert into follows (id, account_id, target_account_id, state, created_at, updated_at)
       select 2000000 + (g - 1) * 3 + k, $1::bigint - 1 + g, $1::bigint - 1 + ((g - 1 + k) % $2::int) + 1, 'accepted', now(), now()
         from generate_series(1, $2::int) g, generate_series(1, 3) k`,
      [VIEWER, ACCOUNTS],
    );
    await c.query(`insert into blocks (id, account_id, target_account_id, created_at) values (1, $1, $2, now())`, [id(1), id(5)]);
    await c.query(`insert into mutes (id, account_id, target_account_id, hide_notifications, created_at) values (1, $1, $2, true, now())`, [id(1), id(6)]);
    await c.query(`insert into account_notes (account_id, target_account_id, comment, updated_at) values ($1, $2, 'met at the bench', now())`, [id(1), id(2)]);
    await c.query(
      `insert into oauth_applications (id, name, redirect_uris, scopes, client_id, client_secret, created_at, updated_at)
       values (1, 'bench', '{urn:ietf:wg:oauth:2.0:oob}', 'read write follow', 'bench-client', 'bench-secret', now(), now())`,
    );
    await c.query(
      `insert into oauth_access_tokens (id, application_id, user_id, token_hash, scopes, last_used_at, created_at) values (1, 1, $1, $2, 'read write follow', now(), now())`,
      [id(1), createHash('sha256').update(TOKEN).digest('hex')],
    );
    // The counters, as the account_stats migration backfills them.
    await c.query(`delete from account_stats`);
    await c.query(`insert into account_stats (account_id, followers_count, following_count)
      select a.id, (select count(*) from follows f where f.target_account_id = a.id and f.state = 'accepted'),
             (select count(*) from follows f where f.account_id = a.id and f.state = 'accepted') from accounts a`);
    await c.query('commit');
    await c.query('analyze');
  } finally {
    await c.end();
  }
}

interface Route {
  key: string;
  label: string;
  path: string;
  auth: boolean;
  /** A Lua script that varies the path per request. */
  script?: string;
}

export async function main(_args: string[]): Promise<number> {
  requireWrk();
  const duration = envNum('BENCH_DURATION', 3);
  const warmup = envNum('BENCH_WARMUP', 1);
  const connections = envNum('BENCH_CONNECTIONS', 50);
  const rounds = envNum('BENCH_ROUNDS', 3);
  const dbServer = await benchServer();
  const adminUrl = dbServer.url;
  console.log(`database: ${dbServer.label}`);
  const name = `roost_bench_reads_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  const tmp = mkdtempSync(path.join(tmpdir(), 'roost-bench-reads-'));
  try {
    const t0 = performance.now();
    await seed(url);
    const server = await admin.query('show server_version');
    console.log(
      `reads bench: PostgreSQL ${server.rows[0].server_version}, ${fmtInt(ACCOUNTS)} accounts (seeded in ${Math.round(performance.now() - t0)} ms); ` +
        `wrk -t1 -c${connections} -d${duration}s (warm-up ${warmup}s), ${rounds} interleaved round(s), Node ${process.version}`,
    );
    const script = path.join(tmp, 'accounts.lua');
    writeFileSync(
      script,
      `local n = 0\nrequest = function()\n  n = n + 1\n  return wrk.format("GET", "/api/v1/accounts/" .. (${VIEWER} + (n * 7919) % 1000))\nend\n`,
    );
    const routes: Route[] = [
      { key: 'account', label: 'GET /api/v1/accounts/:id', path: `/api/v1/accounts/${id(2)}`, auth: false, script },
      { key: 'verify', label: 'GET /api/v1/accounts/verify_credentials', path: '/api/v1/accounts/verify_credentials', auth: true },
      { key: 'rels', label: 'GET /api/v1/accounts/relationships (5 ids)', path: `/api/v1/accounts/relationships?${REL_IDS.map((i) => `id[]=${i}`).join('&')}`, auth: true },
    ];
    const servers = [
      { key: 'roost', label: 'Roost', script: path.join(import.meta.dirname, 'reads-roost-server.ts') },
      { key: 'base', label: 'node:http + pg', script: path.join(import.meta.dirname, 'reads-baseline-server.ts') },
    ] as const;

    // Same JSON from both (checked once, on every route).
    const bodies = new Map<string, string>();
    for (const s of servers) {
      const child = await startChildServer(s.script, { cpus: null, args: [url] });
      try {
        for (const r of routes) {
          for (const p of r.key === 'account' ? [r.path, `/api/v1/accounts/${id(7000)}`] : [r.path]) {
            const res = await fetch(`http://127.0.0.1:${child.port}${p}`, { headers: r.auth ? { authorization: `Bearer ${TOKEN}` } : {} });
            const text = await res.text();
            if (res.status !== 200) throw new Error(`${s.label}: GET ${p} answered ${res.status}: ${text}`);
            const other = bodies.get(p);
            if (other === undefined) bodies.set(p, text);
            else if (JSON.stringify(JSON.parse(other)) !== JSON.stringify(JSON.parse(text))) {
              throw new Error(`Roost and the baseline answer GET ${p} differently:\n${other}\n${text}`);
            }
          }
        }
      } finally {
        await child.stop();
      }
    }
    console.log(`  same JSON from both servers on every route (${[...bodies.values()].map((b) => `${b.length} B`).join(', ')})`);

    const results = new Map<string, (WrkResult & { cpuUsPerReq: number })[]>();
    for (let round = 0; round < rounds; round++) {
      for (const s of servers) {
        const child = await startChildServer(s.script, { cpus: null, args: [url] });
        try {
          for (const r of routes) {
            const opts = {
              url: `http://127.0.0.1:${child.port}${r.path}`,
              connections,
              threads: 1,
              cpus: null,
              headers: r.auth ? [`Authorization: Bearer ${TOKEN}`] : [],
              script: r.script,
            };
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
    // Each figure's median over the rounds, taken separately (a shared machine makes rounds noisy).
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
      // A round that answered errors (a 429, a 500) measured something else: no figure counts then.
      const errors = [...results.get(`roost:${r.key}`)!, ...results.get(`base:${r.key}`)!].reduce((n, x) => n + x.errors, 0);
      const ok = errors === 0 && rps >= 0.5 && p99 <= 2;
      met &&= ok;
      rows.push([
        r.label, fmtInt(roost.requestsPerSec), fmtInt(base.requestsPerSec), fmtRatio(rps), fmtMs(roost.p99Ms), fmtMs(base.p99Ms), fmtRatio(p99),
        `${roost.cpuUsPerReq.toFixed(0)} / ${base.cpuUsPerReq.toFixed(0)} us`, errors > 0 ? `INVALID (${errors} errors)` : ok ? 'met' : 'MISSED',
      ]);
    }
    console.log('');
    console.log(table(['route', 'Roost req/s', 'baseline req/s', 'ratio', 'Roost p99', 'baseline p99', 'p99 ratio', 'server CPU/req R / b', 'goal (≥0.5x, p99 ≤2x)'], rows));
    if (rounds > 1) {
      console.log('');
      for (const r of routes) {
        console.log(`  ${r.label}: Roost ${results.get(`roost:${r.key}`)!.map((x) => fmtInt(x.requestsPerSec)).join(' / ')}; baseline ${results.get(`base:${r.key}`)!.map((x) => fmtInt(x.requestsPerSec)).join(' / ')} req/s per round`);
      }
    }
    console.log('');
    console.log(`goal ${met ? 'met' : 'MISSED'} on ${met ? 'every route' : 'some route'} (each ≥ 0.5x the baseline's req/s with p99 ≤ 2x its p99); CPU/req is the server process's own time per request (PostgreSQL's excluded), the steadier figure on a busy machine`);
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
    await dbServer.stop();
  }
}
