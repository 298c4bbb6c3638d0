/**
 * SSE framing on the wire, read from a raw socket as a line-reading HTTP client reads it (Python's
 * requests, curl): a chunk of the chunked body counts only once its closing CRLF has arrived. Each
 * event must be whole in a chunk that is complete on arrival, not held until the next write (the
 * next heartbeat, up to 15 s later).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import net from 'node:net';
import { eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { SSE_HEARTBEAT_MS } from '../../src/streaming/routes.ts';

let roost: TestRoost;
let alice: TestUser;
beforeAll(async () => {
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
}, 60_000);
afterAll(async () => roost?.close());

/** A raw HTTP/1.1 reader: the head, and the body's chunks that are complete (data and CRLF). */
function rawSse(path: string, token: string) {
  let raw = Buffer.alloc(0);
  const socket = net.connect(roost.port, '127.0.0.1', () => {
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`);
  });
  socket.on('data', (d: Buffer) => (raw = Buffer.concat([raw, d])));
  return {
    socket,
    head: () => {
      const end = raw.indexOf('\r\n\r\n');
      return end < 0 ? null : raw.subarray(0, end).toString('latin1');
    },
    /** The complete chunks so far, as a chunked decoder that reads the CRLF before handing a chunk on. */
    chunks: (): string[] => {
      const out: string[] = [];
      let at = raw.indexOf('\r\n\r\n');
      if (at < 0) return out;
      at += 4;
      for (;;) {
        const lineEnd = raw.indexOf('\r\n', at);
        if (lineEnd < 0) return out;
        const size = parseInt(raw.subarray(at, lineEnd).toString('latin1'), 16);
        const dataAt = lineEnd + 2;
        if (raw.length < dataAt + size + 2) return out;
        expect(raw.subarray(dataAt + size, dataAt + size + 2).toString('latin1')).toBe('\r\n');
        out.push(raw.subarray(dataAt, dataAt + size).toString('utf8'));
        at = dataAt + size + 2;
      }
    },
  };
}

describe('SSE chunks', () => {
  it('carries each event whole in a chunk that is complete when it arrives', async () => {
    const sse = rawSse('/api/v1/streaming/public/local', alice.token);
    try {
      const head = await eventually(async () => sse.head(), 10_000, 'the response head');
      expect(head).toMatch(/^HTTP\/1\.1 200 /);
      expect(head.toLowerCase()).toContain('content-type: text/event-stream');
      expect(head.toLowerCase()).toContain('transfer-encoding: chunked');
      // The opening comment is complete at once, before any event.
      await eventually(async () => sse.chunks().includes(':)\n'), 10_000, 'the opening comment');
      await settled(roost);
      const posted = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'on the wire' } });
      expect(posted.status).toBe(200);
      // Waiting less than a heartbeat: before the fix the event's chunk only completed with the next write.
      const event = await eventually(
        async () => sse.chunks().find((c) => /^(id: \d+\n)?event: update\n/.test(c)),
        SSE_HEARTBEAT_MS - 3_000,
        'the update event in a complete chunk',
      );
      const m = /^(?:id: \d+\n)?event: update\ndata: (\{.*\})\n\n$/s.exec(event);
      expect(m).not.toBeNull();
      expect(JSON.parse(m![1]!).id).toBe(posted.body.id);
    } finally {
      sse.socket.destroy();
    }
  });
});
