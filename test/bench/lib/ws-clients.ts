// The client process of `npm run bench -- streaming` (forked with IPC; its own process so the
// 10,000 sockets do not share the server's file descriptor limit). Messages from the parent:
//   { type: 'connect', url, protocol?, n }  → opens n WebSocket clients, replies { type: 'connected', n }
//   { type: 'expect', t0 }                  → replies { type: 'latencies', ms: number[] } once every client got a
//                                             message after t0 (ms since t0, wall clock), or after 30 s
//   { type: 'close' }                       → closes every client, replies { type: 'closed' }
//
// Two kinds of client (BENCH_STREAM_CLIENT):
//   raw (default)  a WebSocket client on a bare TCP socket: the RFC 6455 handshake (the accept key
//                  checked), then frames read as they come (lengths, fragmentation, pings answered
//                  with masked pongs, close), a text or binary message timed when its last frame
//                  is complete. Nothing is decoded or validated beyond that, so a client costs a
//                  few microseconds per message: on two cores the clients share with the server,
//                  the instrument must cost little next to what it measures.
//   ws             the `ws` package's client (what the bench used first): it also validates the
//                  UTF-8 of every text message and copies it into a message event, which on these
//                  cores took most of the measured time for both servers alike.

import net from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import WebSocket from 'ws';

interface Client {
  terminate(): void;
}

const KIND = process.env.BENCH_STREAM_CLIENT === 'ws' ? 'ws' : 'raw';
const clients: Client[] = [];
let waiting: { t0: number; got: number[]; timer: NodeJS.Timeout } | null = null;
const now = () => performance.timeOrigin + performance.now();

// Only the round's one event arrives while waiting (the stream carries nothing else), so a
// message is timed without being decoded.
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

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const READ_BUFFER = Buffer.alloc(256 * 1024);

/** A masked client frame (RFC 6455 §5.3: a client masks every frame), payload ≤ 125 bytes. */
function clientFrame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const out = Buffer.alloc(6 + payload.length);
  out[0] = 0x80 | opcode;
  out[1] = 0x80 | payload.length;
  mask.copy(out, 2);
  for (let i = 0; i < payload.length; i++) out[6 + i] = payload[i]! ^ mask[i & 3]!;
  return out;
}

function rawClient(url: string, protocol: string | undefined): Promise<Client> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    // Read with `onread` into one buffer shared by every socket of the process (the callback is
    // synchronous; what a read leaves unfinished is copied out): no stream machinery and no
    // Buffer per read, which halved the clients' CPU per message on these two cores.
    const sock = net.connect({ host: u.hostname, port: Number(u.port), onread: { buffer: READ_BUFFER, callback: (n: number) => (onData(READ_BUFFER.subarray(0, n)), true) } });
    sock.setNoDelay(true);
    const key = randomBytes(16).toString('base64');
    const accept = createHash('sha1').update(key + GUID).digest('base64');
    let buf: Buffer = Buffer.alloc(0);
    let open = false;
    const client: Client = { terminate: () => sock.destroy() };
    sock.once('error', reject);
    sock.write(
      `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n${protocol ? `Sec-WebSocket-Protocol: ${protocol}\r\n` : ''}\r\n`,
    );
    const onData = (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      try {
        frames();
      } finally {
        // What is left points into the shared read buffer: copied before the next read.
        if (buf.length > 0 && buf.buffer === READ_BUFFER.buffer) buf = Buffer.from(buf);
      }
    };
    const frames = () => {
      if (!open) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        if (!/^HTTP\/1\.1 101 /.test(head) || !head.toLowerCase().includes(`sec-websocket-accept: ${accept.toLowerCase()}`)) {
          sock.destroy();
          reject(new Error(`handshake refused: ${head.split('\r\n')[0]}`));
          return;
        }
        open = true;
        buf = buf.subarray(end + 4);
        resolve(client);
      }
      // Frames (server frames are never masked).
      for (;;) {
        if (buf.length < 2) return;
        const fin = (buf[0]! & 0x80) !== 0;
        const opcode = buf[0]! & 0x0f;
        let len = buf[1]! & 0x7f;
        let at = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          at = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          at = 10;
        }
        if (buf.length < at + len) return;
        const payload = buf.subarray(at, at + len);
        buf = buf.subarray(at + len);
        if (opcode === 0x9) sock.write(clientFrame(0xa, Buffer.from(payload)));
        else if (opcode === 0x8) sock.end(clientFrame(0x8, Buffer.alloc(0)));
        else if (opcode === 0x1 || opcode === 0x2 || opcode === 0x0) {
          // A message's frames: timed when the last (FIN) one is complete.
          if (fin) onMessage();
        }
      }
    };
  });
}

function wsClient(url: string, protocol: string | undefined): Promise<Client> {
  return new Promise((resolve, reject) => {
    const ws = protocol ? new WebSocket(url, [protocol], { perMessageDeflate: false }) : new WebSocket(url, { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    ws.on('message', onMessage);
  });
}

async function connect(url: string, protocol: string | undefined, n: number): Promise<void> {
  const BATCH = 250;
  const open = KIND === 'ws' ? wsClient : rawClient;
  for (let i = 0; i < n; i += BATCH) {
    const batch = await Promise.all(Array.from({ length: Math.min(BATCH, n - i) }, () => open(url, protocol)));
    clients.push(...batch);
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
