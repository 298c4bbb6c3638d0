/**
 * Idle footprint of the default install: `roost start` on the embedded PostgreSQL (a fresh data
 * directory), left idle, then Roost's own RSS and the PSS of its whole process tree (the server's
 * processes included; PSS counts a shared page once, split among the processes that map it) —
 * next to the same Roost on a PostgreSQL server (its tree is Roost alone) and to a bare
 * `node -e "import('@fedify/fedify')"` process, all three idle at the same time in the same run.
 *
 *   npm run bench -- footprint [idle-seconds=60] [postgres-url]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { table, fmtRatio } from './lib/report.ts';
import { processTree, procKib, pssMb } from './lib/proc.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'src/roost.mjs');

interface Footprint {
  rssMb: number;
  treePssMb: number;
  processes: number;
}

function footprint(pid: number): Footprint {
  const pids = processTree(pid);
  return { rssMb: procKib(`/proc/${pid}/status`, 'VmRSS') / 1024, treePssMb: pssMb(pids), processes: pids.length };
}

function startProcess(args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env } });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`not ready in 120 s: ${out.slice(-2000)}`)), 120_000);
    const see = (d: Buffer) => {
      out += d;
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve({ child, ms: performance.now() - t0 });
      }
    };
    child.stdout!.on('data', see);
    child.stderr!.on('data', (d) => (out += d));
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out.slice(-2000)}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await done;
}

export async function main(args: string[]): Promise<number> {
  const idleSeconds = Number(args[0] ?? 60);
  const pgUrl = args[1] ?? process.env.ROOST_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const ready = /listening on http/;
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  let pgDb: string | undefined;
  try {
    const bare = await startProcess(
      ['--input-type=module', '-e', "await import('@fedify/fedify'); console.log('imported'); setInterval(() => {}, 1 << 30);"],
      {},
      /imported/,
    );
    children.push(bare.child);

    const embeddedDir = mkdtempSync(path.join(tmpdir(), 'roost-footprint-'));
    dirs.push(embeddedDir);
    const common = { ROOST_PORT: '0', ROOST_LOG_LEVEL: 'info' };
    const embedded = await startProcess([cli, 'start'], { ...common, ROOST_DATA_DIR: embeddedDir }, ready);
    children.push(embedded.child);

    let server: { child: ChildProcess } | undefined;
    try {
      const admin = new pg.Client({ connectionString: pgUrl });
      await admin.connect();
      pgDb = `roost_footprint_${process.pid}`;
      await admin.query(`create database ${pgDb}`);
      await admin.end();
      const u = new URL(pgUrl);
      u.pathname = `/${pgDb}`;
      const serverDir = mkdtempSync(path.join(tmpdir(), 'roost-footprint-'));
      dirs.push(serverDir);
      server = await startProcess([cli, 'start'], { ...common, ROOST_DATA_DIR: serverDir, ROOST_DATABASE_URL: u.toString() }, ready);
      children.push(server.child);
    } catch (e) {
      console.log(`PostgreSQL at ${pgUrl} not usable (${(e as Error).message}): the server row is left out`);
      pgDb = undefined;
    }

    console.log(`idle for ${idleSeconds} s (load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})…`);
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));

    const base = footprint(bare.child.pid!);
    const emb = footprint(embedded.child.pid!);
    const rows = [
      ['bare import(@fedify/fedify)', base.rssMb.toFixed(0), base.treePssMb.toFixed(0), String(base.processes), fmtRatio(1)],
      [
        'roost start, embedded PostgreSQL (default)',
        emb.rssMb.toFixed(0),
        emb.treePssMb.toFixed(0),
        String(emb.processes),
        fmtRatio(emb.treePssMb / base.treePssMb),
      ],
    ];
    if (server) {
      const srv = footprint(server.child.pid!);
      rows.push(['roost start, PostgreSQL server', srv.rssMb.toFixed(0), srv.treePssMb.toFixed(0), String(srv.processes), fmtRatio(srv.treePssMb / base.treePssMb)]);
    }
    console.log(`\nidle memory after ${idleSeconds} s (MB; goal: the default install's whole tree ≤ 300 MB PSS)\n`);
    console.log(table(['what', 'Roost RSS', 'tree PSS', 'processes', 'tree PSS vs bare Fedify'], rows));
    console.log(`\nstart to ready on a new data directory (initdb included): ${embedded.ms.toFixed(0)} ms; bare Fedify import ${bare.ms.toFixed(0)} ms`);
    return 0;
  } finally {
    for (const c of children) await stop(c);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    if (pgDb) {
      const admin = new pg.Client({ connectionString: pgUrl });
      await admin.connect();
      await admin.query(`drop database if exists ${pgDb} with (force)`);
      await admin.end();
    }
  }
}
