// Whose count a request goes to, through the real server: a token counts under its user only once
// it resolves (two tokens of one user share a count), a made-up bearer string counts under the
// client address like no token (and so cannot buy a fresh budget for app creation or uploads, nor
// write a shared counter row); loopback clients are exempt unless configured otherwise, while a
// client forwarded by a trusted proxy on loopback is counted by its forwarded address; and the
// per-login sign-in limit counts an account's username and e-mail address as one login.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser } from '../helpers/auth.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';

const started: TestRoost[] = [];
afterAll(async () => {
  for (const r of started) await r.close();
});

async function start(rateLimits: Record<string, unknown>): Promise<TestRoost> {
  const r = await startTestRoost({ rateLimits });
  started.push(r);
  return r;
}

const randomToken = () => randomBytes(24).toString('base64url');

/** A request as a client at `client` behind the (trusted, loopback) proxy, with an optional bearer token. */
async function as(
  roost: TestRoost,
  client: string | null,
  path: string,
  init: { token?: string; method?: string; body?: string | FormData; headers?: Record<string, string> } = {},
): Promise<{ status: number; limit: string | null; body: unknown }> {
  const headers: Record<string, string> = { ...init.headers };
  if (client !== null) headers['x-forwarded-for'] = client;
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  const res = await fetch(roost.at(path), { method: init.method ?? 'GET', headers, body: init.body });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, limit: res.headers.get('x-ratelimit-limit'), body };
}

describe('a bearer string that resolves to nothing', () => {
  it('counts under the client address: random tokens share its one budget', async () => {
    const roost = await start({ perIp: '3/300', perToken: '1000/300' });
    const seen: Array<[number, string | null]> = [];
    for (let i = 0; i < 3; i++) {
      const r = await as(roost, '203.0.113.10', '/api/v1/timelines/public', { token: randomToken() });
      seen.push([r.status, r.limit]);
    }
    // Refused by the route (401), but counted against the address's limit of 3, not a token's.
    expect(seen).toEqual([
      [401, '3'],
      [401, '3'],
      [401, '3'],
    ]);
    const over = await as(roost, '203.0.113.10', '/api/v1/timelines/public', { token: randomToken() });
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ error: 'Too many requests' });
    // No token at all is the same budget.
    expect((await as(roost, '203.0.113.10', '/api/v1/instance')).status).toBe(429);
    // Another address is untouched.
    expect((await as(roost, '203.0.113.11', '/api/v1/instance')).status).toBe(200);
  });

  it('cannot create OAuth apps from an address already at its limit', async () => {
    const roost = await start({ perIp: '2/300', perToken: '1000/300' });
    const create = (token?: string) =>
      as(roost, '198.51.100.20', '/api/v1/apps', {
        method: 'POST',
        token,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'x', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read' }),
      });
    expect((await create()).status).toBe(200);
    expect((await create()).status).toBe(200);
    expect((await create()).status).toBe(429);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await create(randomToken())).status);
    expect(statuses).toEqual([429, 429, 429, 429, 429]);
  });

  it('refused uploads with random tokens write no shared counter and spend no upload budget', async () => {
    const roost = await start({ perIp: '1000/300', perToken: '1000/300', uploads: '1/1800' });
    const alice = await createTestUser(roost, 'alice');
    const upload = (token: string) => {
      const form = new FormData();
      form.append('file', new Blob([Buffer.from('not really a png')], { type: 'image/png' }), 'a.png');
      return as(roost, '192.0.2.30', '/api/v2/media', { method: 'POST', token, body: form });
    };
    for (let i = 0; i < 40; i++) expect((await upload(randomToken())).status).toBe(401);
    // On PostgreSQL the upload counts live in rate_limits (made on first use): no row for any of them.
    const [{ rows }] = await roost.services.db.sql.query<{ rows: string | null }>(
      `select case when to_regclass('rate_limits') is null then null else (select count(*)::text from rate_limits) end as rows`,
    );
    expect(rows === null || rows === '0').toBe(true);
    // The user's own upload budget (1) is whole: the first is counted and answered, the second refused.
    expect((await upload(alice.token)).status).not.toBe(429);
    expect((await upload(alice.token)).status).toBe(429);
  });
});

describe('a token that resolves', () => {
  it('counts under its user: two tokens of one user share one budget', async () => {
    const roost = await start({ perToken: '4/300', perIp: '1000/300' });
    const alice = await createTestUser(roost, 'alice');
    const { token: second } = await issueAccessToken(roost.services, { applicationId: null, userId: alice.user.id, scopes: ['read'] });
    const statuses: number[] = [];
    for (const token of [alice.token, second, alice.token, second, second]) {
      const r = await as(roost, '203.0.113.40', '/api/v1/accounts/verify_credentials', { token });
      statuses.push(r.status);
      expect(r.limit).toBe('4');
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    // From another address the user's budget is still spent (it is the user's, not the address's).
    expect((await as(roost, '203.0.113.41', '/api/v1/accounts/verify_credentials', { token: alice.token })).status).toBe(429);
    // Another user is untouched.
    const bob = await createTestUser(roost, 'bob');
    expect((await as(roost, '203.0.113.40', '/api/v1/accounts/verify_credentials', { token: bob.token })).status).toBe(200);
  });
});

describe('loopback clients', () => {
  it('are not counted by default; a client forwarded by a loopback proxy is', async () => {
    const roost = await start({ perIp: '2/300', signIn: '1/300' });
    expect(roost.config.rateLimits.exemptLoopback).toBe(true);
    for (let i = 0; i < 5; i++) {
      const r = await as(roost, null, '/api/v1/instance');
      expect(r.status).toBe(200);
      expect(r.limit).toBeNull();
    }
    // A random token from loopback: not counted either (the route's 401, never 429).
    for (let i = 0; i < 3; i++) expect((await as(roost, null, '/api/v1/timelines/public', { token: randomToken() })).status).toBe(401);
    // Password attempts from loopback are not counted (the sign-in limit is 1).
    const app = (await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'L', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read' } })).body;
    const grant = (client: string | null) =>
      as(roost, client, '/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'password', client_id: app.client_id, client_secret: app.client_secret, username: 'x@y.test', password: 'no', scope: 'read' }),
      });
    expect([(await grant(null)).status, (await grant(null)).status, (await grant(null)).status]).toEqual([400, 400, 400]);
    // Through the proxy (X-Forwarded-For from a trusted loopback peer) the forwarded client counts.
    expect([(await grant('203.0.113.50')).status, (await grant('203.0.113.50')).status]).toEqual([400, 429]);
    const forwarded = [await as(roost, '203.0.113.51', '/api/v1/instance'), await as(roost, '203.0.113.51', '/api/v1/instance'), await as(roost, '203.0.113.51', '/api/v1/instance')];
    expect(forwarded.map((r) => [r.status, r.limit])).toEqual([
      [200, '2'],
      [200, '2'],
      [429, '2'],
    ]);
    // A forwarded chain that ends in loopback hops still names its client.
    expect((await as(roost, '203.0.113.51, 127.0.0.1', '/api/v1/instance')).status).toBe(429);
  });

  it('are counted with rateLimits.exemptLoopback off', async () => {
    const roost = await start({ perIp: '2/300', exemptLoopback: false });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await as(roost, null, '/api/v1/instance')).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});

describe('sign-in per login', () => {
  it("counts an account's username and e-mail address as one login, whatever the address", async () => {
    const roost = await start({ signIn: '1000/300', signInPerLogin: '3/3600' });
    await createTestUser(roost, 'erin', { password: 'the right password' });
    const app = (await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'P', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read' } })).body;
    let n = 0;
    const grant = (username: string, password = 'wrong') =>
      as(roost, `192.0.2.${100 + n++}`, '/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'password', client_id: app.client_id, client_secret: app.client_secret, username, password, scope: 'read' }),
      }).then((r) => r.status);
    const statuses: number[] = [];
    for (const login of ['erin', 'erin@example.test', 'ERIN', 'Erin@Example.test']) statuses.push(await grant(login));
    expect(statuses).toEqual([400, 400, 400, 429]);
    // Even the right password waits now, under either name.
    expect(await grant('erin@example.test', 'the right password')).toBe(429);
    expect(await grant('erin', 'the right password')).toBe(429);
    // A login that names nobody has a count of its own.
    expect(await grant('nobody@example.test')).toBe(400);
  });
});
