// Test helpers: a real uWS server on port 0 with a capturing pino logger.

import pino from 'pino';
import { startHttpServer, type HttpServer, type HttpServerOptions, type Router } from '../../src/http/index.ts';

export interface LogLine {
  level: number;
  msg?: string;
  module?: string;
  [k: string]: unknown;
}

export interface TestServer {
  server: HttpServer;
  base: string;
  logs: LogLine[];
  close(): Promise<void>;
}

export async function startTestServer(router: Router, opts: Partial<HttpServerOptions> = {}): Promise<TestServer> {
  const logs: LogLine[] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void logs.push(JSON.parse(s) as LogLine) });
  const server = await startHttpServer({ host: '127.0.0.1', port: 0, router, log, ...opts });
  return {
    server,
    base: `http://127.0.0.1:${server.port}`,
    logs,
    close: () => server.close({ drainMs: 1000 }),
  };
}

/** Poll until `fn` returns true (or fail after `ms`). */
export async function waitFor(fn: () => boolean, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > until) throw new Error('timed out waiting for condition');
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
