// While PostgreSQL cannot be reached the API answers 503 with Retry-After and Mastodon's
// {"error": …}, never 500, and /health says so; once it is back, everything answers again
// (issue 24, item 7). The outage is a loopback TCP proxy between Roost and its database that
// stops listening (new connections refused) and cuts the open ones.
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, eventually, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser } from '../helpers/auth.ts';

let roost: TestRoost | undefined;
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let proxy: Proxy | undefined;
afterAll(async () => {
  await proxy?.start();
  await roost?.close();
  await db?.drop();
  await proxy?.stop();
});

/**
 * A TCP proxy on loopback to `target` (a host and port, or the Unix socket of the run's embedded
 * server) that can be stopped (refusing, cutting) and started again on its port.
 */
class Proxy {
  server: net.Server | null = null;
  sockets = new Set<net.Socket>();
  port = 0;
  readonly target: { host: string; port: number } | { path: string };
  constructor(target: { host: string; port: number } | { path: string }) {
    this.target = target;
  }
  start(): Promise<void> {
    if (this.server) return Promise.resolve();
    const server = net.createServer((client) => {
      const upstream = 'path' in this.target ? net.connect(this.target.path) : net.connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    this.server = server;
    return new Promise((resolve) => server.listen(this.port, '127.0.0.1', () => {
      this.port = (server.address() as net.AddressInfo).port;
      resolve();
    }));
  }
  stop(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    this.server = null;
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => server.close(() => resolve()));
  }
}

const UNAVAILABLE = { error: 'There was a temporary problem serving your request, please try again' };

describe('a database outage', () => {
  it('answers 503 with Retry-After meanwhile, /health included, and recovers', { timeout: 120_000 }, async () => {
    db = await createTestDatabase();
    const url = new URL(db.url);
    const host = decodeURIComponent(url.hostname);
    const port = Number(url.port || 5432);
    proxy = new Proxy(host.startsWith('/') ? { path: path.join(host, `.s.PGSQL.${port}`) } : { host, port });
    await proxy.start();
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    roost = await startTestRoost({ databaseUrl: url.toString() });
    const alice = await createTestUser(roost, 'alice');
    expect((await alice.api('/api/v1/statuses', { body: { status: 'before' } })).status).toBe(200);
    const health = await fetch(roost.at('/health'));
    expect([health.status, await health.text()]).toEqual([200, 'OK']);

    await proxy.stop();
    const during: Array<[string, number, string | null, unknown]> = [];
    const requests: Array<[string, () => Promise<{ status: number; headers: Headers; body: unknown }>]> = [
      ['public timeline', () => apiRequest(roost!, '/api/v1/timelines/public')],
      ['home timeline', () => alice.api('/api/v1/timelines/home')],
      ['post', () => alice.api('/api/v1/statuses', { body: { status: 'during' } })],
      ['account', () => apiRequest(roost!, `/api/v1/accounts/${alice.account.id}`)],
      ['health', () => apiRequest(roost!, '/health')],
    ];
    for (const [what, send] of requests) {
      const res = await send();
      during.push([what, res.status, res.headers.get('retry-after'), res.body]);
    }
    expect(during).toEqual(requests.map(([what]) => [what, 503, '5', UNAVAILABLE]));

    await proxy.start();
    await eventually(async () => (await fetch(roost!.at('/health'))).status === 200, 30_000, '/health to answer 200');
    const after = await eventually(async () => {
      const res = await alice.api('/api/v1/statuses', { body: { status: 'after' } });
      return res.status === 200 ? res : null;
    }, 30_000, 'a post to go through');
    expect(after.body.content).toBe('<p>after</p>');
    const timeline = await alice.api('/api/v1/timelines/home');
    expect(timeline.body.map((s: { content: string }) => s.content)).toEqual(['<p>after</p>', '<p>before</p>']);
  });
});
