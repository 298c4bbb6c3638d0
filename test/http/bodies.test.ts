// Request bodies are checked before they are buffered (route limits, checks run with the upload
// paused, a read deadline), files stream from disk, and response headers set by hooks reach every
// answer. Raw sockets where a client must be able to send headers without the body.
import net from 'node:net';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileResponse, httpError, json, Router } from '../../src/http/index.ts';
import { sleep, startTestServer, type TestServer } from './helpers.ts';

/** Send raw bytes, collect what comes back until the server closes or `ms` pass. */
function rawExchange(port: number, send: (socket: net.Socket) => void, ms = 2000): Promise<{ text: string; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const socket = net.connect(port, '127.0.0.1', () => send(socket));
    let text = '';
    let closed = false;
    const done = () => resolve({ text, closed, ms: performance.now() - t0 });
    const timer = setTimeout(() => {
      socket.destroy();
      done();
    }, ms);
    socket.on('data', (b) => (text += b.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      clearTimeout(timer);
      done();
    });
  });
}

let t: TestServer;
let handled = 0;
let hookRuns = 0;
let dir: string;
const FILE_SIZE = 300 * 1024 + 17;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'roost-bodies-'));
  const content = Buffer.alloc(FILE_SIZE);
  for (let i = 0; i < FILE_SIZE; i++) content[i] = i % 251;
  writeFileSync(path.join(dir, 'f.bin'), content);
  const router = new Router()
    .beforeBody((ctx) => {
      ctx.setResponseHeader('x-ratelimit-limit', '300');
    })
    .post('/small', (ctx) => {
      handled++;
      return json({ size: ctx.request.headers.get('content-length'), body: ctx.body });
    })
    .post(
      '/upload',
      (ctx) => {
        handled++;
        const f = ctx.files.file;
        return json({ size: Array.isArray(f) ? -1 : f?.size });
      },
      { maxBodyBytes: 256 * 1024 },
    )
    .post(
      '/authed',
      (ctx) => {
        handled++;
        return json({ body: ctx.body });
      },
      {
        beforeBody: async (ctx) => {
          hookRuns++;
          await sleep(20);
          if (ctx.header('authorization') !== 'Bearer good') throw httpError(401, 'The access token is invalid');
        },
      },
    )
    .get('/file', () => fileResponse(path.join(dir, 'f.bin'), FILE_SIZE, { headers: { 'content-type': 'application/octet-stream', etag: '"x"' } }));
  t = await startTestServer(router, { maxBodyBytes: 8 * 1024, bodyTimeoutMs: 400 });
});

afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('body limits', () => {
  it('refuses a Content-Length over the route limit at once, without waiting for the body', async () => {
    const before = handled;
    const r = await rawExchange(t.server.port, (s) =>
      s.write(`POST /small HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${90 * 1024 * 1024}\r\n\r\n`),
    );
    expect(r.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(r.text).toContain('{"error":"Request body too large (limit 8192 bytes)"}');
    expect(r.closed).toBe(true);
    expect(r.ms).toBeLessThan(1500);
    expect(handled).toBe(before);
  });

  it('multipart on a route without a declared limit gets the small default', async () => {
    const form = new FormData();
    form.append('file', new File([new Uint8Array(20 * 1024)], 'a.bin'));
    const res = await fetch(`${t.base}/small`, { method: 'POST', body: form });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 'Request body too large (limit 8192 bytes)' });
  });

  it('a route with its own limit takes a larger upload', async () => {
    const form = new FormData();
    form.append('file', new File([new Uint8Array(200 * 1024)], 'a.bin'));
    const res = await fetch(`${t.base}/upload`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ size: 200 * 1024 });
  });

  it('aborts a chunked upload as soon as it passes the limit', async () => {
    const r = await rawExchange(t.server.port, (s) => {
      s.write('POST /small HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
      // 4 KiB chunks, one every 20 ms: the third passes 8 KiB.
      let n = 0;
      const timer = setInterval(() => {
        if (s.destroyed || n++ > 50) return clearInterval(timer);
        s.write(`1000\r\n${'a'.repeat(4096)}\r\n`);
      }, 20);
    });
    expect(r.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(r.closed).toBe(true);
    expect(r.ms).toBeLessThan(1000);
  });

  it('answers 408 and closes when a trickled body is not in within the deadline', async () => {
    const r = await rawExchange(t.server.port, (s) => {
      s.write('POST /small HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":');
      const timer = setInterval(() => (s.destroyed ? clearInterval(timer) : s.write(' ')), 50);
    });
    expect(r.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(r.text).toContain('{"error":"Request body not received in time"}');
    expect(r.closed).toBe(true);
    expect(r.ms).toBeGreaterThanOrEqual(350);
    expect(r.ms).toBeLessThan(1500);
  });
});

describe('the body deadline past uWS\'s own cut', () => {
  // uWS closes, without a word, a connection whose body arrives slower than 16 KiB/s after about
  // 30 s. The configured deadline (README: 60 s → 408) is the one a client must meet: a trickle
  // still open at 36 s gets its 408 and an error body, not a silent close at ~30 s.
  it('a slow trickle gets the 408 at a deadline longer than 30 s', async () => {
    const slow = await startTestServer(new Router().post('/small', () => json({})), { bodyTimeoutMs: 36_000 });
    try {
      const r = await rawExchange(
        slow.server.port,
        (s) => {
          s.write('POST /small HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n');
          const timer = setInterval(() => (s.destroyed ? clearInterval(timer) : s.write('          ')), 200);
        },
        45_000,
      );
      expect(r.text).toMatch(/^HTTP\/1\.1 408 /);
      expect(r.text).toContain('{"error":"Request body not received in time"}');
      expect(r.closed).toBe(true);
      expect(r.ms).toBeGreaterThanOrEqual(35_000);
    } finally {
      await slow.close();
    }
  }, 60_000);
});

describe('checks before the body', () => {
  it('a bad token is refused before any body byte is sent', async () => {
    const before = handled;
    const runs = hookRuns;
    const r = await rawExchange(t.server.port, (s) =>
      s.write('POST /authed HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer bad\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n'),
    );
    expect(r.text).toMatch(/^HTTP\/1\.1 401 /);
    expect(r.text).toContain('{"error":"The access token is invalid"}');
    expect(r.closed).toBe(true);
    expect(hookRuns).toBe(runs + 1);
    expect(handled).toBe(before);
  });

  it('a refusal after the whole body arrived leaves the keep-alive connection usable', async () => {
    const r = await rawExchange(t.server.port, (s) => {
      s.write('POST /authed HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer bad\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
      setTimeout(() => s.write('POST /small HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}'), 100);
    }, 1000);
    expect(r.text).toMatch(/^HTTP\/1\.1 401 /);
    expect(r.text).toContain('HTTP/1.1 200 OK');
    expect(r.text).toContain('"body":{"a":1}');
  });

  it('with a good token the paused body is read once the check passed', async () => {
    const body = JSON.stringify({ text: 'y'.repeat(3000) });
    const res = await fetch(`${t.base}/authed`, { method: 'POST', headers: { authorization: 'Bearer good', 'content-type': 'application/json' }, body });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ body: { text: 'y'.repeat(3000) } });
  });

  it('a body that arrived whole during the check is handled too (chunked)', async () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ n: 1 }));
    const stream = new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(bytes), c.close()) });
    const res = await fetch(`${t.base}/authed`, { method: 'POST', headers: { authorization: 'Bearer good', 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ body: { n: 1 } });
  });

  it('headers set by a router-wide hook reach normal and error responses', async () => {
    let res = await fetch(`${t.base}/small`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('300');
    res = await fetch(`${t.base}/small`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-ratelimit-limit')).toBe('300');
  });
});

describe('fileResponse', () => {
  it('streams the file with its Content-Length', async () => {
    const res = await fetch(`${t.base}/file`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(FILE_SIZE));
    expect(res.headers.get('etag')).toBe('"x"');
    const got = Buffer.from(await res.arrayBuffer());
    expect(got.length).toBe(FILE_SIZE);
    for (const i of [0, 1, 65535, 65536, 250_000, FILE_SIZE - 1]) expect(got[i]).toBe(i % 251);
  });

  it('HEAD announces the length without a body', async () => {
    const res = await fetch(`${t.base}/file`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(FILE_SIZE));
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it('a reader that pauses gets the whole file when it resumes', async () => {
    const r = await rawExchange(
      t.server.port,
      (s) => {
        s.write('GET /file HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        s.pause();
        setTimeout(() => s.resume(), 300);
      },
      3000,
    );
    const bodyStart = r.text.indexOf('\r\n\r\n') + 4;
    expect(r.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(r.text.length - bodyStart).toBe(FILE_SIZE);
  });
});
