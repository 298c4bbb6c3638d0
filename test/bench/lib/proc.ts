// A process's tree and memory, from /proc (Linux): what the footprint and lab benches measure.
import { readFileSync, readdirSync } from 'node:fs';

/** The process and every descendant of it. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      /* gone */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    out.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return out;
}

/** A `Name:   123 kB` field of a /proc file, in KiB (0 when the process is gone). */
export function procKib(file: string, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** The PSS of processes, in MB: a shared page counts once, split among those that map it. */
export function pssMb(pids: number[]): number {
  return pids.reduce((sum, p) => sum + procKib(`/proc/${p}/smaps_rollup`, 'Pss'), 0) / 1024;
}
