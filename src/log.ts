/**
 * One pino root logger per Roost instance; modules take children (`log.child({ module })`).
 * Fedify logs through LogTape, which is configured once per process: its records are routed into
 * the first instance's pino logger.
 */
import { writeSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import { configureSync, type LogRecord } from '@logtape/logtape';
import type { LogLevel } from '../config/index.ts';

export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return pino({ level, base: { app: 'roost' } }, destination ?? batchedStdout());
}

/**
 * Log lines written once per event-loop turn instead of once per line: one write syscall for all
 * the lines a turn produced (the access log of a busy server is dozens of lines a turn). pino's
 * default writes each line synchronously; its async mode was slower here. Measured in
 * test/bench/http (the "batched" row). Lines pending at exit are flushed.
 */
export function batchedDestination(fd: number): pino.DestinationStream & { flushSync(): void } {
  let pending: string[] = [];
  let scheduled = false;
  const flushSync = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const data = pending.join('');
    pending = [];
    writeSync(fd, data);
  };
  flushAtExit.add(flushSync);
  return {
    write(line: string) {
      pending.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flushSync);
      }
    },
    flushSync,
  };
}

const flushAtExit = new Set<() => void>();
process.once('exit', () => {
  for (const flush of flushAtExit) flush();
});

let stdoutDestination: (pino.DestinationStream & { flushSync(): void }) | undefined;
function batchedStdout() {
  return (stdoutDestination ??= batchedDestination(1));
}

let logtapeConfigured = false;

const LEVELS: Record<string, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warning: 'warn',
  error: 'error',
  fatal: 'fatal',
};

export function routeFedifyLogs(log: Logger): void {
  if (logtapeConfigured) return;
  logtapeConfigured = true;
  const fedifyLog = log.child({ module: 'fedify' });
  configureSync({
    reset: true,
    sinks: {
      pino: (record: LogRecord) => {
        const msg = record.message.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join('');
        fedifyLog[LEVELS[record.level] ?? 'info']({ category: record.category.join('.'), ...record.properties }, msg);
      },
    },
    loggers: [
      { category: 'fedify', sinks: ['pino'], lowestLevel: 'warning' },
      { category: ['logtape', 'meta'], sinks: [], lowestLevel: 'warning' },
    ],
  });
}
