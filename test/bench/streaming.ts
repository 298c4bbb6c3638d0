// `npm run bench -- streaming`: one public status to 10,000 WebSocket clients of one process.
//
//   Roost      a real Roost process (embedded database); the clients subscribe to `public` with a
//              user's token; each round POSTs a status through the REST API, and each client's
//              latency runs from just before that POST to the arrival of its `update` frame: the
//              whole path (commit, outbox job, rendering, streaming_events + NOTIFY, hub, 10,000 sends).
//   baseline   a server on the Node `ws` package (streaming-ws-server.ts, what Mastodon's streaming
//              server uses) that sends a frame of the same size to every client on POST /broadcast:
//              the fan-out alone.
//   bare uWS   the same on bare uWebSockets.js (streaming-uws-server.ts: one C++ publish, no
//              application code), printed as a reference: the transport's floor on this machine.
//              Here on loopback a send costs the kernel more than either server's code (the sender
//              runs the receiver's TCP path and wakes it), so bare uWS measured 0.66–1.00× the ws
//              server's p99 (2026-11-27; two uWS threads: 0.90–0.92×), and Roost's p99 is read against it.
// The clients live in BENCH_STREAM_CLIENT_PROCS (default 4) processes of their own (lib/ws-clients.ts;
// one process reading 10,000 sockets would measure itself; the count moves every figure, so it is
// printed and kept the same for every server of a run); they are
// bare RFC 6455 clients on TCP sockets unless BENCH_STREAM_CLIENT=ws (the `ws` package's client,
// whose per-message work on the same two cores weighed on both servers' figures alike). Roost is
// measured twice: from the REST POST (whole path) and from a status event written to the event
// log (SIGUSR1 to the server: the last status's event again, author and mentions included, so the
// hub screens it for blocks, mutes and filters: NOTIFY → hub → sends), the latter beside the ws
// fan-out. Printed:
// p50/p99 delivery latency over BENCH_STREAM_ROUNDS rounds, and the server's resident memory per idle
// connection ((RSS with the clients connected − RSS before) / clients), each beside the baseline's.
// Goals: p99 ≤ 0.5× the ws server's; memory per idle connection ≤ 0.35×.
//
// Environment: BENCH_STREAM_CLIENTS (default 10000), BENCH_STREAM_ROUNDS (default 5),
// BENCH_STREAM_CLIENT_PROCS (default 4), BENCH_STREAM_CLIENT (raw | ws).

import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startChildServer, type ChildServer } from './lib/child.ts';
import { fmtRatio, table } from './lib/report.ts';

function envNum(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}
const CLIENTS = envNum('BENCH_STREAM_CLIENTS', 10_000);
const ROUNDS = envNum('BENCH_STREAM_ROUNDS', 5);
const dir = import.meta.dirname;
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

function request(child: ChildProcess, msg: object, reply: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const on = (m: { type: string; message?: string }) => {
      if (m.type === reply) {
        child.off('message', on);
        resolve(m);
      } else if (m.type === 'error') {
        child.off('message', on);
        reject(new Error(m.message));
      }
    };
    child.on('message', on);
    child.send(msg);
  });
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

interface Result {
  p50: number;
  p99: number;
  received: number;
  memPerConnKb: number;
}

const PROCS = envNum('BENCH_STREAM_CLIENT_PROCS', 4);

async function settledRss(pid: number): Promise<number> {
  process.kill(pid, 'SIGUSR2');
  await sleep(1000);
  return rssKb(pid);
}

async function measure(server: ChildServer, url: string, protocol: string | undefined, triggers: Record<string, (round: number) => Promise<void>>): Promise<{ mem: number; byTrigger: Record<string, Result> }> {
  const procs = Array.from({ length: PROCS }, () => fork(path.join(dir, 'lib/ws-clients.ts'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  try {
    await sleep(500);
    const before = await settledRss(server.pid);
    const counts = await Promise.all(procs.map((c, i) => request(c, { type: 'connect', url, protocol, n: Math.floor(CLIENTS / PROCS) + (i < CLIENTS % PROCS ? 1 : 0) }, 'connected')));
    const n = counts.reduce((a, c) => a + (c as { n: number }).n, 0);
    await sleep(1000);
    const after = await settledRss(server.pid);
    const byTrigger: Record<string, Result> = {};
    for (const [name, trigger] of Object.entries(triggers)) {
      const all: number[] = [];
      let received = 0;
      for (let r = 0; r < ROUNDS; r++) {
        const t0 = now();
        const done = Promise.all(procs.map((c) => request(c, { type: 'expect', t0 }, 'latencies')));
        await sleep(50);
        const t1 = now();
        await trigger(r);
        for (const { ms } of (await done) as { ms: number[] }[]) {
          // Latency from the trigger, not from the expect message.
          for (const x of ms) all.push(x - (t1 - t0));
          received += ms.length;
        }
        await sleep(300);
      }
      all.sort((a, b) => a - b);
      byTrigger[name] = { p50: pct(all, 50), p99: pct(all, 99), received: received / ROUNDS, memPerConnKb: (after - before) / n };
    }
    return { mem: (after - before) / n, byTrigger };
  } finally {
    await Promise.all(procs.map((c) => request(c, { type: 'close' }, 'closed').catch(() => undefined)));
    for (const c of procs) c.kill();
  }
}

export async function main(): Promise<number> {
  const tmp = mkdtempSync(path.join(tmpdir(), 'roost-bench-stream-'));
  const tokenFile = path.join(tmp, 'token');
  let frameSize = 2000;
  let roost: Result;
  let roostLog: Result;
  let baseline: Result;
  let bare: Result;
  try {
    console.log(`streaming: ${CLIENTS} clients in ${PROCS} processes (${process.env.BENCH_STREAM_CLIENT === 'ws' ? "the ws package's client" : 'raw RFC 6455 clients on TCP sockets'}), ${ROUNDS} rounds`);
    const server = await startChildServer(path.join(dir, 'streaming-roost-server.ts'), { cpus: null, args: [tokenFile], timeoutMs: 120_000 });
    try {
      const token = readFileSync(tokenFile, 'utf8');
      const base = `http://127.0.0.1:${server.port}`;
      const m = await measure(server, `ws://127.0.0.1:${server.port}/api/v1/streaming?stream=public`, token, { rest: async (r) => {
        const res = await fetch(`${base}/api/v1/statuses`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ status: `Round ${r} of the streaming bench: one public status to every client. #bench` }),
        });
        if (res.status !== 200) throw new Error(`POST /api/v1/statuses → ${res.status}`);
        const json = await res.json();
        frameSize = JSON.stringify({ stream: ['public'], event: 'update', payload: JSON.stringify(json), id: '1' }).length;
      }, log: async () => {
        process.kill(server.pid, 'SIGUSR1');
      } });
      roost = m.byTrigger.rest;
      roostLog = m.byTrigger.log;
    } finally {
      await server.stop();
    }
    // The same frame size from a server that only fans out (the ws baseline, then bare uWS).
    const frame = JSON.stringify({ stream: ['public'], event: 'update', payload: 'x'.repeat(Math.max(0, frameSize - 60)), bench: true });
    const fanOutOnly = async (script: string): Promise<Result> => {
      const server = await startChildServer(path.join(dir, script), { cpus: null });
      try {
        return (await measure(server, `ws://127.0.0.1:${server.port}/api/v1/streaming`, undefined, { broadcast: async () => {
          const res = await fetch(`http://127.0.0.1:${server.port}/broadcast`, { method: 'POST', body: frame });
          if (res.status !== 202) throw new Error(`POST /broadcast → ${res.status}`);
        } })).byTrigger.broadcast;
      } finally {
        await server.stop();
      }
    };
    baseline = await fanOutOnly('streaming-ws-server.ts');
    bare = await fanOutOnly('streaming-uws-server.ts');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const f = (x: number) => `${x.toFixed(1)} ms`;
  console.log(
    table(
      ['', 'Roost', 'ws server', 'ratio', 'goal', 'bare uWS', 'bare uWS / ws'],
      [
        ['clients reached per round (event log → clients)', String(roostLog!.received), String(baseline.received), '', `${CLIENTS}`, String(bare!.received), ''],
        ['delivery p50 (event log → clients)', f(roostLog!.p50), f(baseline.p50), fmtRatio(roostLog!.p50 / baseline.p50), '', f(bare!.p50), fmtRatio(bare!.p50 / baseline.p50)],
        ['delivery p99 (event log → clients)', f(roostLog!.p99), f(baseline.p99), fmtRatio(roostLog!.p99 / baseline.p99), '≤ 0.5×', f(bare!.p99), fmtRatio(bare!.p99 / baseline.p99)],
        ['clients reached per round (REST POST → clients)', String(roost.received), String(baseline.received), '', `${CLIENTS}`, '', ''],
        ['delivery p50 (REST POST → clients, whole path)', f(roost.p50), f(baseline.p50), fmtRatio(roost.p50 / baseline.p50), '', '', ''],
        ['delivery p99 (REST POST → clients, whole path)', f(roost.p99), f(baseline.p99), fmtRatio(roost.p99 / baseline.p99), '', '', ''],
        ['memory per idle connection', `${roost.memPerConnKb.toFixed(2)} KB`, `${baseline.memPerConnKb.toFixed(2)} KB`, fmtRatio(roost.memPerConnKb / baseline.memPerConnKb), '≤ 0.35×', `${bare!.memPerConnKb.toFixed(2)} KB`, fmtRatio(bare!.memPerConnKb / baseline.memPerConnKb)],
      ],
    ),
  );
  console.log(`(frame: ${frameSize} bytes)`);
  return 0;
}
