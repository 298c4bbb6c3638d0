// wrk driver: availability check, run, parse "Requests/sec" and the latency distribution.

import { execFile, spawnSync } from 'node:child_process';

export interface WrkResult {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Non-2xx/3xx responses plus socket errors; a valid run has 0. */
  errors: number;
}

export interface WrkOptions {
  url: string;
  durationSec: number;
  connections: number;
  threads: number;
  /** CPU list for taskset (e.g. '0'), or null to run unpinned. */
  cpus: string | null;
  /** Request headers, as `Name: value`. */
  headers?: string[];
  /** A wrk Lua script (e.g. one that varies the path per request). */
  script?: string;
}

export function hasWrk(): boolean {
  return spawnSync('wrk', ['--version']).error === undefined;
}

/** Exit with the install hint when wrk is missing. */
export function requireWrk(): void {
  if (!hasWrk()) {
    console.error('wrk not found: apt-get install wrk');
    process.exit(1);
  }
}

export function hasTaskset(): boolean {
  return spawnSync('taskset', ['--version']).error === undefined;
}

function toMs(value: string, unit: string): number {
  const v = Number(value);
  switch (unit) {
    case 'us': return v / 1000;
    case 'ms': return v;
    case 's': return v * 1000;
    case 'm': return v * 60_000;
    default: return Number.NaN;
  }
}

export function parseWrk(out: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const p50 = /^\s+50%\s+([\d.]+)(us|ms|s|m)\s*$/m.exec(out);
  const p99 = /^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$/m.exec(out);
  const total = /(\d+) requests in/.exec(out);
  if (!rps || !p99 || !p50 || !total) throw new Error(`could not parse wrk output:\n${out}`);
  let errors = 0;
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out);
  if (non2xx) errors += Number(non2xx[1]);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  if (sock) errors += Number(sock[1]) + Number(sock[2]) + Number(sock[3]) + Number(sock[4]);
  return {
    requestsPerSec: Number(rps[1]),
    p50Ms: toMs(p50[1], p50[2]),
    p99Ms: toMs(p99[1], p99[2]),
    requests: Number(total[1]),
    errors,
  };
}

export function runWrk(opts: WrkOptions): Promise<WrkResult> {
  const args = [`-t${opts.threads}`, `-c${opts.connections}`, `-d${opts.durationSec}s`, '--latency'];
  for (const h of opts.headers ?? []) args.push('-H', h);
  if (opts.script) args.push('-s', opts.script);
  args.push(opts.url);
  const [cmd, argv] = opts.cpus !== null ? ['taskset', ['-c', opts.cpus, 'wrk', ...args]] : ['wrk', args];
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { timeout: (opts.durationSec + 30) * 1000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`wrk failed: ${err.message}\n${stderr}`));
      else {
        try {
          resolve(parseWrk(stdout));
        } catch (e) {
          reject(e);
        }
      }
    });
  });
}

/**
 * One measured wrk run against a child server after a warm-up, with the child's CPU time per
 * request (NaN when the platform cannot tell it). What the reads, timelines and pages benches
 * each take per (server, route, round).
 */
export async function runWrkWithCpu(
  child: { cpuMs(): number | null },
  opts: Omit<WrkOptions, 'durationSec'>,
  warmupSec: number,
  durationSec: number,
): Promise<WrkResult & { cpuUsPerReq: number }> {
  await runWrk({ ...opts, durationSec: warmupSec });
  const cpu0 = child.cpuMs();
  const wrk = await runWrk({ ...opts, durationSec });
  const cpu1 = child.cpuMs();
  return { ...wrk, cpuUsPerReq: cpu0 !== null && cpu1 !== null && wrk.requests > 0 ? ((cpu1 - cpu0) * 1000) / wrk.requests : NaN };
}
