/**
 * Writes a run's trace (./trace-format.ts): one JSON object per line, stamped with the lab clock
 * (`t`) and the wall clock (`wall`), appended in the order the lab saw things happen.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import type { Clock } from '../lib/clock.ts';
import type { TraceRecord } from './trace-format.ts';

/** A record as its writer gives it: the writer stamps the times. */
export type TraceInput = TraceRecord extends infer R ? (R extends TraceRecord ? Omit<R, 't' | 'wall'> : never) : never;

export interface TraceWriter {
  write(record: TraceInput): void;
  /** Every record written so far (kept for the run's report). */
  readonly records: readonly TraceRecord[];
  close(): Promise<void>;
}

export function createTraceWriter(file: string | null, clock: () => Clock): TraceWriter {
  const out: WriteStream | null = file ? createWriteStream(file, { flags: 'w' }) : null;
  const records: TraceRecord[] = [];
  return {
    records,
    write(record) {
      const full = { t: clock().now().toISOString(), wall: new Date().toISOString(), ...record } as TraceRecord;
      records.push(full);
      out?.write(`${JSON.stringify(full)}\n`);
    },
    close: () => new Promise<void>((resolve, reject) => (out ? out.end((err?: Error | null) => (err ? reject(err) : resolve())) : resolve())),
  };
}
