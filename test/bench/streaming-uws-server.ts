// The transport's floor in `npm run bench -- streaming`: bare uWebSockets.js (the package Roost's
// streaming runs on), no application code. Every WebSocket client at /api/v1/streaming joins one
// topic; POST /broadcast answers 202 and publishes the body to it (one C++ publish, as Roost's hub
// does for a stream without exceptions). What Roost's fan-out can at best approach on this machine.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadUws } from '../../src/http/uws.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
// SIGUSR2: a full GC (the bench measures resident memory after one).
process.on('SIGUSR2', () => gc());

const uws = loadUws();
const port = Number(process.argv[2] ?? 0);
const app = uws.App();
app.ws('/api/v1/streaming', { idleTimeout: 0, maxBackpressure: 1 << 20, open: (ws) => void ws.subscribe('public') });
app.post('/broadcast', (res) => {
  const chunks: Buffer[] = [];
  res.onAborted(() => {});
  res.onData((chunk, last) => {
    chunks.push(Buffer.from(chunk.slice(0)));
    if (!last) return;
    res.cork(() => res.writeStatus('202 Accepted').end());
    app.publish('public', Buffer.concat(chunks).toString('utf8'), false, false);
  });
});
app.any('/*', (res) => void res.writeStatus('404 Not Found').end());
app.listen('127.0.0.1', port, (listenSocket) => {
  if (!listenSocket) throw new Error(`cannot listen on ${port}`);
  process.stdout.write(`LISTENING ${uws.us_socket_local_port(listenSocket)}\n`);
});
process.on('SIGTERM', () => {
  app.close();
  process.exit(0);
});
