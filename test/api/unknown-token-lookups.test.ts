// Made-up bearer strings cost a token lookup each (issue 24, item 1 and the brief's item 5): they
// count under the client address, and once it is over its limit a string this process has not
// seen valid lately is not looked up at all (the request is the 429 of an anonymous one), while a
// user's token seen before still passes from that address and counts under the user, as Mastodon.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestRoost, watchStatements, type TestRoost } from '../helpers/roost.ts';
import { createTestUser } from '../helpers/auth.ts';
import { hashSecret } from '../../src/services/tokens.ts';

let roost: TestRoost | undefined;
afterAll(async () => roost?.close());

const randomToken = () => randomBytes(24).toString('base64url');

async function as(client: string, path: string, token?: string): Promise<{ status: number; limit: string | null; remaining: string | null }> {
  const headers: Record<string, string> = { 'x-forwarded-for': client };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const res = await fetch(roost!.at(path), { headers });
  await res.arrayBuffer();
  return { status: res.status, limit: res.headers.get('x-ratelimit-limit'), remaining: res.headers.get('x-ratelimit-remaining') };
}

/** A raw WebSocket upgrade of /api/v1/streaming with a bearer token: its status (101 or the refusal's). */
function upgrade(client: string, token: string): Promise<number> {
  const url = new URL(roost!.at('/api/v1/streaming?stream=user'));
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
        'x-forwarded-for': client,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The token lookups (reads/viewer.ts's statement) made while `fn` runs. */
async function lookups(fn: () => Promise<unknown>): Promise<number> {
  let n = 0;
  await watchStatements(roost!, (text) => {
    if (/from oauth_access_tokens t\b/.test(text)) n++;
  }, fn);
  return n;
}

describe('bearer strings from an address over its limit', () => {
  it('are not looked up unless seen valid; a known user still counts as the user', { timeout: 60_000 }, async () => {
    roost = await startTestRoost({ rateLimits: { perIp: '5/300', perToken: '50/300' } });
    const alice = await createTestUser(roost, 'alice');
    const address = '203.0.113.77';

    // Up to the limit each made-up string is looked up once and counted under the address.
    const first: number[] = [];
    expect(await lookups(async () => {
      for (let i = 0; i < 5; i++) first.push((await as(address, '/api/v1/timelines/home', randomToken())).status);
    })).toBe(5);
    expect(first).toEqual([401, 401, 401, 401, 401]);

    // Past it: 200 more strings, 429 each, not one lookup.
    const past: number[] = [];
    expect(await lookups(async () => {
      for (let i = 0; i < 200; i++) past.push((await as(address, '/api/v1/timelines/home', randomToken())).status);
    })).toBe(0);
    expect(new Set(past)).toEqual(new Set([429]));

    // A user's token this process issued passes from that address, counted under the user.
    const mine = await as(address, '/api/v1/timelines/home', alice.token);
    expect([mine.status, mine.limit, mine.remaining]).toEqual([200, '50', '49']);

    // A valid token this process has never seen: refused like an anonymous request while the
    // address is over its limit (no lookup); once it is seen valid from elsewhere, it passes here too.
    const other = await createTestUser(roost, 'other');
    const stranger = randomToken();
    await roost.services.db.sql.query(
      `insert into oauth_access_tokens (id, user_id, token_hash, scopes, created_at) values ($1, $2, $3, 'read', now())`,
      [roost.services.ids.next(), other.user.id, hashSecret(stranger)],
    );
    expect(await lookups(async () => expect((await as(address, '/api/v1/timelines/home', stranger)).status).toBe(429))).toBe(0);
    expect((await as('198.51.100.9', '/api/v1/timelines/home', stranger)).status).toBe(200);
    expect((await as(address, '/api/v1/timelines/home', stranger)).status).toBe(200);
  });

  it('nor on a WebSocket upgrade', { timeout: 30_000 }, async () => {
    const address = '203.0.113.78';
    for (let i = 0; i < 5; i++) await as(address, '/api/v1/instance');
    const statuses: number[] = [];
    expect(await lookups(async () => {
      for (let i = 0; i < 20; i++) {
        statuses.push(await upgrade(address, randomToken()));
      }
    })).toBe(0);
    expect(new Set(statuses)).toEqual(new Set([429]));
  });
});
