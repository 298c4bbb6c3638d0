// What a client can make Roost hold while its request body arrives (issue 24, items 2, 3 and 7):
// bodies without a user's token reserve their size from a shared budget (503 past it) and an
// address's slots (429 past them); uploads go to temporary files as they arrive and are gone once
// answered, however the exchange ends; two Content-Lengths are a 400. Raw sockets, so a client can
// send the head of a request and hold its body, from several loopback addresses.
import net from 'node:net';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

interface Held {
  socket: net.Socket;
  text: () => string;
  closed: () => boolean;
  closedP: Promise<void>;
}

/** Open a connection from `from` (a loopback address), write `head` (and `first`), keep it open. */
function hold(port: number, head: string, opts: { from?: string; first?: Buffer | string } = {}): Promise<Held> {
  return new Promise((resolve, reject) => {
    let text = '';
    let closed = false;
    let onClose!: () => void;
    const closedP = new Promise<void>((r) => (onClose = r));
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: opts.from ?? '127.0.0.1' }, () => {
      socket.write(head);
      if (opts.first !== undefined) socket.write(opts.first);
      resolve({ socket, text: () => text, closed: () => closed, closedP });
    });
    socket.on('data', (b) => (text += b.toString('latin1')));
    socket.on('error', (e) => (closed ? undefined : reject(e)));
    socket.on('close', () => {
      closed = true;
      onClose();
    });
  });
}

/** Wait until `fn` holds (polling the event loop), or fail with `what`. */
async function until(fn: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Give the server a moment to answer what it would answer (a held body gets nothing). */
const settle = () => new Promise((r) => setTimeout(r, 300));

const inboxHead = (length: number) =>
  `POST /inbox HTTP/1.1\r\nHost: x\r\nContent-Type: application/activity+json\r\nSignature: keyId="https://peer.example/actor#main-key",signature="x"\r\nContent-Length: ${length}\r\n\r\n`;

describe('the budget of unauthenticated bodies', () => {
  let roost: TestRoost;
  let alice: TestUser;
  beforeAll(async () => {
    roost = await startTestRoost({ bodyLimits: { unauthenticatedBudgetBytes: 256 * 1024, concurrentBodiesPerAddress: 2 } });
    alice = await createTestUser(roost, 'alice');
  });
  afterAll(() => roost.close());

  it('refuses an inbox body the budget cannot take with 503 and Retry-After, and closes; the reservation comes back when a held body goes', async () => {
    // Two bodies of 100 KiB from two addresses are reserved (200 KiB of 256): they are held, unanswered.
    const a = await hold(roost.port, inboxHead(100 * 1024), { from: '127.0.0.2', first: '{"a":' });
    const b = await hold(roost.port, inboxHead(100 * 1024), { from: '127.0.0.3', first: '{"a":' });
    await settle();
    expect(a.text()).toBe('');
    expect(b.text()).toBe('');
    // A third would pass the budget: refused before a byte is buffered.
    const c = await hold(roost.port, inboxHead(100 * 1024), { from: '127.0.0.4' });
    await c.closedP;
    expect(c.text()).toMatch(/^HTTP\/1\.1 503 /);
    expect(c.text()).toMatch(/\r\nretry-after: 5\r\n/i);
    expect(c.text()).toContain('{"error":"Too many requests in flight; try again later"}');
    // One held body goes (the client gives up): its 100 KiB come back, and the next one is taken.
    a.socket.destroy();
    await a.closedP;
    await settle();
    const d = await hold(roost.port, inboxHead(100 * 1024), { from: '127.0.0.5', first: '{"a":' });
    await settle();
    expect(d.text()).toBe('');
    expect(d.closed()).toBe(false);
    b.socket.destroy();
    d.socket.destroy();
    await Promise.all([b.closedP, d.closedP]);
  });

  it('grows a chunked body\'s reservation as it arrives and refuses it once the budget is spent', async () => {
    const c = await hold(
      roost.port,
      'POST /api/v1/apps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      { from: '127.0.0.6' },
    );
    // 300 KiB in 4 KiB chunks: the budget (256 KiB) runs out on the way, well before the 1 MiB limit.
    for (let i = 0; i < 75 && !c.closed(); i++) {
      c.socket.write(`1000\r\n${'a'.repeat(4096)}\r\n`);
      await new Promise((r) => setTimeout(r, 2));
    }
    await c.closedP;
    expect(c.text()).toMatch(/^HTTP\/1\.1 503 /);
  });

  it('a user\'s valid token vouches for its body: it is taken while the budget is spent', async () => {
    const held = [
      await hold(roost.port, inboxHead(120 * 1024), { from: '127.0.0.7', first: '{' }),
      await hold(roost.port, inboxHead(120 * 1024), { from: '127.0.0.8', first: '{' }),
    ];
    await settle();
    const res = await alice.api('/api/v1/statuses', { body: { status: 'still here' } });
    expect(res.status).toBe(200);
    expect(res.body.content).toContain('still here');
    // …while a request without a token is not.
    const refused = await hold(roost.port, inboxHead(100 * 1024), { from: '127.0.0.9' });
    await refused.closedP;
    expect(refused.text()).toMatch(/^HTTP\/1\.1 503 /);
    for (const h of held) h.socket.destroy();
    await Promise.all(held.map((h) => h.closedP));
  });

  it('caps the bodies one address may have arriving at once with 429, /api/v1/apps and the inbox alike', async () => {
    const head = 'POST /api/v1/apps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
    const a = await hold(roost.port, head, { from: '127.0.0.10', first: '{"client_name":' });
    const b = await hold(roost.port, inboxHead(1000), { from: '127.0.0.10', first: '{' });
    await settle();
    expect(a.text()).toBe('');
    expect(b.text()).toBe('');
    const c = await hold(roost.port, head, { from: '127.0.0.10' });
    await c.closedP;
    expect(c.text()).toMatch(/^HTTP\/1\.1 429 /);
    expect(c.text()).toMatch(/\r\nretry-after: 5\r\n/i);
    expect(c.text()).toContain('{"error":"Too many requests"}');
    // Another address is not held back by this one.
    const other = await fetch(roost.at('/api/v1/apps'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'x', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob' }),
    });
    expect(other.status).toBe(200);
    // A body that arrived whole gives its slot back.
    a.socket.write(`"ok", "redirect_uris": "urn:ietf:wg:oauth:2.0:oob"}`.padEnd(1000 - '{"client_name":'.length, ' '));
    await until(() => a.text().includes('HTTP/1.1 200'), 'the app created');
    const d = await hold(roost.port, head, { from: '127.0.0.10', first: '{' });
    await settle();
    expect(d.text()).toBe('');
    for (const h of [a, b, d]) h.socket.destroy();
    await Promise.all([a, b, d].map((h) => h.closedP));
  });

  it('refuses an inbox body over 1 MiB on its Content-Length, even where other routes take more', async () => {
    const big = await startTestRoost({ bodyLimits: { maxBodyBytes: 4 * 1024 * 1024 } });
    try {
      const c = await hold(big.port, inboxHead(2 * 1024 * 1024), { from: '127.0.0.11' });
      await c.closedP;
      expect(c.text()).toMatch(/^HTTP\/1\.1 413 /);
      expect(c.text()).toContain('{"error":"Request body too large (limit 1048576 bytes)"}');
    } finally {
      await big.close();
    }
  });
});

describe('HTTP framing and the body deadline', () => {
  let roost: TestRoost;
  beforeAll(async () => {
    roost = await startTestRoost({ bodyLimits: { timeoutSeconds: 2 } });
  });
  afterAll(() => roost.close());

  it('refuses two Content-Length headers with 400 and closes', async () => {
    for (const lengths of [['5', '5'], ['5', '7']]) {
      const c = await hold(
        roost.port,
        `POST /api/v1/apps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${lengths[0]}\r\nContent-Length: ${lengths[1]}\r\n\r\n{"a":1}`,
      );
      await c.closedP;
      expect(c.text()).toMatch(/^HTTP\/1\.1 400 /);
      expect(c.text()).toContain('{"error":"Duplicate Content-Length header"}');
    }
  });

  it('answers 408 with an error body once the configured deadline passed, then closes', async () => {
    const c = await hold(roost.port, inboxHead(500), { from: '127.0.0.12', first: '{"a":' });
    const t0 = Date.now();
    await c.closedP;
    expect(c.text()).toMatch(/^HTTP\/1\.1 408 /);
    expect(c.text()).toContain('{"error":"Request body not received in time"}');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1500);
  });
});

describe('uploads go to temporary files as they arrive', () => {
  let roost: TestRoost;
  let alice: TestUser;
  let dir: string;
  beforeAll(async () => {
    roost = await startTestRoost({ bodyLimits: { timeoutSeconds: 3 } });
    alice = await createTestUser(roost, 'alice');
    dir = path.join(roost.dataDir, 'tmp', 'uploads');
  });
  afterAll(() => roost.close());

  const files = () => (existsSync(dir) ? readdirSync(dir) : []);
  const multipartHead = (boundary: string) =>
    `POST /api/v1/media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.token}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nTransfer-Encoding: chunked\r\n\r\n`;
  const chunk = (data: Buffer | string) => {
    const b = Buffer.isBuffer(data) ? data : Buffer.from(data);
    return Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);
  };

  it('writes the file part to disk while it arrives, hands the service its bytes, and removes the file once answered', async () => {
    const image = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 10, g: 200, b: 30 } } }).png().toBuffer();
    const c = await hold(roost.port, multipartHead('BB'));
    c.socket.write(chunk('--BB\r\nContent-Disposition: form-data; name="description"\r\n\r\na green box\r\n'));
    c.socket.write(chunk('--BB\r\nContent-Disposition: form-data; name="file"; filename="g.png"\r\nContent-Type: image/png\r\n\r\n'));
    c.socket.write(chunk(image.subarray(0, 100)));
    // The part is on disk before the body is complete.
    await until(() => files().length === 1 && statSync(path.join(dir, files()[0]!)).size >= 90, 'the temporary file');
    c.socket.write(chunk(image.subarray(100)));
    c.socket.write(chunk('\r\n--BB--\r\n'));
    c.socket.write('0\r\n\r\n');
    await until(() => c.text().includes('\r\n\r\n{'), 'the answer');
    expect(c.text()).toMatch(/^HTTP\/1\.1 200 /);
    const body = JSON.parse(c.text().slice(c.text().indexOf('\r\n\r\n') + 4));
    expect(body).toMatchObject({ type: 'image', description: 'a green box', meta: { original: { width: 64, height: 48 } } });
    await until(() => files().length === 0, 'the temporary file removed');
    c.socket.destroy();
  });

  it('removes the temporary file when the client goes away mid-upload', async () => {
    const c = await hold(roost.port, multipartHead('CC'));
    c.socket.write(chunk('--CC\r\nContent-Disposition: form-data; name="file"; filename="x.png"\r\n\r\n'));
    c.socket.write(chunk(Buffer.alloc(200 * 1024, 7)));
    await until(() => files().length === 1, 'the temporary file');
    c.socket.destroy();
    await until(() => files().length === 0, 'the temporary file removed after the abort');
  });

  it('removes the temporary file when the body misses its deadline (408)', async () => {
    const c = await hold(roost.port, multipartHead('DD'));
    c.socket.write(chunk('--DD\r\nContent-Disposition: form-data; name="file"; filename="x.png"\r\n\r\n'));
    c.socket.write(chunk(Buffer.alloc(10 * 1024, 7)));
    await until(() => files().length === 1, 'the temporary file');
    await c.closedP;
    expect(c.text()).toMatch(/^HTTP\/1\.1 408 /);
    await until(() => files().length === 0, 'the temporary file removed after the 408');
  });

  it('removes the temporary file when the service refuses the upload, and a part over the limit stops the upload at once', async () => {
    const form = new FormData();
    form.append('file', new File([Buffer.from('not an image at all')], 'a.png', { type: 'image/png' }));
    const res = await alice.api('/api/v1/media', { body: form });
    expect(res.status).toBe(422);
    await until(() => files().length === 0, 'the temporary file removed after the 422');
    // A chunked upload passing the route's limit (100 MiB: video and audio, 99 MiB, and the form) is refused as the bytes pass it.
    const c = await hold(roost.port, multipartHead('EE'));
    c.socket.write(chunk('--EE\r\nContent-Disposition: form-data; name="file"; filename="x.png"\r\n\r\n'));
    const mib = chunk(Buffer.alloc(1024 * 1024, 1));
    for (let i = 0; i < 110 && !c.closed(); i++) await new Promise<void>((r) => c.socket.write(mib, () => r()));
    await c.closedP;
    expect(c.text()).toMatch(/^HTTP\/1\.1 413 /);
    await until(() => files().length === 0, 'the temporary file removed after the 413');
  });
});
