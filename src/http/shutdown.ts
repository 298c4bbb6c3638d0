// Process signal handling for graceful shutdown (used by src/main.ts).

import type { Logger } from 'pino';

export interface ShutdownOptions {
  log: Logger;
  /** Signals to handle (default SIGTERM and SIGINT). */
  signals?: NodeJS.Signals[];
  /** Exit with code 1 if shutdown has not finished after this long (default 30 s). */
  forceAfterMs?: number;
  /** What is still running when the drain is abandoned (logged with the error). */
  abandoned?: () => unknown;
  /** Called with the exit code when shutdown is over (default process.exit). */
  exit?: (code: number) => void;
}

/**
 * On the first SIGTERM/SIGINT run `shutdown` once (e.g. close the HTTP server with a drain, then
 * the queue, then the database) and exit 0, or 1 if it threw; a second signal, or `forceAfterMs`,
 * exits 1 at once. Returns a function that removes the handlers.
 */
export function handleShutdownSignals(shutdown: (signal: NodeJS.Signals) => Promise<void>, opts: ShutdownOptions): () => void {
  const signals = opts.signals ?? ['SIGTERM', 'SIGINT'];
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const log = opts.log.child({ module: 'shutdown' });
  let started = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (started) {
      log.warn({ signal }, 'second signal: exiting now');
      exit(1);
      return;
    }
    started = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      let abandoned: unknown;
      try {
        abandoned = opts.abandoned?.();
      } catch (err) {
        abandoned = String(err);
      }
      log.error({ forceAfterMs: opts.forceAfterMs ?? 30_000, abandoned }, 'shutdown took too long: exiting, abandoning what is still running');
      exit(1);
    }, opts.forceAfterMs ?? 30_000);
    force.unref();
    shutdown(signal).then(
      () => {
        clearTimeout(force);
        log.info('shutdown complete');
        exit(0);
      },
      (err) => {
        clearTimeout(force);
        log.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  for (const s of signals) process.on(s, onSignal);
  return () => {
    for (const s of signals) process.off(s, onSignal);
  };
}
