/**
 * WebSocket routes in src/http, on the real uWS server: a client that stops reading is dropped
 * once its unsent bytes pass the route's bound (not buffered forever), the refusal of an upgrade is
 * an ordinary HTTP answer, the first offered protocol is echoed back, and a publish goes to the
 * topic's members of the moment (what the streaming hub relies on to pass a few members by).
 */
import { describe, it, expect } from 'vitest';
import net from 'node:net';
import pino from 'pino';
import { startHttpServer } from '../../src/http/index.ts';
import type { WsPeer } from '../../src/http/index.ts';

const log = pino({ level: 'silent' });

function handshake(port: number, path: string, extra = ''): Promise<{ socket: net.Socket; head: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
      );
    });
    let head = '';
    const onData = (d: Buffer) => {
      head += d.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end >= 0) {
        socket.off('data', onData);
        resolve({ socket, head: head.slice(0, end) });
      }
    };
    socket.on('data', onData);
    socket.on('error', reject);
  });
}

describe('WebSocket routes in src/http', () => {
  it('drops a client that stops reading once its buffer passes the bound', async () => {
    let closedWith: number | null = null;
    let sent = 0;
    let refusedSend = false;
    const server = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      log,
      accessLog: false,
      ws: [
        {
          pattern: '/ws',
          maxBackpressureBytes: 256 * 1024,
          accept: () => ({
            open(peer: WsPeer) {
              const frame = 'x'.repeat(64 * 1024);
              // Far more than the socket buffers and the bound together: sending stops being accepted.
              for (let i = 0; i < 4000; i++) {
                if (!peer.send(frame)) {
                  refusedSend = true;
                  break;
                }
                sent++;
              }
            },
            close(_peer: WsPeer, code: number) {
              closedWith = code;
            },
          }),
        },
      ],
    });
    try {
      const { socket, head } = await handshake(server.port, '/ws');
      expect(head).toMatch(/^HTTP\/1\.1 101/);
      socket.pause(); // never reads again
      for (let i = 0; i < 100 && closedWith === null; i++) await new Promise((r) => setTimeout(r, 20));
      expect(refusedSend).toBe(true);
      expect(closedWith).not.toBeNull();
      expect(sent).toBeLessThan(4000);
      socket.destroy();
    } finally {
      await server.close({ drainMs: 0 });
    }
  });

  it('refuses an upgrade with the Response accept returns, and echoes the first protocol', async () => {
    const server = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      log,
      accessLog: false,
      ws: [
        {
          pattern: '/ws',
          accept: (ctx) => (ctx.query.ok === '1' ? {} : Response.json({ error: 'Missing access token' }, { status: 401 })),
        },
      ],
    });
    try {
      const refused = await handshake(server.port, '/ws');
      expect(refused.head).toMatch(/^HTTP\/1\.1 401/);
      refused.socket.destroy();
      const ok = await handshake(server.port, '/ws?ok=1', 'Sec-WebSocket-Protocol: token123, other\r\n');
      expect(ok.head).toMatch(/^HTTP\/1\.1 101/);
      expect(ok.head.toLowerCase()).toContain('sec-websocket-protocol: token123');
      ok.socket.destroy();
    } finally {
      await server.close({ drainMs: 0 });
    }
  });

  it('publishes to the members of the moment: a socket that leaves a topic and joins it again around a publish is passed by, and what was queued for it before still goes out, in order', async () => {
    const peers: WsPeer[] = [];
    const server = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      log,
      accessLog: false,
      ws: [{ pattern: '/ws', accept: () => ({ open: (peer: WsPeer) => void peers.push(peer) }) }],
    });
    try {
      const read = (socket: net.Socket) => {
        const texts: string[] = [];
        let buf = Buffer.alloc(0);
        socket.on('data', (d: Buffer) => {
          buf = Buffer.concat([buf, d]);
          // Unmasked server frames of fewer than 126 bytes: [0x81, length, …payload].
          while (buf.length >= 2 && buf.length >= 2 + buf[1]!) {
            texts.push(buf.subarray(2, 2 + buf[1]!).toString('utf8'));
            buf = buf.subarray(2 + buf[1]!);
          }
        });
        return texts;
      };
      const a = await handshake(server.port, '/ws');
      const b = await handshake(server.port, '/ws');
      const got = [read(a.socket), read(b.socket)];
      for (let i = 0; i < 50 && peers.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      for (const p of peers) p.subscribe('t');
      // One turn of the event loop: `first` is still queued for both when peers[0] leaves (its only topic).
      server.publish('t', 'first');
      peers[0]!.unsubscribe('t');
      server.publish('t', 'others only');
      peers[0]!.subscribe('t');
      peers[0]!.send('its own');
      server.publish('t', 'everyone');
      for (let i = 0; i < 50 && (got[0]!.length < 3 || got[1]!.length < 3); i++) await new Promise((r) => setTimeout(r, 10));
      expect(got[0]).toEqual(['first', 'its own', 'everyone']);
      expect(got[1]).toEqual(['first', 'others only', 'everyone']);
      a.socket.destroy();
      b.socket.destroy();
    } finally {
      await server.close({ drainMs: 0 });
    }
  });
});
