/**
 * One pino root logger per Roost instance; modules take children (`log.child({ module })`).
 * Fedify logs through LogTape, which is configured once per process: its records are routed into
 * the first instance's pino logger.
 */
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
      // Fedify logs every request it answers (a 404 as a warning); Roost's access log already has
      // each one, with its id. Its errors (a handler that threw) still come through.
      { category: ['fedify', 'federation', 'http'], sinks: [], lowestLevel: 'error' },
      { category: ['logtape', 'meta'], sinks: [], lowestLevel: 'warning' },
    ],
  });
}
