/**
 * A trace without what differs between two runs of one seed: the wall clock, generated ids (a
 * status's snowflake, a follow's id, key fragments) and the order of records within one instant
 * of the lab clock (work done side by side). Two runs' canonical traces are equal.
 */
import type { TraceRecord } from './trace-format.ts';

const GENERATED = /\d{6,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

export function canonicalTrace(records: readonly TraceRecord[]): string[] {
  const lines = records.map((r) => {
    const { wall: _wall, ...rest } = r;
    if (rest.kind === 'run.end') return JSON.stringify({ ...rest, wallMs: null });
    return JSON.stringify(rest).replace(GENERATED, '#');
  });
  // Stable within an instant: sort the lines of each `t` (records are in time order already).
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const t = records[i]!.t;
    let j = i;
    while (j < lines.length && records[j]!.t === t) j++;
    out.push(...lines.slice(i, j).sort());
    i = j;
  }
  return out;
}
