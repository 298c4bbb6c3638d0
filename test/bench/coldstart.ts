/**
 * Cold start: from process start to "listening" on an existing, migrated database — on the
 * PostgreSQL server (when reachable) and on the embedded database — next to the time a bare
 * process takes to `import('@fedify/fedify')`, measured in the same run. Medians of several runs.
 *
 *   npm run bench -- coldstart [runs=5] [postgres-url]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { table, fmtMs, fmtRatio } from './lib/report.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'src/cli.ts');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Milliseconds from spawn until `marker` appears on stdout; then the process is stopped. */
function timeUntil(args: string[], env: Record<string, string>, marker: RegExp): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env } });
    let out = '';
    let done = false;
    child.stdout.on('data', (d) => {
      out += d;
      if (!done && marker.test(out)) {
        done = true;
        const ms = performance.now() - t0;
        child.kill('SIGTERM');
        child.on('exit', () => resolve(ms));
      }
    });
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => {
      if (!done) reject(new Error(`exited ${code} before ready: ${out.slice(-2000)}`));
    });
  });
}

async function runs(n: number, f: () => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  await f(); // warm the file-system cache once
  for (let i = 0; i < n; i++) out.push(await f());
  return out;
}

export async function main(args: string[]): Promise<number> {
  const n = Number(args[0] ?? 5);
  const pgUrl = args[1] ?? process.env.ROOST_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const rows: string[][] = [];

  const fedify = await runs(n, () =>
    timeUntil(['--input-type=module', '-e', "await import('@fedify/fedify'); console.log('imported')"], {}, /imported/),
  );
  const base = median(fedify);
  rows.push(['bare import(@fedify/fedify)', fmtMs(base), fmtRatio(1)]);

  // PostgreSQL server: a fresh database, migrated by a first start.
  let pgDb: string | undefined;
  try {
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    pgDb = `roost_bench_${process.pid}`;
    await admin.query(`create database ${pgDb}`);
    await admin.end();
  } catch (e) {
    console.log(`PostgreSQL at ${pgUrl} not reachable (${(e as Error).message}): server row left out`);
    pgDb = undefined;
  }
  const ready = /listening on http/;
  if (pgDb) {
    const u = new URL(pgUrl);
    u.pathname = `/${pgDb}`;
    const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-'));
    const env = { ROOST_DATABASE_URL: u.toString(), ROOST_DATA_DIR: dataDir, ROOST_PORT: '0', ROOST_LOG_LEVEL: 'info' };
    const t = median(await runs(n, () => timeUntil([cli, 'start'], env, ready)));
    rows.push(['roost start, PostgreSQL server', fmtMs(t), fmtRatio(t / base)]);
    rmSync(dataDir, { recursive: true, force: true });
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`drop database ${pgDb} with (force)`);
    await admin.end();
  }

  {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-'));
    const env = { ROOST_DATA_DIR: dataDir, ROOST_PORT: '0', ROOST_LOG_LEVEL: 'info' };
    const t = median(await runs(n, () => timeUntil([cli, 'start'], env, ready)));
    rows.push(['roost start, embedded PostgreSQL', fmtMs(t), fmtRatio(t / base)]);
    rmSync(dataDir, { recursive: true, force: true });
  }

  console.log(`cold start, process start → ready, median of ${n} runs (existing database)\n`);
  console.log(table(['what', 'time', 'vs bare Fedify import'], rows));
  return 0;
}
