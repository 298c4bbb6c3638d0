// The client address behind a reverse proxy, through the real server: from a trusted proxy (the
// loopback default) X-Forwarded-For names the client, the right-most address that is not a proxy
// of ours, so each client gets its own per-IP budget; from an untrusted peer the header is ignored
// and every request counts against the peer's own address. (Loopback clients are exempt by
// default: these instances count them, so that the proxy's own requests show their budget.)
import { afterAll, describe, expect, it } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { loadConfig } from '../../config/index.ts';
import { apiRequest } from '../helpers/auth.ts';

const started: TestRoost[] = [];
afterAll(async () => {
  for (const r of started) await r.close();
});

async function start(overrides: Record<string, unknown>): Promise<TestRoost> {
  const r = await startTestRoost({ ...overrides, rateLimits: { exemptLoopback: false, perIp: '2/300', ...(overrides.rateLimits as object) } });
  started.push(r);
  return r;
}

/** An unauthenticated API request (counted per IP) carrying X-Forwarded-For. */
async function asClient(roost: TestRoost, forwardedFor: string | null): Promise<{ status: number; remaining: string | null }> {
  const headers: Record<string, string> = {};
  if (forwardedFor !== null) headers['x-forwarded-for'] = forwardedFor;
  const res = await fetch(roost.at('/api/v1/instance'), { headers });
  await res.arrayBuffer();
  return { status: res.status, remaining: res.headers.get('x-ratelimit-remaining') };
}

describe('behind a trusted proxy (loopback, the default)', () => {
  it('gives each forwarded client its own per-IP budget', async () => {
    const roost = await start({});
    expect(roost.config.trustedProxies).toEqual(['127.0.0.1', '::1']);
    expect(await asClient(roost, '203.0.113.5')).toEqual({ status: 200, remaining: '1' });
    expect(await asClient(roost, '203.0.113.5')).toEqual({ status: 200, remaining: '0' });
    expect((await asClient(roost, '203.0.113.5')).status).toBe(429);
    // Another client behind the same proxy still has its whole budget.
    expect(await asClient(roost, '198.51.100.7')).toEqual({ status: 200, remaining: '1' });
    // A client cannot escape by prepending forged hops: the right-most untrusted address counts.
    expect((await asClient(roost, '192.0.2.99, 203.0.113.5')).status).toBe(429);
    // Hops that are proxies of ours are skipped (a chain of two local proxies).
    expect(await asClient(roost, '198.51.100.8, 127.0.0.1')).toEqual({ status: 200, remaining: '1' });
    // Without the header the proxy's own address is the client, with a budget of its own.
    expect(await asClient(roost, null)).toEqual({ status: 200, remaining: '1' });
    // Garbage in the header is skipped, not taken for an address.
    expect(await asClient(roost, 'not-an-ip, <script>')).toEqual({ status: 200, remaining: '0' });
  });

  it('counts password attempts per forwarded client', async () => {
    const roost = await start({ rateLimits: { signIn: '1/300' } });
    const app = (await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Proxy', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read' } })).body;
    const attempt = (xff: string) =>
      fetch(roost.at('/oauth/token'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': xff },
        body: JSON.stringify({ grant_type: 'password', client_id: app.client_id, client_secret: app.client_secret, scope: 'read', username: 'a@b.test', password: 'wrong' }),
      }).then(async (r) => (await r.arrayBuffer(), r.status));
    const first = await attempt('203.0.113.20');
    expect(first).not.toBe(429);
    expect(await attempt('203.0.113.20')).toBe(429);
    expect(await attempt('203.0.113.21')).toBe(first);
  });
});

describe('from a peer that is not a trusted proxy', () => {
  it('ignores a forged X-Forwarded-For and counts the peer address', async () => {
    const roost = await start({ trustedProxies: ['10.0.0.0/8'] });
    expect(await asClient(roost, '203.0.113.5')).toEqual({ status: 200, remaining: '1' });
    expect(await asClient(roost, '198.51.100.7')).toEqual({ status: 200, remaining: '0' });
    expect((await asClient(roost, '192.0.2.1')).status).toBe(429);
  });

  it('trusts nobody with an empty list', async () => {
    const roost = await start({ trustedProxies: [] });
    expect(await asClient(roost, '203.0.113.5')).toEqual({ status: 200, remaining: '1' });
    expect(await asClient(roost, '198.51.100.7')).toEqual({ status: 200, remaining: '0' });
  });
});

describe('configuration', () => {
  it('reads ROOST_TRUSTED_PROXIES as addresses and CIDR ranges, and refuses anything else', () => {
    expect(loadConfig({ env: { ROOST_TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8,192.168.1.1' } }).trustedProxies).toEqual(['10.0.0.0/8', 'fd00::/8', '192.168.1.1']);
    expect(loadConfig({ env: { ROOST_TRUSTED_PROXIES: '' } }).trustedProxies).toEqual([]);
    expect(() => loadConfig({ env: { ROOST_TRUSTED_PROXIES: '10.0.0.0/33' } })).toThrow(/ROOST_TRUSTED_PROXIES.*not an IP address or CIDR range/);
    expect(() => loadConfig({ env: { ROOST_TRUSTED_PROXIES: 'proxy.local' } })).toThrow(/not an IP address or CIDR range/);
  });
});
