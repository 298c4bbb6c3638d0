/**
 * `npm run bench -- admin`: the admin API on a large instance. A real Roost (startRoost, HTTP on
 * loopback) on a scratch database holding 100,000 accounts (bulk-inserted with SQL: half local
 * with their users, half remote over 100 domains; 2% suspended, 2% silenced, 1% pending), and
 * for each case, in the same run:
 *
 *   roost      the route through HTTP with an admin's token (authentication, the filtered page of
 *              ids, Admin::Account for the page: facts, accounts, JSON), one request at a time
 *   baseline   a plain SQL page of the same rows: one statement selecting the same accounts with
 *              their user and role columns, on its own connection
 *
 * and three floors, each measured in the same loop as the two above, so the gap between them
 * has names:
 *
 *   http       the same response bytes (body and Link header, captured from Roost's answer)
 *              served by Roost's own HTTP layer (src/http: uWS bridge and router) on a second
 *              port, with no hooks, no auth, no database: the transport and the bytes
 *   statement  the page's statement as the route sends it (text and parameters captured from one
 *              request; authentication's statements are not the page's), through the services'
 *              SQL client (services.db.sql)
 *   render     the statement's rows to the JSON text in-process: the read module's row mapping,
 *              the view and serializers of Admin::Account, stringifyJson
 *
 * and their sum per iteration ("parts"): what the request would cost if Roost did nothing else.
 *
 * It also prints the statements one request sends (counted on the services' SQL client, for two
 * page sizes: a fixed number means it does not grow with the page), p50/p99 of each, and the
 * ratio of the p99s (goal ≤ 2×).
 *
 * Extending it: add an entry to ADMIN_BENCH_CASES (a name, the HTTP path, optionally the baseline
 * SQL); sign-in and webhook figures join the same list.
 *
 *   npm run bench -- admin [requests=300]
 *
 * Environment: ROOST_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres; a
 * scratch database is created beside it and dropped at the end), BENCH_ACCOUNTS (default 100000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../../config/index.ts';
import { startRoost, type RunningRoost } from '../../src/main.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';
import { JSON_CONTENT_TYPE, Router, startHttpServer, stringResponse } from '../../src/http/index.ts';
import { stringifyJson } from '../../src/lib/json-integers.ts';
import { adminAccountListFromRows } from '../../src/services/reads/admin-accounts.ts';
import { renderAdminAccountList } from '../../src/views/admin-accounts.ts';
import { fmtMs, fmtRatio, table } from './lib/report.ts';

/** What a case gets: the running instance, an admin's token, and a plain connection for baselines. */
export interface AdminBenchContext {
  roost: RunningRoost;
  token: string;
  plain: pg.Client;
  /** The number of accounts inserted. */
  accounts: number;
}

export interface AdminBenchCase {
  name: string;
  /** The request measured (GET, with the admin's token). */
  path: string;
  /** The same page's rows as one plain SQL statement (measured on `plain`). */
  baseline?: { sql: string; params: unknown[] };
  /** A second path of another page size, to show the statement count does not grow with it. */
  smallPath?: string;
  /** Goal for roost p99 / baseline p99. */
  goal?: number;
}

/** The columns Admin::Account shows, as a plain statement reads them. */
const PLAIN_PAGE = (where: string) => `
  select a.id, a.username, a.domain, a.display_name, a.note, a.uri, a.url, a.avatar_url, a.header_url, a.fields, a.locked,
         a.created_at, a.silenced_at, a.suspended_at, a.sensitized_at, u.email, u.locale, u.sign_up_reason, u.confirmed_at,
         u.approved, u.disabled, r.id as role_id, r.name as role_name, r.permissions,
         s.followers_count, s.following_count, s.statuses_count
    from accounts a left join users u on u.account_id = a.id left join user_roles r on r.id = u.role_id
    left join account_stats s on s.account_id = a.id
   where ${where} order by a.id desc limit 100`;

export const ADMIN_BENCH_CASES: AdminBenchCase[] = [
  {
    name: 'GET /api/v2/admin/accounts?status=suspended',
    path: '/api/v2/admin/accounts?status=suspended&limit=100',
    smallPath: '/api/v2/admin/accounts?status=suspended&limit=10',
    baseline: { sql: PLAIN_PAGE('a.suspended_at is not null'), params: [] },
    goal: 2,
  },
  {
    name: 'GET /api/v2/admin/accounts?by_domain=',
    path: '/api/v2/admin/accounts?by_domain=d8.bench.example&limit=100',
    smallPath: '/api/v2/admin/accounts?by_domain=d8.bench.example&limit=10',
    baseline: { sql: PLAIN_PAGE('a.domain = $1'), params: ['d8.bench.example'] },
    goal: 2,
  },
  {
    name: 'GET /api/v2/admin/accounts?status=pending',
    path: '/api/v2/admin/accounts?origin=local&status=pending&limit=100',
    smallPath: '/api/v2/admin/accounts?origin=local&status=pending&limit=10',
    baseline: { sql: PLAIN_PAGE('a.domain is null and u.approved = false'), params: [] },
    goal: 2,
  },
];

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

/** The 100,000 accounts: one statement per table. */
async function seed(sql: RunningRoost['services']['db']['sql'], n: number): Promise<void> {
  const start = 7_000_000_000;
  await sql.query(
    `insert into accounts (id, username, domain, display_name, uri, url, inbox_url, actor_type, created_at, updated_at, suspended_at, silenced_at)
     select $1::bigint + g, 'u' || g, case when g % 2 = 0 then 'd' || (g % 100) || '.bench.example' end, 'User ' || g,
            case when g % 2 = 0 then 'https://d' || (g % 100) || '.bench.example/users/u' || g else 'https://local.bench/users/u' || g end,
            null, case when g % 2 = 0 then 'https://d' || (g % 100) || '.bench.example/users/u' || g || '/inbox' end, 'Person',
            now() - (g || ' seconds')::interval, now(),
            case when g % 50 = 1 then now() end, case when g % 50 = 3 then now() end
       from generate_series(1, $2::int) g`,
    [start, n],
  );
  await sql.query(
    `insert into users (id, account_id, email, encrypted_password, confirmed_at, approved, created_at, updated_at)
     select $1::bigint + g, $1::bigint + g, 'u' || g || '@bench.test', 'x', now(), g % 100 <> 5, now(), now()
       from generate_series(1, $2::int) g where g % 2 = 1`,
    [start, n],
  );
  await sql.query(`analyze accounts`);
  await sql.query(`analyze users`);
}

export async function main(args: string[]): Promise<number> {
  const requests = Number(args[0] ?? 300);
  const n = Number(process.env.BENCH_ACCOUNTS ?? 100_000);
  const base = process.env.ROOST_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `roost_bench_admin_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-admin-'));
  const config = loadConfig({ env: {}, overrides: { host: '127.0.0.1', port: 0, dataDir, databaseUrl: url.toString(), logLevel: 'warn' } });
  const roost = await startRoost(config, { domainFromPort: true, controlSocket: false });
  const plain = new pg.Client({ connectionString: url.toString() });
  await plain.connect();
  try {
    const { user } = await createLocalAccount(roost.services, { username: 'benchadmin', email: 'admin@bench.test', role: 'Admin', confirmed: true });
    const { token } = await issueAccessToken(roost.services, { applicationId: null, userId: user.id, scopes: ['admin:read', 'admin:write'] });
    const t0 = performance.now();
    await seed(roost.services.db.sql, n);
    console.log(`${n.toLocaleString('en-US')} accounts inserted in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const ctx: AdminBenchContext = { roost, token, plain, accounts: n };
    const get = async (p: string) => {
      const res = await fetch(`${roost.services.config.publicUrl}${p}`, { headers: { authorization: `Bearer ${ctx.token}` } });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${p}: ${res.status} ${body.slice(0, 200)}`);
      return body;
    };
    /** The statements one request sends through the services' SQL client, with their parameters. */
    const capture = async (p: string): Promise<{ text: string; params: readonly unknown[] }[]> => {
      const sql = roost.services.db.sql;
      const original = sql.query;
      const seen: { text: string; params: readonly unknown[] }[] = [];
      sql.query = ((text: string, params?: readonly unknown[]) => {
        // The token's lookup is cached for 5 s of wall time (reads/viewer.ts): left out, as the tests count.
        if (!/\b(from|into|update) jobs\b/i.test(text) && !/^\s*select t\.id::text as t_id/.test(text)) seen.push({ text, params: params ?? [] });
        return original.call(sql, text, params);
      }) as typeof original;
      try {
        await get(p);
      } finally {
        sql.query = original;
      }
      return seen;
    };

    // Floor (a): Roost's HTTP layer answering bytes it is handed, on a port of its own.
    let floorBody = '';
    let floorLink = '';
    const floorRouter = new Router().get('/api/v2/admin/accounts', () =>
      stringResponse(floorBody, { headers: { 'content-type': JSON_CONTENT_TYPE, ...(floorLink ? { link: floorLink } : {}) } }),
    );
    const floorServer = await startHttpServer({ host: '127.0.0.1', port: 0, log: roost.services.log, publicUrl: roost.services.config.publicUrl });
    floorServer.serve({ router: floorRouter });
    const floorGet = async (p: string) => {
      const res = await fetch(`http://127.0.0.1:${floorServer.port}${p}`, { headers: { authorization: `Bearer ${ctx.token}` } });
      const body = await res.text();
      if (res.status !== 200 || body !== floorBody) throw new Error(`floor ${p}: ${res.status}`);
      return body;
    };

    const rows: string[][] = [];
    const floorRows: string[][] = [];
    const verdicts: string[] = [];
    try {
      for (const c of ADMIN_BENCH_CASES) {
        const first = await fetch(`${roost.services.config.publicUrl}${c.path}`, { headers: { authorization: `Bearer ${ctx.token}` } });
        floorBody = await first.text();
        floorLink = first.headers.get('link') ?? '';
        const count = (JSON.parse(floorBody) as unknown[]).length;
        if (count === 0) throw new Error(`${c.name}: the page is empty (the seed does not match the case)`);
        // Floor (b): the page's statement, exactly as the route sends it (the role check is not the page's).
        const sent = await capture(c.path);
        const stmts = sent.length;
        const stmtsSmall = c.smallPath ? (await capture(c.smallPath)).length : stmts;
        const pageSql = sent.find((q) => /\bpage_ids\b/.test(String(q.text)));
        if (!pageSql) throw new Error(`${c.name}: the page's statement was not seen`);
        const runStatements = () => roost.services.db.sql.query<Record<string, unknown>>(pageSql.text, pageSql.params);
        // Floor (c): those rows to the same JSON text, in-process.
        const renderRows = async (r: Record<string, unknown>[]) => stringifyJson(renderAdminAccountList(await adminAccountListFromRows(roost.services, r)).accounts);
        if ((await renderRows(await runStatements())) !== floorBody) throw new Error(`${c.name}: the rendering floor does not give the route's bytes`);
        // Warm every path alike.
        for (let i = 0; i < 30; i++) {
          await get(c.path);
          if (c.baseline) await plain.query(c.baseline.sql, c.baseline.params);
          await floorGet(c.path);
          await renderRows(await runStatements());
        }
        const roostMs: number[] = [];
        const baseMs: number[] = [];
        const httpMs: number[] = [];
        const stmtMs: number[] = [];
        const renderMs: number[] = [];
        const partsMs: number[] = [];
        for (let i = 0; i < requests; i++) {
          let t = performance.now();
          await get(c.path);
          roostMs.push(performance.now() - t);
          if (c.baseline) {
            t = performance.now();
            await plain.query(c.baseline.sql, c.baseline.params);
            baseMs.push(performance.now() - t);
          }
          t = performance.now();
          await floorGet(c.path);
          const h = performance.now() - t;
          t = performance.now();
          const r = await runStatements();
          const q = performance.now() - t;
          t = performance.now();
          await renderRows(r);
          const v = performance.now() - t;
          httpMs.push(h);
          stmtMs.push(q);
          renderMs.push(v);
          partsMs.push(h + q + v);
        }
        const r = stats(roostMs);
        const b = baseMs.length ? stats(baseMs) : null;
        const ratio = b ? r.p99 / b.p99 : NaN;
        const [fh, fq, fv, fp] = [stats(httpMs), stats(stmtMs), stats(renderMs), stats(partsMs)];
        const kb = `${(Buffer.byteLength(floorBody) / 1024).toFixed(0)} KB`;
        rows.push([c.name, String(count), kb, `${stmts} / ${stmtsSmall}`, fmtMs(r.p50), fmtMs(r.p99), b ? fmtMs(b.p50) : '-', b ? fmtMs(b.p99) : '-', b ? fmtRatio(r.p50 / b.p50) : '-', b ? fmtRatio(ratio) : '-']);
        floorRows.push([
          c.name,
          `${fmtMs(fh.p50)} / ${fmtMs(fh.p99)}`,
          `${fmtMs(fq.p50)} / ${fmtMs(fq.p99)}`,
          `${fmtMs(fv.p50)} / ${fmtMs(fv.p99)}`,
          `${fmtMs(fp.p50)} / ${fmtMs(fp.p99)}`,
          `${fmtMs(r.p50 - fp.p50)}`,
          b ? `${fmtRatio(fp.p50 / b.p50)} / ${fmtRatio(fp.p99 / b.p99)}` : '-',
        ]);
        if (b && c.goal) verdicts.push(`${c.name}: p99 ${fmtRatio(ratio)} of the plain page (goal ≤ ${c.goal}×: ${ratio <= c.goal ? 'met' : 'MISSED'}; the parts alone ${fmtRatio(fp.p99 / b.p99)}); statements ${stmts} at 100 rows, ${stmtsSmall} at 10 (${stmts === stmtsSmall ? 'fixed' : 'NOT FIXED'})`);
      }
    } finally {
      await floorServer.close({ drainMs: 0 });
    }
    console.log(`\n${requests} requests per case, one at a time, ${config.databaseUrl ? 'PostgreSQL server' : 'embedded PostgreSQL'}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
    console.log(table(['case', 'rows', 'body', 'statements (100 / 10 rows)', 'roost p50', 'roost p99', 'plain SQL p50', 'plain SQL p99', 'p50 ratio', 'p99 ratio'], rows));
    console.log('\nFloors, p50 / p99 (same loop): http = the same bytes from Roost\'s HTTP layer alone; statement = the page\'s statement through services.db.sql; render = rows to JSON text; parts = their sum per iteration\n');
    console.log(table(['case', 'http', 'statement', 'render', 'parts', 'roost p50 - parts p50', 'parts / plain SQL (p50 / p99)'], floorRows));
    console.log(`\n${verdicts.join('\n')}`);
    return 0;
  } finally {
    await plain.end().catch(() => undefined);
    await roost.close();
    rmSync(dataDir, { recursive: true, force: true });
    const d = new pg.Client({ connectionString: base });
    await d.connect();
    await d.query(`drop database if exists ${name} with (force)`);
    await d.end();
  }
}
