// Rate limits through the real server: X-RateLimit-* on every API answer, 429 with Retry-After and
// Mastodon's body past a limit, per token and per IP apart, the tighter sign-up, password and
// upload limits; and sign-in takes as long for an unknown e-mail as for a known one. These clients
// come from loopback, exempt by default: the instances here count it (exemptLoopback off).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let alice: TestUser;
let app: { client_id: string; client_secret: string };

beforeAll(async () => {
  roost = await startTestRoost({
    rateLimits: {
      exemptLoopback: false,
      perIp: '6/300',
      perToken: '4/300',
      signIn: '3/300',
      signInPerLogin: '1000/300',
      signUp: '2/1800',
      uploads: '1/1800',
    },
  });
  alice = await createTestUser(roost, 'alice', { password: 'correct horse battery' });
  const res = await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Limits', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' } });
  app = res.body;
});

afterAll(async () => {
  await roost?.close();
});

function passwordGrant(username: string, password: string): Promise<Response> {
  return fetch(roost.at('/oauth/token'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'password', client_id: app.client_id, client_secret: app.client_secret, username, password, scope: 'read' }),
  });
}

describe('per token', () => {
  it('counts down in the headers, then answers 429 with Retry-After and the JSON error', async () => {
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await alice.api('/api/v1/accounts/verify_credentials');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('4');
      seen.push(Number(res.headers.get('x-ratelimit-remaining')));
      const reset = Date.parse(res.headers.get('x-ratelimit-reset')!);
      expect(reset).toBeGreaterThan(Date.now());
      expect(reset).toBeLessThanOrEqual(Date.now() + 300_000);
    }
    expect(seen).toEqual([3, 2, 1, 0]);
    const res = await alice.api('/api/v1/accounts/verify_credentials');
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: 'Too many requests' });
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(res.headers.get('x-ratelimit-limit')).toBe('4');
    const retry = Number(res.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(250);
    expect(retry).toBeLessThanOrEqual(300);
  });

  it('another token (and so the other limits) is unaffected', async () => {
    const bob = await createTestUser(roost, 'bob');
    const res = await bob.api('/api/v1/accounts/verify_credentials');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('3');
  });

  it('an upload past the upload limit is refused before its body is read', async () => {
    const carol = await createTestUser(roost, 'carol');
    const form = () => {
      const f = new FormData();
      f.append('display_name', 'Carol');
      return f;
    };
    const send = () => fetch(roost.at('/api/v1/accounts/update_credentials'), { method: 'PATCH', headers: { authorization: `Bearer ${carol.token}` }, body: form() });
    expect((await send()).status).toBe(200);
    const second = await send();
    expect(second.status).toBe(429);
    expect(await second.json()).toEqual({ error: 'Too many requests' });
    expect(second.headers.get('x-ratelimit-limit')).toBe('1');
  });
});

describe('per IP', () => {
  it('sign-ups are limited apart from the general per-IP budget', async () => {
    // Run against a fresh instance: the per-IP budget above is shared by everything from 127.0.0.1.
    const r = await startTestRoost({ rateLimits: { exemptLoopback: false, signUp: '2/1800' } });
    try {
      const created = await apiRequest(r, '/api/v1/apps', { body: { client_name: 'S', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' } });
      const tokenRes = await fetch(r.at('/oauth/token'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: created.body.client_id, client_secret: created.body.client_secret, scope: 'write' }),
      });
      const appToken = ((await tokenRes.json()) as { access_token: string }).access_token;
      const signUp = (n: number) =>
        apiRequest(r, '/api/v1/accounts', { token: appToken, body: { username: `u${n}`, email: `u${n}@example.test`, password: 'a long password here', agreement: true, locale: 'en' } });
      expect((await signUp(1)).status).toBe(200);
      expect((await signUp(2)).status).toBe(200);
      const third = await signUp(3);
      expect(third.status).toBe(429);
      expect(third.body).toEqual({ error: 'Too many requests' });
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(1700);
    } finally {
      await r.close();
    }
  });

  it('password attempts are limited per IP, whatever the account', async () => {
    const statuses: number[] = [];
    for (const name of ['alice', 'nobody', 'alice@example.test', 'alice']) statuses.push((await passwordGrant(name, 'wrong')).status);
    expect(statuses).toEqual([400, 400, 400, 429]);
  });

  it('requests without a token count per IP', async () => {
    // 6 per 5 minutes from this address, some already spent by the requests above without a token.
    let last: Response | undefined;
    const remaining: number[] = [];
    for (let i = 0; i < 8; i++) {
      last = await fetch(roost.at('/api/v1/instance'));
      if (last.status !== 200) break;
      expect(last.headers.get('x-ratelimit-limit')).toBe('6');
      remaining.push(Number(last.headers.get('x-ratelimit-remaining')));
    }
    expect(last!.status).toBe(429);
    expect(await last!.json()).toEqual({ error: 'Too many requests' });
    expect(remaining.at(-1)).toBe(0);
    // a token's own budget is separate
    const dora = await createTestUser(roost, 'dora');
    expect((await dora.api('/api/v1/accounts/verify_credentials')).status).toBe(200);
  });
});

describe('sign-in timing', () => {
  it('an unknown e-mail costs about as long as a wrong password for a known one', async () => {
    const r = await startTestRoost();
    try {
      await createTestUser(r, 'erin', { password: 'the right password' });
      const created = await apiRequest(r, '/api/v1/apps', { body: { client_name: 'T', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read' } });
      const grant = (username: string) =>
        fetch(r.at('/oauth/token'), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ grant_type: 'password', client_id: created.body.client_id, client_secret: created.body.client_secret, username, password: 'wrong', scope: 'read' }),
        });
      // warm up both paths (the unknown-user hash is made once)
      await grant('erin@example.test');
      await grant('nobody@example.test');
      const time = async (username: string) => {
        const t0 = performance.now();
        for (let i = 0; i < 6; i++) expect((await grant(username)).status).toBe(400);
        return performance.now() - t0;
      };
      const known = await time('erin@example.test');
      const unknown = await time('nobody@example.test');
      // Before: 44 ms against 3 ms (ratio ~15). One scrypt each now: close to 1.
      expect(unknown / known).toBeGreaterThan(0.5);
      expect(unknown / known).toBeLessThan(2);
    } finally {
      await r.close();
    }
  });
});
