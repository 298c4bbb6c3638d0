/**
 * The access log line, written straight to the logger's destination in pino's own format
 * (`{"level":30,"time":…,<bindings>,"reqId":…,"msg":"request"}`). pino's general path (bindings
 * merge, generic serialisation) costs ~2 µs a line in a tight loop and ~7 µs a request under load
 * (test/bench/http); this costs a template string. Falls back to pino when the logger is not a
 * plain pino logger or info is disabled.
 */
import pino, { type Logger } from 'pino';

export type AccessLogWriter = (reqId: string, method: string, path: string, status: number, ms: number, aborted: boolean) => void;

export function createAccessLogWriter(log: Logger): AccessLogWriter {
  const stream = (log as unknown as Record<symbol, { write(s: string): void } | undefined>)[pino.symbols.streamSym];
  const fallback: AccessLogWriter = (reqId, method, path, status, ms, aborted) => {
    if (aborted) log.info({ reqId, method, path, status, ms, aborted: true }, 'request');
    else log.info({ reqId, method, path, status, ms }, 'request');
  };
  if (!stream || typeof stream.write !== 'function') return fallback;
  const bindings = JSON.stringify(log.bindings()).slice(1, -1);
  const prefix = `{"level":${pino.levels.values.info}`;
  const mid = bindings ? `,${bindings}` : '';
  return (reqId, method, path, status, ms, aborted) => {
    if (!log.isLevelEnabled('info')) return;
    stream.write(
      `${prefix},"time":${Date.now()}${mid},"reqId":${JSON.stringify(reqId)},"method":${JSON.stringify(method)},` +
        `"path":${JSON.stringify(path)},"status":${status},"ms":${ms}${aborted ? ',"aborted":true' : ''},"msg":"request"}\n`,
    );
  };
}
