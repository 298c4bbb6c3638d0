// Streaming connections through the real server: a WebSocket upgrade counts against the rate
// limits as an SSE request does; an account holds at most streaming.maxConnectionsPerAccount
// connections (WebSocket and SSE together), past which the upgrade or the request is answered 429
// with Mastodon's body, and a connection that ends frees its place; a socket whose subscription is
// refused for scope gets its error frame and is then closed.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser } from '../helpers/auth.ts';
import { SseClient, WsClient } from './client.ts';

const started: TestRoost[] = [];
const sockets: Duplex[] = [];
afterAll(async () => {
  for (const s of sockets) s.destroy();
  for (const r of started) await r.close();
});

async function start(overrides: Record<string, unknown>): Promise<TestRoost> {
  const r = await startTestRoost(overrides);
  started.push(r);
  return r;
}

interface Upgrade {
  status: number;
  body: string;
  socket: Duplex | null;
}

/** A raw WebSocket upgrade of /api/v1/streaming: 101 with its socket, or the refusal's status and body. */
function upgrade(roost: TestRoost, token: string, headers: Record<string, string> = {}): Promise<Upgrade> {
  const url = new URL(roost.at('/api/v1/streaming?stream=user'));
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': randomBytes(16).toString('base64'),
        authorization: `Bearer ${token}`,
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      sockets.push(socket);
      socket.on('error', () => {});
      resolve({ status: res.statusCode ?? 0, body: '', socket });
    });
    req.on('response', async (res) => {
      let body = '';
      for await (const chunk of res) body += chunk;
      resolve({ status: res.statusCode ?? 0, body, socket: null });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('WebSocket upgrades and the rate limit', () => {
  it('count against the user as any API request does', async () => {
    const roost = await start({ rateLimits: { perToken: '3/300' } });
    const alice = await createTestUser(roost, 'alice');
    // From a client behind the (trusted, loopback) proxy: loopback itself is exempt.
    const client = { 'x-forwarded-for': '203.0.113.60' };
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await upgrade(roost, alice.token, client)).status);
    expect(statuses).toEqual([101, 101, 101]);
    const over = await upgrade(roost, alice.token, client);
    expect(over.status).toBe(429);
    expect(JSON.parse(over.body)).toEqual({ error: 'Too many requests' });
    // The same user's REST requests share that budget.
    expect((await alice.api('/api/v1/accounts/verify_credentials', { headers: client })).status).toBe(429);
    // An upgrade with a made-up token counts under the address (its budget is whole): 401, not 429.
    const bogus = await upgrade(roost, randomBytes(24).toString('base64url'), client);
    expect(bogus.status).toBe(401);
    expect(JSON.parse(bogus.body)).toEqual({ error: 'Invalid access token' });
  });
});

describe('streaming connections per account', () => {
  it('are capped, WebSocket and SSE together, and a closed one frees its place', async () => {
    const roost = await start({ streaming: { maxConnectionsPerAccount: 2 } });
    expect(roost.config.streaming.maxConnectionsPerAccount).toBe(2);
    const alice = await createTestUser(roost, 'alice');
    const bob = await createTestUser(roost, 'bob');

    const sse = await SseClient.open(roost, '/api/v1/streaming/user', alice.token);
    expect(sse.status).toBe(200);
    const first = await upgrade(roost, alice.token);
    expect(first.status).toBe(101);

    const third = await upgrade(roost, alice.token);
    expect(third.status).toBe(429);
    expect(JSON.parse(third.body)).toEqual({ error: 'Too many requests' });
    const thirdSse = await SseClient.open(roost, '/api/v1/streaming/user', alice.token);
    expect(thirdSse.status).toBe(429);
    expect(JSON.parse(thirdSse.text)).toEqual({ error: 'Too many requests' });

    // Another account is not affected.
    expect((await upgrade(roost, bob.token)).status).toBe(101);

    // The WebSocket goes: its place is free again.
    first.socket!.destroy();
    await eventually(async () => {
      const again = await upgrade(roost, alice.token);
      if (again.status === 101) return true;
      expect(again.status).toBe(429);
      return false;
    });
    // The SSE connection goes: its place too.
    sse.abort.abort();
    await eventually(async () => {
      const again = await SseClient.open(roost, '/api/v1/streaming/user', alice.token);
      if (again.status === 200) {
        again.abort.abort();
        return true;
      }
      expect(again.status).toBe(429);
      return false;
    });
  });

  it('default to 20', async () => {
    const roost = await start({});
    expect(roost.config.streaming.maxConnectionsPerAccount).toBe(20);
    const carol = await createTestUser(roost, 'carol');
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await upgrade(roost, carol.token)).status);
    expect(statuses.filter((s) => s === 101)).toHaveLength(20);
    expect(statuses[20]).toBe(429);
  });
});

describe('a subscription refused for scope', () => {
  it('gets its error frame, then the socket is closed', async () => {
    const roost = await start({});
    const dora = await createTestUser(roost, 'dora', { scopes: ['read:notifications'] });
    const closeCode = (c: WsClient) => new Promise<number>((resolve) => c.ws.addEventListener('close', (e) => resolve((e as CloseEvent).code)));

    // Named in the upgrade.
    const named = await WsClient.open(roost, `?stream=user&access_token=${dora.token}`);
    const namedClosed = closeCode(named);
    expect(await namedClosed).toBe(1008);
    expect(named.frames).toEqual([{ error: 'Access token does not have the required scopes', status: 401 }]);

    // Asked for by a message: a bad request keeps the socket open, a scope refusal closes it.
    const asked = await WsClient.open(roost, `?access_token=${dora.token}`);
    const askedClosed = closeCode(asked);
    asked.send('not json');
    await asked.waitFor((f) => f.error === 'Error parsing request');
    asked.send({ type: 'subscribe', stream: 'user:notification' });
    asked.send({ type: 'subscribe', stream: 'public' });
    expect(await askedClosed).toBe(1008);
    expect(asked.frames).toEqual([
      { error: 'Error parsing request', status: 400 },
      { error: 'Access token does not have the required scopes', status: 401 },
    ]);
  });
});
