// `npm run bench -- http`: requests/s, latency and server CPU per request of GET /api/v1/instance
// (~3 KB JSON) through
//   (a)  a bare uWebSockets.js hello world           — the ceiling (lib/bare-uws-server.ts)
//   (a') bare uWS calling the same handler, nothing else — the ceiling for this handler
//        (lib/bare-uws-handler-server.ts; works while createHandler returns json() synchronously)
//   (b)  plain node:http running the same handler     — the baseline (lib/node-http-server.ts)
//   (c)  the whole of Roost (startRoost on an embedded database): uWS, router, CORS, request id,
//        pino access log written as Roost writes it (batched once per event-loop turn), the
//        instance service and serializer (http-fullstack-server.ts)
//   (c'') the same, access log written the way pino does by default (one write per line)
//   (c') the same without the access log              — to show what the log line costs
// Each server runs in its own Node process; wrk (1 thread) drives it from another. Rounds are
// interleaved (a a' b c c'' c' a a' b …) and the median round counts, since neighbours on a shared
// machine make single runs noisy; "cpu/req" (server CPU time / requests served, from
// /proc/<pid>/stat) is the steadier figure.
// Goals: full/node >= 2.0 and full/bare >= 0.3 in req/s.
//
// Environment: BENCH_DURATION (s, default 5), BENCH_WARMUP (s, default 2), BENCH_CONNECTIONS
// (default 50), BENCH_ROUNDS (default 3), BENCH_PIN=1 to pin the server to CPU 1 and wrk to CPU 0.

import os from 'node:os';
import path from 'node:path';
import { startChildServer } from './lib/child.ts';
import { fmtInt, fmtMs, fmtRatio, table } from './lib/report.ts';
import { hasTaskset, requireWrk, runWrk, type WrkResult } from './lib/wrk.ts';

interface Target {
  key: 'bare' | 'bareHandler' | 'node' | 'full' | 'unbatched' | 'nolog';
  label: string;
  script: string;
  args?: string[];
  path: string;
}

interface Measured extends WrkResult {
  cpuUsPerReq: number | null;
}

const dir = import.meta.dirname;
const TARGETS: Target[] = [
  { key: 'bare', label: '(a) bare uWS hello world', script: path.join(dir, 'lib/bare-uws-server.ts'), path: '/' },
  { key: 'bareHandler', label: "(a') bare uWS + same handler", script: path.join(dir, 'lib/bare-uws-handler-server.ts'), path: '/api/v1/instance' },
  { key: 'node', label: '(b) node:http + same handler', script: path.join(dir, 'lib/node-http-server.ts'), path: '/api/v1/instance' },
  { key: 'full', label: '(c) Roost full stack', script: path.join(dir, 'http-fullstack-server.ts'), path: '/api/v1/instance' },
  { key: 'unbatched', label: "(c'') full, a write per log line", script: path.join(dir, 'http-fullstack-server.ts'), args: ['--log=sync'], path: '/api/v1/instance' },
  { key: 'nolog', label: "(c') full stack, no access log", script: path.join(dir, 'http-fullstack-server.ts'), args: ['--log=off'], path: '/api/v1/instance' },
];

function envNum(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

function median(results: Measured[]): Measured {
  const sorted = [...results].sort((a, b) => a.requestsPerSec - b.requestsPerSec);
  return sorted[Math.floor(sorted.length / 2)];
}

export async function main(_args: string[]): Promise<number> {
  requireWrk();
  const duration = envNum('BENCH_DURATION', 5);
  const warmup = envNum('BENCH_WARMUP', 2);
  const connections = envNum('BENCH_CONNECTIONS', 50);
  const rounds = envNum('BENCH_ROUNDS', 3);
  const pin = process.env.BENCH_PIN === '1' && hasTaskset() && os.availableParallelism() >= 2;
  const serverCpus = pin ? '1' : null;
  const wrkCpus = pin ? '0' : null;
  console.log(
    `http bench: wrk -t1 -c${connections} -d${duration}s (warm-up ${warmup}s), ${rounds} interleaved round(s), ` +
      `${pin ? 'server on CPU 1, wrk on CPU 0' : 'unpinned'}, Node ${process.version}, ${os.availableParallelism()} CPUs`,
  );

  const results = new Map<Target['key'], Measured[]>();
  for (let round = 0; round < rounds; round++) {
    for (const t of TARGETS) {
      const server = await startChildServer(t.script, { cpus: serverCpus, args: t.args });
      try {
        const url = `http://127.0.0.1:${server.port}${t.path}`;
        const check = await fetch(url);
        const body = await check.arrayBuffer();
        if (check.status !== 200) throw new Error(`${t.label}: GET ${t.path} answered ${check.status}`);
        if (round === 0) console.log(`  ${t.label}: GET ${t.path} → ${check.status}, ${body.byteLength} bytes`);
        await runWrk({ url, durationSec: warmup, connections, threads: 1, cpus: wrkCpus });
        const cpu0 = server.cpuMs();
        const r = await runWrk({ url, durationSec: duration, connections, threads: 1, cpus: wrkCpus });
        const cpu1 = server.cpuMs();
        if (r.errors > 0) console.log(`  warning: ${t.label} had ${r.errors} errors / non-2xx responses`);
        const cpuUsPerReq = cpu0 !== null && cpu1 !== null && r.requests > 0 ? ((cpu1 - cpu0) * 1000) / r.requests : null;
        const list = results.get(t.key) ?? [];
        list.push({ ...r, cpuUsPerReq });
        results.set(t.key, list);
      } finally {
        await server.stop();
      }
    }
  }

  const get = (k: Target['key']) => median(results.get(k)!);
  const bare = get('bare');
  const node = get('node');
  const full = get('full');
  const unbatched = get('unbatched');
  const nolog = get('nolog');
  const rows = TARGETS.map((t) => {
    const r = get(t.key);
    return [
      t.label,
      fmtInt(r.requestsPerSec),
      fmtMs(r.p50Ms),
      fmtMs(r.p99Ms),
      r.cpuUsPerReq === null ? '-' : `${r.cpuUsPerReq.toFixed(1)} us`,
      fmtRatio(r.requestsPerSec / node.requestsPerSec),
      fmtRatio(r.requestsPerSec / bare.requestsPerSec),
    ];
  });
  console.log('');
  console.log(table(['server', 'req/s', 'p50', 'p99', 'cpu/req', 'vs node', 'vs bare'], rows));
  if (rounds > 1) {
    console.log('');
    console.log('req/s per round: ' + TARGETS.map((t) => `${t.key} ${results.get(t.key)!.map((r) => fmtInt(r.requestsPerSec)).join(' / ')}`).join('; '));
  }
  console.log('');
  for (const [name, r] of [['full', full], ['full (unbatched log)', unbatched], ['full (no log)', nolog]] as const) {
    const vsNode = r.requestsPerSec / node.requestsPerSec;
    const vsBare = r.requestsPerSec / bare.requestsPerSec;
    const cpuRatio = r.cpuUsPerReq !== null && node.cpuUsPerReq !== null ? node.cpuUsPerReq / r.cpuUsPerReq : null;
    console.log(
      `${name.padEnd(18)}  vs node ${fmtRatio(vsNode)} (goal >= 2.00x: ${vsNode >= 2 ? 'met' : 'MISSED'})   ` +
        `vs bare ${fmtRatio(vsBare)} (goal >= 0.30x: ${vsBare >= 0.3 ? 'met' : 'MISSED'})` +
        (cpuRatio !== null ? `   CPU per request node/this ${fmtRatio(cpuRatio)}` : ''),
    );
  }
  return 0;
}
