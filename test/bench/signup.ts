/**
 * Sign-ups per second through createLocalAccount (validation, RSA-2048 + Ed25519 key pairs,
 * scrypt, one transaction) next to the machine's bare RSA-2048 key-generation rate measured in
 * the same run with the same concurrency, and the p99 event-loop lag meanwhile (what every other
 * request on the server would feel).
 *
 *   npm run bench -- signup [seconds=10] [concurrency=4]
 */
import { generateKeyPair } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../../config/index.ts';
import { openRoostServices } from '../../src/main.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { hashPassword } from '../../src/lib/password.ts';
import { table, fmtMs, fmtRatio } from './lib/report.ts';
import pg from 'pg';

function rsa(): Promise<void> {
  return new Promise((resolve, reject) => generateKeyPair('rsa', { modulusLength: 2048 }, (err) => (err ? reject(err) : resolve())));
}

/** Runs `task` with `concurrency` in flight for `seconds`; returns completions/s and p99 loop lag. */
async function measure(seconds: number, concurrency: number, task: (i: number) => Promise<void>) {
  const lag = monitorEventLoopDelay({ resolution: 1 });
  lag.enable();
  let done = 0;
  let next = 0;
  const deadline = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        await task(next++);
        done++;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  lag.disable();
  return { rate: done / elapsed, done, p99LagMs: lag.percentile(99) / 1e6, maxLagMs: lag.max / 1e6 };
}

export async function main(args: string[]): Promise<number> {
  const seconds = Number(args[0] ?? 10);
  const concurrency = Number(args[1] ?? 4);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-signup-'));
  // On a server: a scratch database beside the one named, dropped at the end.
  const serverUrl = process.env.ROOST_BENCH_DATABASE_URL;
  const scratch = `roost_bench_signup_${process.pid}`;
  let databaseUrl: string | null = null;
  if (serverUrl) {
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`create database ${scratch}`);
    await admin.end();
    const u = new URL(serverUrl);
    u.pathname = `/${scratch}`;
    databaseUrl = u.toString();
  }
  const config = loadConfig({ env: {}, overrides: { dataDir, logLevel: 'silent', databaseUrl } });
  const roost = await openRoostServices(config, { logLevel: 'silent' });
  try {
    await createLocalAccount(roost.services, { username: 'warmup', email: 'warmup@bench.test' });
    const keys = await measure(seconds, concurrency, () => rsa());
    // The CPU a sign-up cannot avoid: its key pair and its password hash (scrypt, the same cost
    // class as Mastodon's bcrypt) — to show how much of the gap to the key rate is Roost itself.
    const floor = await measure(seconds, concurrency, () => Promise.all([rsa(), hashPassword('bench password')]).then(() => undefined));
    const signups = await measure(seconds, concurrency, (i) =>
      createLocalAccount(roost.services, { username: `u${i}`, email: `u${i}@bench.test`, password: 'bench password' }).then(() => undefined),
    );
    console.log(
      `sign-ups vs RSA-2048 key generation, ${seconds} s each, ${concurrency} in flight, ${roost.services.config.databaseUrl ? 'PostgreSQL server' : 'embedded PostgreSQL'} database, ` +
        `libuv thread pool ${process.env.UV_THREADPOOL_SIZE ?? 4}\n`,
    );
    console.log(
      table(
        ['what', 'per second', 'done', 'p99 loop lag', 'max loop lag'],
        [
          ['RSA-2048 key pairs (baseline)', keys.rate.toFixed(1), String(keys.done), fmtMs(keys.p99LagMs), fmtMs(keys.maxLagMs)],
          ['RSA-2048 + scrypt (a sign-up\'s CPU floor)', floor.rate.toFixed(1), String(floor.done), fmtMs(floor.p99LagMs), fmtMs(floor.maxLagMs)],
          ['sign-ups (createLocalAccount)', signups.rate.toFixed(1), String(signups.done), fmtMs(signups.p99LagMs), fmtMs(signups.maxLagMs)],
        ],
      ),
    );
    const ratio = signups.rate / keys.rate;
    console.log(
      `\nsign-ups / key generation: ${fmtRatio(ratio)} (goal >= 0.80x: ${ratio >= 0.8 ? 'met' : 'MISSED'}); ` +
        `p99 event-loop lag during sign-ups ${fmtMs(signups.p99LagMs)} (goal <= 10 ms: ${signups.p99LagMs <= 10 ? 'met' : 'MISSED'})\n` +
        `sign-ups / (key + password hash): ${fmtRatio(signups.rate / floor.rate)}`,
    );
    return 0;
  } finally {
    await roost.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (serverUrl) {
      const admin = new pg.Client({ connectionString: serverUrl });
      await admin.connect();
      await admin.query(`drop database if exists ${scratch} with (force)`);
      await admin.end();
    }
  }
}
