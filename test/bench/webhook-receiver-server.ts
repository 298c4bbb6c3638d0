// A loopback webhook receiver for `npm run bench -- webhooks`, in its own process: verifies the
// X-Hub-Signature of every POST (HMAC-SHA256 with the secret of the webhook its path names:
// /hook/<secret>), answers 200, counts the good and the bad ones and keeps the bodies of the
// latest round. GET /stats returns { received, bad }; GET /bodies the bodies kept; GET /reset clears.
// Prints `LISTENING <port>`.
import http from 'node:http';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';

let received = 0;
let bad = 0;
let bodies: string[] = [];
const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  if (req.method === 'GET') {
    if (req.url === '/reset') {
      received = 0;
      bad = 0;
      bodies = [];
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.url === '/bodies' ? bodies : { received, bad }));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const secret = decodeURIComponent((req.url ?? '').split('/').pop() ?? '');
    const expected = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    if (req.headers['x-hub-signature'] === expected) received++;
    else bad++;
    bodies.push(body.toString('utf8'));
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
