/**
 * Sign-ins per second (the password grant, POST /oauth/token, through the real server) with
 * 10,000 IP blocks, next to the same with none, in the same run: the blocks are held in an
 * in-memory range index (services/ip-blocks.ts), so every request's no_access check and the
 * sign-in's own are a map lookup per prefix length, whatever the number of blocks. Goal ≥ 0.95×.
 * The phases alternate (none, blocks, none, blocks) so drift on a shared machine falls on both.
 *
 * Also the check alone, in-process: ipAccessDenied and ipBlockSeverities per call with the index
 * of 10,000 blocks next to the empty index.
 *
 *   npm run bench -- ip-blocks [seconds-per-phase=5] [rounds=6] [concurrency=4]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../config/index.ts';
import { startRoost } from '../../src/main.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { invalidateIpBlocks, ipAccessDenied } from '../../src/services/ip-blocks.ts';
import { benchServer } from './lib/database.ts';
import { fmtRatio, table } from './lib/report.ts';

const BLOCKS = 10_000;

export async function main(args: string[]): Promise<number> {
  const seconds = Number(args[0] ?? 5);
  const rounds = Number(args[1] ?? 6);
  const concurrency = Number(args[2] ?? 4);
  const server = await benchServer();
  const scratch = `roost_bench_ipblocks_${process.pid}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`create database ${scratch}`);
  const u = new URL(server.url);
  u.pathname = `/${scratch}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-ipblocks-'));
  const config = loadConfig({
    env: {},
    overrides: { host: '127.0.0.1', port: 0, dataDir, databaseUrl: u.toString(), logLevel: 'silent', rateLimits: { enabled: false } },
  });
  const roost = await startRoost(config, { domainFromPort: true, controlSocket: false });
  try {
    const services = roost.services;
    await createLocalAccount(services, { username: 'bench', email: 'bench@bench.test', password: 'bench password', confirmed: true });
    const app = (await (
      await fetch(`${roost.url}/api/v1/apps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'bench', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read' }),
      })
    ).json()) as { client_id: string; client_secret: string };
    const body = JSON.stringify({ grant_type: 'password', client_id: app.client_id, client_secret: app.client_secret, username: 'bench', password: 'bench password', scope: 'read' });

    // Clients in 10.x.y.z, the blocks all around them: /32s of no_access and /24s of sign-up blocks
    // in 10.0.0.0/8 (none containing a client), and /64s of IPv6.
    const clientIp = (i: number) => `10.${200 + (i % 50)}.${(i >> 8) & 255}.${i & 255}`;
    const addBlocks = () =>
      services.db.sql.query(
        `insert into ip_blocks (id, ip, severity, comment, created_at, updated_at)
         select 9000000000 + g,
                case when g % 3 = 0 then ('10.' || (g % 200) || '.' || (g / 200 % 256) || '.' || (g % 251) || '/32')::cidr
                     when g % 3 = 1 then ('10.' || (g % 199) || '.' || (g / 199 % 256) || '.0/24')::cidr
                     else ('2001:db8:' || to_hex(g) || '::/64')::cidr end,
                case when g % 3 = 0 then 'no_access' when g % 3 = 1 then 'sign_up_block' else 'sign_up_requires_approval' end,
                'bench', now(), now()
           from generate_series(1, $1) g on conflict do nothing`,
        [BLOCKS],
      );
    const dropBlocks = () => services.db.sql.query(`delete from ip_blocks`);

    let n = 0;
    const phase = async (): Promise<{ ok: number; failed: number; rate: number }> => {
      let ok = 0;
      let failed = 0;
      const deadline = performance.now() + seconds * 1000;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (performance.now() < deadline) {
            const res = await fetch(`${roost.url}/oauth/token`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp(n++) },
              body,
            });
            await res.arrayBuffer();
            if (res.status === 200) ok++;
            else failed++;
          }
        }),
      );
      return { ok, failed, rate: ok / ((performance.now() - t0) / 1000) };
    };

    // Warm-up (JIT, pools, the first index read).
    await phase();
    const none: { ok: number; failed: number; rate: number }[] = [];
    const blocked: typeof none = [];
    let stored = 0;
    /** ns per check (both checks a sign-in makes), over `count` client addresses. */
    const checkCost = async (count: number) => {
      await ipAccessDenied(services, clientIp(0)); // the index read
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < count; i++) {
        await ipAccessDenied(services, clientIp(i));
      }
      return Number(process.hrtime.bigint() - t0) / count;
    };
    let checkNone = 0;
    let checkBlocks = 0;
    for (let round = 0; round < rounds; round++) {
      await dropBlocks();
      invalidateIpBlocks(services);
      if (round === 0) checkNone = await checkCost(100_000);
      none.push(await phase());
      await addBlocks();
      invalidateIpBlocks(services);
      stored = Number((await services.db.sql.query<{ n: string }>(`select count(*) as n from ip_blocks`))[0]!.n);
      // One check to prove the index is the 10,000 blocks: a blocked /32 is refused.
      if (!(await ipAccessDenied(services, '10.3.0.3'))) throw new Error('the index does not hold the blocks');
      if (round === 0) checkBlocks = await checkCost(100_000);
      blocked.push(await phase());
    }
    const sum = (xs: typeof none) => ({ ok: xs.reduce((a, x) => a + x.ok, 0), failed: xs.reduce((a, x) => a + x.failed, 0), rate: xs.reduce((a, x) => a + x.rate, 0) / xs.length });
    const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)]!;
    const a = sum(none);
    const b = sum(blocked);
    console.log(`sign-ins (password grant through the server), ${seconds} s per phase, ${rounds} phases each, alternating, ${concurrency} in flight, ${server.label}\n`);
    console.log(
      table(
        ['phase', 'sign-ins/s (mean)', 'signed in', 'refused'],
        [
          ['no IP blocks (baseline)', a.rate.toFixed(1), String(a.ok), String(a.failed)],
          [`${stored.toLocaleString('en')} IP blocks`, b.rate.toFixed(1), String(b.ok), String(b.failed)],
        ],
      ),
    );
    const ratio = b.rate / a.rate;
    const perRound = none.map((x, i) => blocked[i]!.rate / x.rate);
    console.log(
      `\nwith ${stored.toLocaleString('en')} blocks / without: ${fmtRatio(ratio)} (goal >= 0.95x: ${ratio >= 0.95 ? 'met' : 'MISSED'}); ` +
        `per round: ${perRound.map(fmtRatio).join(', ')} (median ${fmtRatio(median(perRound))})\n` +
        `the no_access check alone: ${checkBlocks.toFixed(0)} ns with ${stored.toLocaleString('en')} blocks, ${checkNone.toFixed(0)} ns with none`,
    );
    return 0;
  } finally {
    await roost.close();
    rmSync(dataDir, { recursive: true, force: true });
    await admin.query(`drop database if exists ${scratch} with (force)`);
    await admin.end();
    await server.stop();
  }
}
