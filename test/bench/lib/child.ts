// Start a server script in its own Node process (the same Node 24 binary) and wait for its
// `LISTENING <port>` line; stop() sends SIGTERM and waits (then SIGKILL after 3 s).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface ChildServer {
  port: number;
  pid: number;
  /** CPU time (user + system) the server process has used so far, in ms; null where unknown. */
  cpuMs(): number | null;
  stop(): Promise<void>;
}

/** utime + stime of a Linux process from /proc/<pid>/stat, in ms (null elsewhere). */
export function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

const CLOCK_TICKS = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(r.stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

export function startChildServer(script: string, opts: { cpus: string | null; args?: string[]; timeoutMs?: number }): Promise<ChildServer> {
  // BENCH_CPU_PROF=DIR: each server writes a V8 CPU profile there when it exits (open it in
  // Chrome's DevTools), to see where a server's time per request goes.
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const nodeArgs = [...prof, script, '0', ...(opts.args ?? [])];
  const [cmd, argv] = opts.cpus !== null ? ['taskset', ['-c', opts.cpus, process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
  const child: ChildProcess = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not print LISTENING within ${opts.timeoutMs ?? 60_000} ms; output: ${out}`));
    }, opts.timeoutMs ?? 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code}) before listening; output: ${out}`));
    });
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      out += d;
      const m = /LISTENING (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve({
          port: Number(m[1]),
          pid: child.pid!,
          cpuMs: () => processCpuMs(child.pid!),
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done();
              const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
              child.once('exit', () => {
                clearTimeout(kill);
                done();
              });
              child.kill('SIGTERM');
            }),
        });
      }
    });
  });
}
