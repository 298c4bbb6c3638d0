// The HTTP layer through the real uWS server on port 0, with real fetch() calls.

import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  httpError,
  json,
  Router,
  validationError,
  type RequestContext,
} from '../../src/http/index.ts';
import { sleep, startTestServer, waitFor, type TestServer } from './helpers.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const JSON_TYPE = 'application/json; charset=utf-8';
const EXPOSE = 'Link, X-RateLimit-Reset, X-RateLimit-Limit, X-RateLimit-Remaining, X-Request-Id, Idempotency-Key, Mastodon-Async-Refresh';

const echo = (ctx: RequestContext) =>
  json({
    method: ctx.method,
    params: ctx.params,
    query: ctx.query,
    body: ctx.body,
    input: ctx.input,
  });

const events = {
  aborted: [] as string[],
  streamCancelled: 0,
};

let big: Buffer;

function buildRouter(): Router {
  big = randomBytes(3 * 1024 * 1024);
  return new Router()
    .get('/api/v1/accounts/:id', echo)
    .post('/api/v1/accounts/:id/follow', echo)
    .post('/api/v1/echo', echo)
    .update('/api/v1/accounts/update_credentials', echo)
    .delete('/api/v1/statuses/:id', echo)
    .get('/api/v1/instance', () => json({ uri: 'roost.example', title: 'Roost' }))
    .post('/api/v1/media', async (ctx) => {
      const file = ctx.files.file;
      if (!file || Array.isArray(file)) throw httpError(422, 'file missing');
      return json({
        filename: file.filename,
        type: file.type,
        size: file.size,
        field: file.field,
        hex: Buffer.from(await file.bytes()).toString('hex'),
        description: ctx.body.description,
      });
    })
    .post('/api/v1/raw', async (ctx) => json({ text: await ctx.request.text(), url: ctx.request.url, method: ctx.request.method, ct: ctx.request.headers.get('content-type') }))
    .get('/api/v1/whoami', (ctx) =>
      json({ url: ctx.url.href, remote: ctx.remoteAddress, reqId: ctx.reqId, ua: ctx.header('user-agent'), hdr: ctx.headers.get('x-custom') }),
    )
    .get('/errors/http', () => {
      throw httpError(403, 'This action is not allowed');
    })
    .get('/errors/oauth', async () => {
      throw httpError(401, 'invalid_grant', { error_description: 'The provided authorization grant is invalid' });
    })
    .get('/errors/validation', () => {
      throw validationError('', {
        username: [{ error: 'ERR_TAKEN', description: 'has already been taken' }],
        display_name: [{ error: 'ERR_TOO_LONG', description: 'is too long (maximum is 30 characters)' }],
      });
    })
    .get('/errors/validation-message', () => {
      throw validationError('Validation failed: Text can\'t be blank', { text: [{ error: 'ERR_BLANK', description: "can't be blank" }] });
    })
    .get('/errors/boom', () => {
      throw new Error('database password is hunter2');
    })
    .get('/errors/async-boom', async () => {
      await sleep(1);
      throw new TypeError('secret internals');
    })
    .get('/errors/not-a-response', () => ({ hello: 'world' }) as unknown as Response)
    .get('/errors/roost', () => {
      // An error from a layer that does not import src/http (like services' RoostError).
      const e = Object.assign(new Error('Record not found'), { status: 404, body: { error: 'Record not found' } });
      throw e;
    })
    .get('/head-me', () => json({ data: 'x'.repeat(100) }, { headers: { 'x-extra': 'yes' } }))
    .get('/created', () => json({ id: '1' }, { status: 201, headers: { link: '<https://roost.example/api/v1/x?max_id=1>; rel="next"' } }))
    .get('/empty', () => new Response(null, { status: 204 }))
    .get('/big', () => new Response(big, { headers: { 'content-type': 'application/octet-stream' } }))
    .get('/big-json', () => json({ data: 'é'.repeat(200_000) }))
    .get('/stream', () => {
      const enc = new TextEncoder();
      let i = 0;
      return new Response(
        new ReadableStream<Uint8Array>({
          async pull(controller) {
            i++;
            if (i > 3) {
              controller.close();
              return;
            }
            if (i > 1) await sleep(150);
            controller.enqueue(enc.encode(`data: ${i}\n\n`));
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      );
    })
    .get('/endless', () =>
      new Response(
        new ReadableStream<Uint8Array>({
          async pull(controller) {
            await sleep(20);
            controller.enqueue(new TextEncoder().encode(':thump\n'));
          },
          cancel() {
            events.streamCancelled++;
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      ),
    )
    .get('/slow-abortable', async (ctx) => {
      const signal = ctx.signal;
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
        setTimeout(resolve, 5000);
      });
      if (signal.aborted) events.aborted.push(ctx.reqId);
      return json({ aborted: signal.aborted });
    })
    .get('/stream-fails', () =>
      new Response(
        new ReadableStream<Uint8Array>({
          async start(controller) {
            await sleep(30);
            controller.enqueue(new TextEncoder().encode('partial'));
            await sleep(30);
            controller.error(new Error('producer crashed'));
          },
        }),
      ),
    )
    .get('/slow', async () => {
      await sleep(300);
      return json({ done: true });
    })
    .options('/api/v1/custom-options', () => new Response(null, { status: 204, headers: { 'x-custom-options': '1' } }));
}

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer(buildRouter(), { maxBodyBytes: 16 * 1024, maxUploadBytes: 64 * 1024 });
});

afterAll(async () => {
  await t.close();
});

describe('routing and errors', () => {
  it('routes with path params and nested query params', async () => {
    const res = await fetch(`${t.base}/api/v1/accounts/109%20x?id[]=1&id[]=2&data[alerts][follow]=true`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(JSON_TYPE);
    expect(await res.json()).toEqual({
      method: 'GET',
      params: { id: '109 x' },
      query: { id: ['1', '2'], data: { alerts: { follow: 'true' } } },
      body: {},
      input: { id: ['1', '2'], data: { alerts: { follow: 'true' } } },
    });
  });

  it('answers unknown routes with a JSON 404 as Rails does', async () => {
    const res = await fetch(`${t.base}/api/v1/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe(JSON_TYPE);
    expect(await res.json()).toEqual({ error: 'Not Found' });
  });

  it('answers a known path with the wrong method with 405 and Allow', async () => {
    const res = await fetch(`${t.base}/api/v1/instance`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(await res.json()).toEqual({ error: 'Method Not Allowed' });
  });

  it('accepts PUT and PATCH on update routes', async () => {
    for (const method of ['PUT', 'PATCH']) {
      const res = await fetch(`${t.base}/api/v1/accounts/update_credentials`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ display_name: 'Alice', locked: true }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ method, params: {}, query: {}, body: { display_name: 'Alice', locked: true }, input: { display_name: 'Alice', locked: true } });
    }
  });

  it('handles DELETE with params', async () => {
    const res = await fetch(`${t.base}/api/v1/statuses/77`, { method: 'DELETE' });
    expect(await res.json()).toMatchObject({ method: 'DELETE', params: { id: '77' } });
  });

  it('renders thrown HttpErrors in Mastodon shape', async () => {
    let res = await fetch(`${t.base}/errors/http`);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 'This action is not allowed' });
    res = await fetch(`${t.base}/errors/oauth`);
    expect(res.status).toBe(401);
    expect(await res.text()).toBe('{"error":"invalid_grant","error_description":"The provided authorization grant is invalid"}');
  });

  it('renders validation errors as 422 with details', async () => {
    let res = await fetch(`${t.base}/errors/validation`);
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      error: 'Validation failed: Username has already been taken, Display name is too long (maximum is 30 characters)',
      details: {
        username: [{ error: 'ERR_TAKEN', description: 'has already been taken' }],
        display_name: [{ error: 'ERR_TOO_LONG', description: 'is too long (maximum is 30 characters)' }],
      },
    });
    res = await fetch(`${t.base}/errors/validation-message`);
    expect(await res.json()).toEqual({ error: "Validation failed: Text can't be blank", details: { text: [{ error: 'ERR_BLANK', description: "can't be blank" }] } });
  });

  it('renders errors from other layers that carry status and a Mastodon body', async () => {
    const res = await fetch(`${t.base}/errors/roost`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'Record not found' });
  });

  it('answers 500 without leaking the error, and logs it with the stack', async () => {
    for (const path of ['/errors/boom', '/errors/async-boom', '/errors/not-a-response']) {
      const res = await fetch(`${t.base}${path}`);
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(text).toBe('{"error":"Internal Server Error"}');
      const reqId = res.headers.get('x-request-id');
      const logged = t.logs.find((l) => l.reqId === reqId && l.level === 50);
      expect(logged?.msg).toBe('unhandled error in request handler');
      expect((logged?.err as { stack: string }).stack).toContain('at ');
    }
    const boom = t.logs.find((l) => l.level === 50 && (l.err as { message: string }).message === 'database password is hunter2');
    expect(boom).toBeDefined();
  });
});

describe('request bodies', () => {
  it('answers malformed JSON with 400', async () => {
    const res = await fetch(`${t.base}/api/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a": ' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('Error occurred while parsing request parameters');
    expect(body.error_description).toMatch(/^Malformed JSON in request body: /);
  });

  it('answers 413 for JSON over maxBodyBytes (Content-Length and chunked)', async () => {
    const payload = JSON.stringify({ text: 'x'.repeat(20_000) });
    let res = await fetch(`${t.base}/api/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 'Request body too large (limit 16384 bytes)' });

    const bytes = new TextEncoder().encode(payload);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 4096) c.enqueue(bytes.subarray(i, i + 4096));
        c.close();
      },
    });
    res = await fetch(`${t.base}/api/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 'Request body too large (limit 16384 bytes)' });
  });

  it('reads a chunked body under the limit', async () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ status: 'hi', n: 1 }));
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.subarray(0, 5));
        c.enqueue(bytes.subarray(5));
        c.close();
      },
    });
    const res = await fetch(`${t.base}/api/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { body: unknown }).body).toEqual({ status: 'hi', n: 1 });
  });

  it('answers 413 for multipart over maxUploadBytes', async () => {
    const form = new FormData();
    form.append('file', new File([randomBytes(100 * 1024)], 'big.bin', { type: 'application/octet-stream' }));
    const res = await fetch(`${t.base}/api/v1/media`, { method: 'POST', body: form });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 'Request body too large (limit 65536 bytes)' });
  });

  const expected = {
    id: ['1', '2'],
    data: { alerts: { follow: 'true' } },
    keywords_attributes: [{ keyword: 'x', whole_word: 'false' }],
  };
  const pairs: Array<[string, string]> = [
    ['id[]', '1'],
    ['id[]', '2'],
    ['data[alerts][follow]', 'true'],
    ['keywords_attributes[0][keyword]', 'x'],
    ['keywords_attributes[0][whole_word]', 'false'],
  ];

  it('normalises urlencoded nested params', async () => {
    const res = await fetch(`${t.base}/api/v1/echo`, { method: 'POST', body: new URLSearchParams(pairs) });
    expect(((await res.json()) as { body: unknown }).body).toEqual(expected);
  });

  it('normalises multipart nested params to the same shape', async () => {
    const form = new FormData();
    for (const [k, v] of pairs) form.append(k, v);
    const res = await fetch(`${t.base}/api/v1/echo`, { method: 'POST', body: form });
    expect(((await res.json()) as { body: unknown }).body).toEqual(expected);
  });

  it('normalises the JSON equivalent (integer-keyed object) to the same shape', async () => {
    const res = await fetch(`${t.base}/api/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: ['1', '2'], data: { alerts: { follow: 'true' } }, keywords_attributes: { '0': { keyword: 'x', whole_word: 'false' } } }),
    });
    expect(((await res.json()) as { body: unknown }).body).toEqual(expected);
  });

  it('merges query and body into input (body wins)', async () => {
    const res = await fetch(`${t.base}/api/v1/echo?limit=5&a=query`, { method: 'POST', body: new URLSearchParams([['a', 'body']]) });
    expect(((await res.json()) as { input: unknown }).input).toEqual({ limit: '5', a: 'body' });
  });

  it('receives a multipart file byte-exact, with fields', async () => {
    const data = randomBytes(40_000);
    // make sure boundary-like bytes inside the file do not confuse the parser
    data.set(Buffer.from('\r\n--'), 1000);
    const form = new FormData();
    form.append('description', 'A cat, é');
    form.append('file', new File([data], 'C:\\Users\\me\\cat photo.png', { type: 'image/png' }));
    const res = await fetch(`${t.base}/api/v1/media`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      filename: 'cat photo.png',
      type: 'image/png',
      size: 40_000,
      field: 'file',
      hex: data.toString('hex'),
      description: 'A cat, é',
    });
  });

  it('gives the handler a WHATWG Request with the buffered body', async () => {
    const res = await fetch(`${t.base}/api/v1/raw?x=1`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello body' });
    expect(await res.json()).toEqual({ text: 'hello body', url: `${t.base}/api/v1/raw?x=1`, method: 'POST', ct: 'text/plain' });
  });

  it('wraps a JSON array body as _json', async () => {
    const res = await fetch(`${t.base}/api/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1,2]' });
    expect(((await res.json()) as { body: unknown }).body).toEqual({ _json: [1, 2] });
  });
});

describe('headers, CORS, request id', () => {
  it('sets CORS headers on API responses', async () => {
    const res = await fetch(`${t.base}/api/v1/instance`, { headers: { origin: 'https://app.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toBe(EXPOSE);
  });

  it('does not set CORS headers outside the CORS paths', async () => {
    const res = await fetch(`${t.base}/errors/http`, { headers: { origin: 'https://app.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers preflights', async () => {
    const res = await fetch(`${t.base}/api/v1/accounts/1/follow`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, idempotency-key' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('POST, PUT, DELETE, GET, PATCH, OPTIONS');
    expect(res.headers.get('access-control-allow-headers')).toBe('authorization, content-type, idempotency-key');
    expect(res.headers.get('access-control-max-age')).toBe('7200');
    expect(res.headers.get('access-control-expose-headers')).toBe(EXPOSE);
    expect(await res.text()).toBe('');
  });

  it('answers preflights on unrouted CORS paths (e.g. /oauth/token before it exists) with that resource’s methods', async () => {
    const res = await fetch(`${t.base}/oauth/token`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
  });

  it('lets a route handle OPTIONS itself', async () => {
    const res = await fetch(`${t.base}/api/v1/custom-options`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } });
    expect(res.status).toBe(204);
    expect(res.headers.get('x-custom-options')).toBe('1');
  });

  it('generates a request id, honours a sane incoming one, cleans an unsafe one', async () => {
    let res = await fetch(`${t.base}/api/v1/instance`);
    expect(res.headers.get('x-request-id')).toMatch(UUID_RE);
    res = await fetch(`${t.base}/api/v1/instance`, { headers: { 'x-request-id': 'abc-123_DEF@x' } });
    expect(res.headers.get('x-request-id')).toBe('abc-123_DEF@x');
    res = await fetch(`${t.base}/api/v1/whoami`, { headers: { 'x-request-id': 'a b<script>c' } });
    expect(res.headers.get('x-request-id')).toBe('abscriptc');
    expect(((await res.json()) as { reqId: string }).reqId).toBe('abscriptc');
    res = await fetch(`${t.base}/api/v1/instance`, { headers: { 'x-request-id': '<>' } });
    expect(res.headers.get('x-request-id')).toMatch(UUID_RE);
  });

  it('writes one access log line per request', async () => {
    const res = await fetch(`${t.base}/api/v1/accounts/5?x=1`);
    const reqId = res.headers.get('x-request-id');
    await res.arrayBuffer();
    const line = t.logs.find((l) => l.reqId === reqId && l.msg === 'request');
    expect(line).toMatchObject({ level: 30, module: 'http', method: 'GET', path: '/api/v1/accounts/5', status: 200, reqId });
    expect(typeof line!.ms).toBe('number');
  });

  it('passes response headers and status through, and gives ctx its request data', async () => {
    let res = await fetch(`${t.base}/created`);
    expect(res.status).toBe(201);
    expect(res.headers.get('link')).toBe('<https://roost.example/api/v1/x?max_id=1>; rel="next"');
    res = await fetch(`${t.base}/api/v1/whoami?a=1`, { headers: { 'user-agent': 'roost-test', 'x-custom': 'v' } });
    expect(await res.json()).toMatchObject({ url: `${t.base}/api/v1/whoami?a=1`, remote: '127.0.0.1', ua: 'roost-test', hdr: 'v' });
    res = await fetch(`${t.base}/empty`);
    expect(res.status).toBe(204);
    expect(res.headers.get('content-length')).toBeNull();
    expect(await res.text()).toBe('');
  });
});

describe('response bodies', () => {
  it('answers HEAD with the GET headers and Content-Length but no body', async () => {
    const get = await fetch(`${t.base}/head-me`);
    const body = await get.text();
    const head = await fetch(`${t.base}/head-me`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
    expect(head.headers.get('x-extra')).toBe('yes');
    expect(head.headers.get('content-type')).toBe(JSON_TYPE);
    expect(await head.text()).toBe('');
  });

  it('answers HEAD on a raw socket without sending a body', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(t.server.port, '127.0.0.1', () => sock.write('HEAD /api/v1/instance HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
      let out = '';
      sock.setEncoding('latin1');
      sock.on('data', (d: string) => (out += d));
      sock.on('end', () => resolve(out));
      sock.on('error', reject);
    });
    expect(raw.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
    expect(raw).toContain(`Content-Length: ${'{"uri":"roost.example","title":"Roost"}'.length}\r\n`);
    expect(raw.endsWith('\r\n\r\n')).toBe(true);
  });

  it('sends large bodies byte-exact (backpressure path)', async () => {
    const res = await fetch(`${t.base}/big`);
    const got = Buffer.from(await res.arrayBuffer());
    expect(res.headers.get('content-length')).toBe(String(big.length));
    expect(got.equals(big)).toBe(true);
    const j = await fetch(`${t.base}/big-json`);
    expect(((await j.json()) as { data: string }).data).toBe('é'.repeat(200_000));
  });

  it('streams a ReadableStream body chunk by chunk', async () => {
    const started = Date.now();
    const res = await fetch(`${t.base}/stream`);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    const first = await reader.read();
    const firstAt = Date.now() - started;
    expect(dec.decode(first.value)).toBe('data: 1\n\n');
    let rest = '';
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      rest += dec.decode(r.value);
    }
    expect(rest).toBe('data: 2\n\ndata: 3\n\n');
    // The first event arrived before the stream finished (~300 ms).
    expect(firstAt).toBeLessThan(250);
  });

  it('cancels a streamed body when the client goes away', async () => {
    const before = events.streamCancelled;
    const ac = new AbortController();
    const res = await fetch(`${t.base}/endless`, { signal: ac.signal });
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await waitFor(() => events.streamCancelled === before + 1);
  });
});

describe('client disconnects and shutdown', () => {
  it('aborts ctx.signal when the client disconnects, and logs it', async () => {
    const ac = new AbortController();
    const p = fetch(`${t.base}/slow-abortable`, { signal: ac.signal, headers: { 'x-request-id': 'abort-me-1' } }).catch((e: Error) => e.name);
    await sleep(100);
    ac.abort();
    expect(await p).toBe('AbortError');
    await waitFor(() => events.aborted.includes('abort-me-1'));
    await waitFor(() => t.logs.some((l) => l.reqId === 'abort-me-1' && l.msg === 'request'));
    expect(t.logs.find((l) => l.reqId === 'abort-me-1' && l.msg === 'request')).toMatchObject({ status: 499, aborted: true, path: '/slow-abortable' });
    // The server stays healthy afterwards.
    expect((await fetch(`${t.base}/api/v1/instance`)).status).toBe(200);
  });

  it('drains an in-flight request on close(), and stops accepting connections', async () => {
    const s = await startTestServer(buildRouter());
    const inflight = fetch(`${s.base}/slow`).then(async (r) => ({ status: r.status, body: await r.json(), connection: r.headers.get('connection') }));
    await sleep(50);
    expect(s.server.inFlight).toBe(1);
    const t0 = Date.now();
    const closed = s.server.close({ drainMs: 5000 });
    await sleep(20);
    const refused = await new Promise<string>((resolve) => {
      const sock = net.connect(s.server.port, '127.0.0.1');
      sock.on('connect', () => {
        sock.destroy();
        resolve('connected');
      });
      sock.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    expect(await inflight).toEqual({ status: 200, body: { done: true }, connection: 'close' });
    await closed;
    const took = Date.now() - t0;
    expect(took).toBeLessThan(1000);
    expect(s.server.inFlight).toBe(0);
  });

  it('aborts requests still running after drainMs', async () => {
    const s = await startTestServer(buildRouter());
    const p = fetch(`${s.base}/slow-abortable`, { headers: { 'x-request-id': 'drain-timeout-1' } }).then(
      (r) => r.status,
      () => 'connection closed',
    );
    await sleep(50);
    const t0 = Date.now();
    await s.server.close({ drainMs: 200 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
    expect(await p).toBe('connection closed');
    await waitFor(() => events.aborted.includes('drain-timeout-1'));
  });
});

describe('robustness', () => {
  it('cuts the connection when a streamed body fails midway, and logs it', async () => {
    const res = await fetch(`${t.base}/stream-fails`);
    const reqId = res.headers.get('x-request-id');
    await expect(res.text()).rejects.toThrowError();
    await waitFor(() => t.logs.some((l) => l.reqId === reqId && l.msg === 'response stream failed'));
    expect((await fetch(`${t.base}/api/v1/instance`)).status).toBe(200);
  });

  it('answers 500 when the layer itself fails (a router that throws), and keeps serving', async () => {
    let calls = 0;
    const broken = {
      match() {
        calls++;
        if (calls === 1) throw new Error('router bug');
        return null;
      },
    } as unknown as Router;
    const s = await startTestServer(broken);
    try {
      const res = await fetch(`${s.base}/anything`);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: 'Internal Server Error' });
      expect(s.logs.some((l) => l.level === 50 && (l.err as { message: string }).message === 'router bug')).toBe(true);
      expect((await fetch(`${s.base}/anything`)).status).toBe(404);
      expect(s.server.inFlight).toBe(0);
    } finally {
      await s.close();
    }
  });
});

describe('options', () => {
  it('builds request URLs from publicUrl and sends unmatched paths to the fallback with the body', async () => {
    const seen: Array<{ url: string; method: string; body: string; reqId: string }> = [];
    const s = await startTestServer(new Router().get('/api/v1/x', (ctx) => json({ url: ctx.url.href })), {
      publicUrl: 'https://roost.example/',
      fallback: async (request, ctx) => {
        seen.push({ url: request.url, method: request.method, body: await request.text(), reqId: ctx.reqId });
        return new Response('{"@context":"x"}', { status: 202, headers: { 'content-type': 'application/activity+json' } });
      },
    });
    try {
      expect(await (await fetch(`${s.base}/api/v1/x?q=1`)).json()).toEqual({ url: 'https://roost.example/api/v1/x?q=1' });
      const res = await fetch(`${s.base}/users/alice/inbox`, { method: 'POST', headers: { 'content-type': 'application/activity+json' }, body: '{"type":"Follow"}' });
      expect(res.status).toBe(202);
      expect(res.headers.get('content-type')).toBe('application/activity+json');
      expect(res.headers.get('content-length')).toBe('16');
      expect(await res.text()).toBe('{"@context":"x"}');
      expect(seen).toEqual([{ url: 'https://roost.example/users/alice/inbox', method: 'POST', body: '{"type":"Follow"}', reqId: res.headers.get('x-request-id') }]);
    } finally {
      await s.close();
    }
  });

  it('refuses a relative publicUrl (WebSocket routes: test/streaming/backpressure.test.ts)', async () => {
    await expect(startTestServer(new Router(), { publicUrl: 'roost.example' })).rejects.toThrowError('publicUrl must be an absolute http(s) URL');
  });
});
