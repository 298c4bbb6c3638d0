/**
 * One pino root logger per Roost instance; modules take children (`log.child({ module })`).
 * Fedify logs through LogTape, which is configured once per process, with one sink: each record
 * goes to the logger of the instance whose work produced it. An instance runs its Fedify work
 * (the requests Fedify answers, its queues, its effects) inside `inInstanceLog(log, …)`, an
 * AsyncLocalStorage scope the sink reads; a record from outside any scope (none is expected) goes
 * to the most recently started instance still running.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
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
/** The Fedify child logger of the instance whose work is running. */
const instanceScope = new AsyncLocalStorage<Logger>();
/** Root logger → its Fedify child, for every running instance (last one: the fallback). */
const fedifyLoggers = new Map<Logger, Logger>();

const LEVELS: Record<string, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warning: 'warn',
  error: 'error',
  fatal: 'fatal',
};

/** Registers `log` as an instance's logger for Fedify's records (and configures LogTape once). */
export function routeFedifyLogs(log: Logger): void {
  if (!fedifyLoggers.has(log)) fedifyLoggers.set(log, log.child({ module: 'fedify' }));
  if (logtapeConfigured) return;
  logtapeConfigured = true;
  configureSync({
    reset: true,
    sinks: {
      pino: (record: LogRecord) => {
        const target = instanceScope.getStore() ?? [...fedifyLoggers.values()].at(-1);
        if (!target) return;
        const msg = record.message.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join('');
        target[LEVELS[record.level] ?? 'info']({ category: record.category.join('.'), ...record.properties }, msg);
      },
    },
    loggers: [
      { category: 'fedify', sinks: ['pino'], lowestLevel: 'warning' },
      { category: ['logtape', 'meta'], sinks: [], lowestLevel: 'warning' },
    ],
  });
}

/** Runs `fn` (and everything it starts) as work of the instance whose logger is `log`. */
export function inInstanceLog<T>(log: Logger, fn: () => T): T {
  const fedify = fedifyLoggers.get(log) ?? log.child({ module: 'fedify' });
  return instanceScope.run(fedify, fn);
}

/** The instance stopped: its logger no longer receives Fedify's records. */
export function forgetInstanceLog(log: Logger): void {
  fedifyLoggers.delete(log);
}
