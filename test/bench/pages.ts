// `npm run bench -- pages`: the public profile page next to the API's account, on the same account
// of the same Roost in the same run:
//   GET /@user1 (Accept: text/html)   the profile page: the account, its 20 latest posts rendered
//   GET /api/v1/accounts/:id          the same account as JSON (no token)
//   GET /api/v1/accounts/:id/statuses the same 20 posts as JSON (a reference: the data without HTML)
// on a scratch database (PostgreSQL; `embedded` for an embedded one) with 1,000 local accounts,
// the profile's account with 30 posts (hashtags, a mention, one reply) written through the API.
// wrk (1 thread) drives both routes of one Roost in interleaved rounds, once with the pages'
// micro-cache (the default) and once without it (pages.cacheSeconds 0); each figure is its median
// over the rounds, with the server's CPU time per request beside it. Goal: the page ≥ 0.5× the
// API's requests/s.
//
// Environment: ROOST_BENCH_DATABASE_URL, BENCH_DURATION (s, default 3), BENCH_WARMUP (s, default
// 1), BENCH_CONNECTIONS (default 50), BENCH_ROUNDS (default 3).

import { randomBytes, createHash } from 'node:crypto';
import pg from 'pg';
import path from 'node:path';
import { openDatabase } from '../../src/db/orm.ts';
import { startChildServer } from './lib/child.ts';
import { fmtInt, fmtMs, fmtRatio, table } from './lib/report.ts';
import { benchServer } from './lib/database.ts';
import { requireWrk, runWrkWithCpu, type WrkResult } from './lib/wrk.ts';

const ACCOUNTS = 1_000;
const FIRST = 1_000_001n;
const id = (n: number) => String(FIRST - 1n + BigInt(n));
const TOKEN = 'bench-pages-token';
const POSTS = 30;

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
    await c.query(
      `insert into accounts (id, username, domain, display_name, note, uri, url, actor_type, discoverable, fields, created_at, updated_at)
       select $1::bigint - 1 + g, 'user' || g, null, 'User number ' || g, '<p>Hello, I am user ' || g || ' and I like birds.</p>',
              'https://roost.example/users/user' || g, 'https://roost.example/@user' || g, 'Person', true,
              '[{"name":"Website","value":"https://example.com","verified_at":null}]'::jsonb,
              timestamptz '2025-01-01' + g * interval '1 minute', now()
         from generate_series(1, $2::int) g`,
      [FIRST, ACCOUNTS],
    );
    await c.query(
      `insert into users (id, account_id, email, encrypted_password, confirmed_at, approved, created_at, updated_at)
       select $1::bigint - 1 + g, $1::bigint - 1 + g, 'user' || g || '@roost.example', 'x', now(), true, now(), now()
         from generate_series(1, $2::int) g`,
      [FIRST, ACCOUNTS],
    );
    await c.query(
      `insert into oauth_applications (id, name, redirect_uris, scopes, client_id, client_secret, created_at, updated_at)
       values (1, 'bench', '{urn:ietf:wg:oauth:2.0:oob}', 'read write follow', 'bench-client', 'bench-secret', now(), now())`,
    );
    await c.query(
      `insert into oauth_access_tokens (id, application_id, user_id, token_hash, scopes, last_used_at, created_at) values (1, 1, $1, $2, 'read write follow', now(), now())`,
      [id(1), createHash('sha256').update(TOKEN).digest('hex')],
    );
    await c.query(`insert into account_stats (account_id, followers_count, following_count) select id, 0, 0 from accounts on conflict do nothing`);
    await c.query('commit');
    await c.query('analyze');
  } finally {
    await c.end();
  }
}

export async function main(_args: string[]): Promise<number> {
  requireWrk();
  const duration = envNum('BENCH_DURATION', 3);
  const warmup = envNum('BENCH_WARMUP', 1);
  const connections = envNum('BENCH_CONNECTIONS', 50);
  const rounds = envNum('BENCH_ROUNDS', 3);
  const dbServer = await benchServer();
  console.log(`database: ${dbServer.label}`);
  const name = `roost_bench_pages_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: dbServer.url });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const u = new URL(dbServer.url);
  u.pathname = `/${name}`;
  const url = u.toString();
  try {
    await seed(url);
    const script = path.join(import.meta.dirname, 'reads-roost-server.ts');
    // The posts go through the API, as a person writes them (the status writer, tags, mentions).
    {
      const child = await startChildServer(script, { cpus: null, args: [url] });
      try {
        let last: string | null = null;
        for (let i = 0; i < POSTS; i++) {
          const body: Record<string, unknown> = { status: `Post number ${i} about #birds and #bench, hello @user2 https://example.com/${i}` };
          if (i === 10 && last) body.in_reply_to_id = last;
          const res = await fetch(`http://127.0.0.1:${child.port}/api/v1/statuses`, {
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          if (res.status !== 200) throw new Error(`POST /api/v1/statuses answered ${res.status}: ${await res.text()}`);
          last = ((await res.json()) as { id: string }).id;
        }
        const page = await fetch(`http://127.0.0.1:${child.port}/@user1`, { headers: { accept: 'text/html' } });
        const html = await page.text();
        if (page.status !== 200 || (html.match(/<article class="status/g) ?? []).length !== 20) throw new Error(`the profile page is not what the bench expects: ${page.status} ${html.slice(0, 300)}`);
        console.log(`pages bench: 1 Roost, ${fmtInt(ACCOUNTS)} accounts, ${POSTS} posts on the profile; page ${fmtInt(html.length)} B; ` +
          `wrk -t1 -c${connections} -d${duration}s (warm-up ${warmup}s), ${rounds} interleaved round(s), Node ${process.version}`);
      } finally {
        await child.stop();
      }
    }
    // The page with its micro-cache (the default, pages.cacheSeconds 10) and without it (0),
    // each next to the API's account in the same process.
    const servers = [
      { key: 'cached', label: 'cache on', extra: [] as string[] },
      { key: 'uncached', label: 'cache off', extra: [JSON.stringify({ pages: { cacheSeconds: 0 } })] },
    ];
    const routes = [
      { key: 'page', label: 'GET /@user1 (text/html, 20 posts)', path: '/@user1', headers: ['Accept: text/html'] },
      { key: 'api', label: 'GET /api/v1/accounts/:id', path: `/api/v1/accounts/${id(1)}`, headers: [] },
      // The same 20 posts as the API's JSON: what the page's data costs without its HTML.
      { key: 'statuses', label: 'GET /api/v1/accounts/:id/statuses (20)', path: `/api/v1/accounts/${id(1)}/statuses?exclude_replies=true&limit=20`, headers: [] },
    ];
    const results = new Map<string, (WrkResult & { cpuUsPerReq: number })[]>();
    for (let round = 0; round < rounds; round++) {
      for (const s of servers) {
        const child = await startChildServer(script, { cpus: null, args: [url, ...s.extra] });
        try {
          for (const r of round % 2 === 0 ? routes : [...routes].reverse()) {
            const opts = { url: `http://127.0.0.1:${child.port}${r.path}`, connections, threads: 1, cpus: null, headers: r.headers };
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
      return { rps: med(list.map((x) => x.requestsPerSec)), p99: med(list.map((x) => x.p99Ms)), cpu: med(list.map((x) => x.cpuUsPerReq)), errors: list.reduce((n, x) => n + x.errors, 0) };
    };
    console.log('');
    const rows: string[][] = [];
    for (const s of servers) {
      for (const r of routes) {
        const m = median(`${s.key}:${r.key}`);
        rows.push([`${r.label}, ${s.label}`, fmtInt(m.rps), fmtMs(m.p99), `${m.cpu.toFixed(0)} us`, results.get(`${s.key}:${r.key}`)!.map((x) => fmtInt(x.requestsPerSec)).join(' / ')]);
      }
    }
    console.log(table(['route, server', 'req/s', 'p99', 'server CPU/req', 'per round req/s'], rows));
    console.log('');
    for (const s of servers) {
      const page = median(`${s.key}:page`);
      const api = median(`${s.key}:api`);
      const ratio = page.rps / api.rps;
      const valid = page.errors === 0 && api.errors === 0;
      const statuses = median(`${s.key}:statuses`);
      console.log(`${s.label}: profile page / API account ${fmtRatio(ratio)} (goal ≥ 0.5×): ${!valid ? 'INVALID (errors)' : ratio >= 0.5 ? 'met' : 'MISSED'}; ` +
        `CPU per request ${fmtRatio(page.cpu / api.cpu)} the account's; page / the API's 20 statuses ${fmtRatio(page.rps / statuses.rps)}`);
    }
    return 0;
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
    await dbServer.stop();
  }
}
