// Server (b) of `npm run bench -- http`: plain node:http running the SAME handler as the full
// stack (createHandler from ../http-fullstack-server.ts), through the thinnest reasonable adapter
// from node's req/res to the handler's context and WHATWG Response — what Roost would be on
// node:http. No router, CORS, request id or access log: only what the handler needs.
// Prints `LISTENING <port>`.

import http from 'node:http';
import pino from 'pino';
import type { RequestContext } from '../../../src/http/index.ts';
import { createHandler } from '../http-fullstack-server.ts';

const handler = await createHandler();
const log = pino({ level: 'silent' });
const port = Number(process.argv[2] ?? 0);

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  const controller = new AbortController();
  res.on('close', () => { if (!res.writableFinished) controller.abort(); });
  const ctx = {
    method: req.method ?? 'GET',
    path: url.pathname,
    url,
    get headers(): Headers { return new Headers(req.headers as Record<string, string>); },
    header: (name: string) => (req.headers[name] as string | undefined) ?? null,
    get request(): Request { return new Request(url, { method: req.method, headers: new Headers(req.headers as Record<string, string>) }); },
    params: {},
    query: {},
    body: {},
    input: {},
    files: {},
    reqId: '',
    log,
    signal: controller.signal,
    remoteAddress: req.socket.remoteAddress ?? '',
    state: {},
  } as unknown as RequestContext;
  Promise.resolve(handler(ctx)).then(async (response) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of response.headers) headers[k] = v;
    const body = await response.text();
    res.writeHead(response.status, headers);
    res.end(body);
  }, (err) => {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: String(err) }));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`LISTENING ${typeof addr === 'object' && addr ? addr.port : port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
