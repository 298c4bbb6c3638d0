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
import { prettyFactory, isColorSupported } from 'pino-pretty';
import { configureSync, type LogRecord } from '@logtape/logtape';
import type { LogFormat, LogLevel } from '../config/index.ts';

/**
 * `format`: 'json' (one JSON object a line, for log collectors), 'pretty' (a time, the level's name
 * and the message, for a person at a terminal), or null: pretty when stdout is a terminal.
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream, format: LogFormat | null = null): Logger {
  return pino({ level, base: { app: 'roost' } }, destination ?? stdoutDestination(resolveLogFormat(format, process.stdout.isTTY === true)));
}

export function resolveLogFormat(format: LogFormat | null, isTTY: boolean): LogFormat {
  return format ?? (isTTY ? 'pretty' : 'json');
}

/** pino's JSON line → a line for people: "[16:04:05.123] INFO: (http) request {…}". */
export function prettyLine(colorize = false): (line: string) => string {
  return prettyFactory({
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,app,module',
    messageFormat: '{if module}({module}) {end}{msg}',
    singleLine: true,
  });
}

/**
 * Log lines written once per event-loop turn instead of once per line: one write syscall for all
 * the lines a turn produced (the access log of a busy server is dozens of lines a turn). pino's
 * default writes each line synchronously; its async mode was slower here. Measured in
 * test/bench/http (the "batched" row). Lines pending at exit are flushed.
 */
export function batchedDestination(fd: number, format?: (line: string) => string): pino.DestinationStream & { flushSync(): void } {
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
      pending.push(format ? format(line) : line);
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

const stdoutDestinations = new Map<LogFormat, pino.DestinationStream & { flushSync(): void }>();
function stdoutDestination(format: LogFormat) {
  let d = stdoutDestinations.get(format);
  if (!d) {
    d = format === 'pretty' ? batchedDestination(1, prettyLine(isColorSupported)) : batchedDestination(1);
    stdoutDestinations.set(format, d);
  }
  return d;
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

/**
 * Fedify's records that are harmless here, logged at debug rather than their own level: the
 * setup hints it writes on every fetch of an actor that lacks a collection or a personal inbox on
 * purpose (the instance actor has neither followers, outbox nor featured: about a dozen warnings
 * per fetch otherwise).
 */
function isHarmless(record: LogRecord, msg: string): boolean {
  return record.category.join('.') === 'fedify.federation.actor' && record.level === 'warning' && msg.startsWith('You configured ');
}

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
        const level = isHarmless(record, msg) ? 'debug' : (LEVELS[record.level] ?? 'info');
        target[level]({ category: record.category.join('.'), ...record.properties }, msg);
      },
    },
    loggers: [
      { category: 'fedify', sinks: ['pino'], lowestLevel: 'warning' },
      // Fedify logs every request it answers (a 404 as a warning); Roost's access log already has
      // each one, with its id. Its errors (a handler that threw) still come through.
      { category: ['fedify', 'federation', 'http'], sinks: [], lowestLevel: 'error' },
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
