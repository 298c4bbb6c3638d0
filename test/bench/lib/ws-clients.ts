// The client process of `npm run bench -- streaming` (forked with IPC; its own process so the
// 10,000 sockets do not share the server's file descriptor limit). Messages from the parent:
//   { type: 'connect', url, protocol?, n }  → opens n WebSocket clients (`ws` package), replies { type: 'connected', n }
//   { type: 'expect', t0 }                  → replies { type: 'latencies', ms: number[] } once every client got a
//                                             message after t0 (ms since t0, wall clock), or after 30 s
//   { type: 'close' }                       → closes every client, replies { type: 'closed' }

import WebSocket from 'ws';

const clients: WebSocket[] = [];
let waiting: { t0: number; got: number[]; timer: NodeJS.Timeout } | null = null;
const now = () => performance.timeOrigin + performance.now();

// Only the round's one event arrives while waiting (the stream carries nothing else), so a
// message is timed without being decoded: the clients cost as little as they can.
function onMessage(): void {
  if (!waiting) return;
  waiting.got.push(now() - waiting.t0);
  if (waiting.got.length === clients.length) finish();
}

function finish(): void {
  if (!waiting) return;
  clearTimeout(waiting.timer);
  const ms = waiting.got;
  waiting = null;
  process.send!({ type: 'latencies', ms });
}

async function connect(url: string, protocol: string | undefined, n: number): Promise<void> {
  const BATCH = 250;
  for (let i = 0; i < n; i += BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(BATCH, n - i) }, () =>
        new Promise<void>((resolve, reject) => {
          const ws = protocol ? new WebSocket(url, [protocol], { perMessageDeflate: false }) : new WebSocket(url, { perMessageDeflate: false });
          ws.once('open', () => {
            clients.push(ws);
            resolve();
          });
          ws.once('error', reject);
          ws.on('message', onMessage);
        }),
      ),
    );
  }
}

process.on('message', (msg: { type: string; url?: string; protocol?: string; n?: number; t0?: number }) => {
  if (msg.type === 'connect') {
    connect(msg.url!, msg.protocol, msg.n!).then(
      () => process.send!({ type: 'connected', n: clients.length }),
      (err: Error) => process.send!({ type: 'error', message: err.message }),
    );
  } else if (msg.type === 'expect') {
    waiting = { t0: msg.t0!, got: [], timer: setTimeout(finish, 30_000) };
  } else if (msg.type === 'close') {
    for (const c of clients) c.terminate();
    clients.length = 0;
    process.send!({ type: 'closed' });
  }
});
