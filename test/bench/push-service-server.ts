// A loopback push service for `npm run bench -- push`, in its own process (the push service is
// another machine in real life): answers 201 to every POST, counts them, keeps a sample (the first
// 20, then about 1 in 500) for the bench to decrypt and verify. GET /stats returns the count and
// the sample; GET /reset clears both. Prints `LISTENING <port>`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

let received = 0;
let samples: { path: string; auth: string; body: string }[] = [];
const server = http.createServer((req, res) => {
  if (req.method === 'GET') {
    if (req.url === '/reset') {
      received = 0;
      samples = [];
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ received, samples }));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    received++;
    if (samples.length < 20 || Math.random() < 0.002) samples.push({ path: req.url!, auth: String(req.headers.authorization), body: Buffer.concat(chunks).toString('base64') });
    res.writeHead(201).end();
  });
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
