// `npm run bench -- delivery`: one post from an account with 10,000 followers on 500 servers
// (500 sink servers on loopback, in this process, answering 202), sent by Roost (its delivery
// lanes, src/federation/delivery.ts, on a scratch PostgreSQL database) and by stock Fedify
// (createFederation with its InProcessMessageQueue, same sinks, same followers), each sender in a
// process of its own (delivery-sender-server.ts), in the same run as the machine's RSA-2048
// signing rate (node:crypto sign in a loop, one and two worker threads).
//
// Cases: `shared`  every follower's server has a shared inbox: 500 POSTs;
//        `single`  one inbox per follower: 10,000 POSTs (10,000 signatures).
// Figures: drain time (the send call to the last POST's arrival), deliveries/s, the sender's peak
// heap and RSS growth while it drains; a reply to one remote author sent while the `single`
// fan-out drains (after its first 1,000 POSTs), its latency beside the same reply sent idle.
// Goals (issue 10): shared drained in ≤ 0.5 s and ≥ 2× stock Fedify; single ≥ 0.5× the two-core
// signing rate, sender memory ≤ 0.5× stock.
//
// Environment: ROOST_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres; a
// scratch database is created beside it and dropped), BENCH_FOLLOWERS (10000), BENCH_SERVERS
// (500), BENCH_TIMEOUT (s a case may take, 300), BENCH_SENDERS (roost,fedify: which to run),
// BENCH_SENDER_PROF (a directory: the senders run with --cpu-prof into it).
import { fork, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { startSinks, type SinkPost } from '../helpers/sink.ts';
import { fmtInt, fmtRatio, table } from './lib/report.ts';

const FOLLOWERS = Number(process.env.BENCH_FOLLOWERS ?? 10_000);
const SERVERS = Number(process.env.BENCH_SERVERS ?? 500);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT ?? 300) * 1000;

// --- RSA-2048 signing rate -------------------------------------------------------------------

const SIGN_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { sign, createPrivateKey } = require('node:crypto');
const key = createPrivateKey(workerData.pem);
const data = Buffer.alloc(300, 7);
const end = Date.now() + workerData.ms;
let n = 0;
while (Date.now() < end) { sign('sha256', data, key); n++; }
parentPort.postMessage(n);
`;

async function signingRate(threads: number, ms: number, pem: string): Promise<number> {
  const counts = await Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<number>((resolve, reject) => {
          const w = new Worker(SIGN_WORKER, { eval: true, workerData: { pem, ms } });
          w.once('message', resolve);
          w.once('error', reject);
        }),
    ),
  );
  return counts.reduce((a, b) => a + b, 0) / (ms / 1000);
}

// --- Sender processes --------------------------------------------------------------------------

interface Sender {
  name: string;
  ask(m: object, answer: string): Promise<any>;
  stop(): Promise<void>;
}

function startSender(mode: 'roost' | 'fedify'): Promise<Sender> {
  const child: ChildProcess = fork(path.join(import.meta.dirname, 'delivery-sender-server.ts'), [mode], {
    execArgv: ['--expose-gc', ...(process.env.BENCH_SENDER_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_SENDER_PROF}`] : [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<string, (m: any) => void>();
  child.on('message', (m: any) => {
    if (m.cmd === 'error') {
      console.error(`${mode} sender: ${m.error}`);
      process.exit(1);
    }
    const w = waiting.get(m.cmd);
    waiting.delete(m.cmd);
    w?.(m);
  });
  const ask = (m: object, answer: string) =>
    new Promise<any>((resolve) => {
      waiting.set(answer, resolve);
      child.send(m);
    });
  return new Promise((resolve) => {
    waiting.set('started', () =>
      resolve({
        name: mode,
        ask,
        async stop() {
          const exited = new Promise((r) => child.once('exit', r));
          child.send({ cmd: 'exit' });
          await exited;
        },
      }),
    );
  });
}

// --- Sinks ---------------------------------------------------------------------------------------

const arrivals = new Map<string, { n: number; first: number; last: number }>();
const watchers: { id: string; n: number; resolve: (last: number) => void }[] = [];

function onPost(p: SinkPost) {
  let a = arrivals.get(p.activityId);
  if (!a) arrivals.set(p.activityId, (a = { n: 0, first: p.at, last: p.at }));
  a.n++;
  a.last = p.at;
  for (let i = watchers.length - 1; i >= 0; i--) {
    const w = watchers[i]!;
    if (w.id === p.activityId && a.n >= w.n) {
      watchers.splice(i, 1);
      w.resolve(a.last);
    }
  }
}

/** When `n` POSTs of `id` have arrived (the last one's time), or null after the timeout. */
function arrived(id: string, n: number): Promise<number | null> {
  const a = arrivals.get(id);
  if (a && a.n >= n) return Promise.resolve(a.last);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      const i = watchers.findIndex((w) => w.resolve === done);
      if (i >= 0) watchers.splice(i, 1);
      resolve(null);
    }, TIMEOUT_MS);
    const done = (last: number) => {
      clearTimeout(timer);
      resolve(last);
    };
    watchers.push({ id, n, resolve: done });
  });
}

interface CaseResult {
  drainMs: number | null;
  posts: number;
  heapMb: number;
  rssMb: number;
  replyMs?: number | null;
  /** TCP connections the sinks accepted meanwhile. */
  connections: number;
}

let sinksRef: { connections: number } | undefined;

let seq = 0;
async function runCase(s: Sender, kind: 'shared' | 'single', withReply: boolean): Promise<CaseResult> {
  const expected = kind === 'shared' ? SERVERS : FOLLOWERS;
  const t0 = Date.now();
  const conns0 = sinksRef!.connections;
  const { id } = await s.ask({ cmd: 'send', case: kind, n: ++seq }, 'sent');
  let replyMs: number | null | undefined;
  let replying: Promise<void> | undefined;
  if (withReply) {
    // The reply goes out once the fan-out is well under way (its first 10 %).
    replying = arrived(id, Math.ceil(expected / 10)).then(async () => {
      const r0 = Date.now();
      const { id: rid } = await s.ask({ cmd: 'reply', n: ++seq }, 'replied');
      const at = await arrived(rid, 1);
      replyMs = at === null ? null : at - r0;
    });
  }
  const last = await arrived(id, expected);
  await replying;
  const mem = await s.ask({ cmd: 'memory' }, 'memory');
  return {
    drainMs: last === null ? null : last - t0,
    posts: arrivals.get(id)?.n ?? 0,
    heapMb: mem.heap / 2 ** 20,
    rssMb: mem.rss / 2 ** 20,
    replyMs,
    connections: sinksRef!.connections - conns0,
  };
}

async function idleReply(s: Sender): Promise<number | null> {
  const r0 = Date.now();
  const { id } = await s.ask({ cmd: 'reply', n: ++seq }, 'replied');
  const at = await arrived(id, 1);
  return at === null ? null : at - r0;
}

const ms = (v: number | null | undefined) => (v == null ? 'timeout' : `${fmtInt(v)} ms`);
const ratio = (a: number | null | undefined, b: number | null | undefined) => (a == null || b == null || b === 0 ? '-' : fmtRatio(a / b));

export async function main(): Promise<number> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  sign('sha256', Buffer.from('warm'), privateKey);
  const oneCore = await signingRate(1, 1500, pem);
  const twoCores = await signingRate(2, 1500, pem);
  console.log(`RSA-2048 signing (node:crypto): ${fmtInt(oneCore)}/s on one thread, ${fmtInt(twoCores)}/s on two`);

  const sinks = await startSinks(SERVERS, { record: false });
  sinks.onPost = onPost;
  sinksRef = sinks;
  const results: Record<string, { shared: CaseResult; single: CaseResult; idleReply: number | null }> = {};
  try {
    const modes = (process.env.BENCH_SENDERS ?? 'roost,fedify').split(',') as ('roost' | 'fedify')[];
    for (const mode of modes) {
      const s = await startSender(mode);
      const t = Date.now();
      await s.ask({ cmd: 'setup', urls: sinks.urls }, 'ready');
      console.log(`${mode}: ${FOLLOWERS} followers × 2 cases on ${SERVERS} servers set up in ${fmtInt(Date.now() - t)} ms`);
      // Warm up (keys, JIT, connections) with two rounds to the shared inboxes.
      await runCase(s, 'shared', false);
      await runCase(s, 'shared', false);
      const idle = await idleReply(s);
      const shared = await runCase(s, 'shared', false);
      console.log(`${mode}: shared inboxes drained in ${ms(shared.drainMs)} (heap +${shared.heapMb.toFixed(1)} MB, RSS +${shared.rssMb.toFixed(1)} MB)`);
      const single = await runCase(s, 'single', true);
      console.log(
        `${mode}: one inbox per follower drained in ${ms(single.drainMs)} (heap +${single.heapMb.toFixed(1)} MB, RSS +${single.rssMb.toFixed(1)} MB, ${single.connections} connections); reply during it ${ms(single.replyMs)}, idle ${ms(idle)}`,
      );
      results[mode] = { shared, single, idleReply: idle };
      await s.stop();
    }
  } finally {
    await sinks.close();
  }
  if (!results.roost || !results.fedify) return 0;
  const r = results.roost;
  const f = results.fedify;
  const rate = (c: CaseResult, n: number) => (c.drainMs ? (n * 1000) / c.drainMs : null);
  const rows = [
    ['shared: drain time (500 POSTs)', ms(r.shared.drainMs), `stock Fedify ${ms(f.shared.drainMs)}`, ratio(f.shared.drainMs, r.shared.drainMs), '≥ 2.00x and ≤ 500 ms'],
    [
      'single: deliveries/s (10,000 POSTs)',
      fmtInt(rate(r.single, FOLLOWERS) ?? 0),
      `2-core signing ${fmtInt(twoCores)}/s`,
      ratio(rate(r.single, FOLLOWERS), twoCores),
      '≥ 0.50x',
    ],
    [
      'single: deliveries/s',
      fmtInt(rate(r.single, FOLLOWERS) ?? 0),
      `1-core signing ×2 ${fmtInt(2 * oneCore)}/s`,
      ratio(rate(r.single, FOLLOWERS), 2 * oneCore),
      '',
    ],
    ['single: deliveries/s', fmtInt(rate(r.single, FOLLOWERS) ?? 0), `stock Fedify ${fmtInt(rate(f.single, FOLLOWERS) ?? 0)}/s`, ratio(rate(r.single, FOLLOWERS), rate(f.single, FOLLOWERS)), ''],
    ['single: stock Fedify deliveries/s', fmtInt(rate(f.single, FOLLOWERS) ?? 0), `1-core signing ${fmtInt(oneCore)}/s`, ratio(rate(f.single, FOLLOWERS), oneCore), ''],
    ['single: sender heap growth', `${r.single.heapMb.toFixed(1)} MB`, `stock Fedify ${f.single.heapMb.toFixed(1)} MB`, ratio(r.single.heapMb, f.single.heapMb), '≤ 0.50x'],
    ['single: sender RSS growth', `${r.single.rssMb.toFixed(1)} MB`, `stock Fedify ${f.single.rssMb.toFixed(1)} MB`, ratio(r.single.rssMb, f.single.rssMb), '≤ 0.50x'],
    ['shared: sender heap growth', `${r.shared.heapMb.toFixed(1)} MB`, `stock Fedify ${f.shared.heapMb.toFixed(1)} MB`, ratio(r.shared.heapMb, f.shared.heapMb), ''],
    ['reply latency during the single fan-out', ms(r.single.replyMs), `idle ${ms(r.idleReply)}`, ratio(r.single.replyMs, r.idleReply), ''],
    ['stock Fedify: reply during its fan-out', ms(f.single.replyMs), `idle ${ms(f.idleReply)}`, ratio(f.single.replyMs, f.idleReply), ''],
  ];
  console.log('');
  console.log(table(['figure', 'Roost', 'baseline', 'ratio', 'goal'], rows));
  return 0;
}
