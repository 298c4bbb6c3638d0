// The baseline of `npm run bench -- streaming`: a WebSocket server on the Node `ws` package (what
// Mastodon's streaming server uses) that, on POST /broadcast, sends the body (a status frame of
// the size Roost sends) to every connected client, as a streaming server fans out one event.

import http from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
// SIGUSR2: a full GC (the bench measures resident memory after one).
process.on('SIGUSR2', () => gc());

const port = Number(process.argv[2] ?? 0);
const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/broadcast') {
    res.writeHead(404).end();
    return;
  }
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (d: string) => (body += d));
  req.on('end', () => {
    res.writeHead(202).end();
    for (const c of clients) c.send(body);
  });
});
const wss = new WebSocketServer({ server, path: '/api/v1/streaming' });
const clients = new Set<WebSocket>();
wss.on('connection', (ws) => {
  clients.add(ws);
  ws.on('close', () => clients.delete(ws));
  ws.on('error', () => clients.delete(ws));
});
server.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`LISTENING ${typeof addr === 'object' && addr ? addr.port : port}\n`);
});
process.on('SIGTERM', () => {
  for (const c of clients) c.terminate();
  server.close(() => process.exit(0));
});
