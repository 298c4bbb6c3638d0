/**
 * rel="me" verification of profile fields against a local web server standing in for the outside
 * world: a field is verified when its page links back to the profile; the fetch refuses private
 * addresses (unless allowed), other schemes, endless redirects, oversized and slow pages.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import {
  fetchPageSafely,
  isNonPublicAddress,
  relMeLinks,
  verifiableUrl,
  verifyAccountLinks,
  UnsafeUrlError,
  VERIFY_LINKS_JOB,
} from '../../src/services/link-verification.ts';

let roost: TestRoost;
let me: TestUser;
let site: http.Server;
let base: string;
let profile: string;

beforeAll(async () => {
  roost = await startTestRoost();
  me = await createTestUser(roost, 'linker');
  profile = `${roost.url}/@linker`;
  site = http.createServer((req, res) => {
    const page = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(body);
    };
    switch (req.url) {
      case '/link':
        return page(200, `<!doctype html><html><head><link rel="me" href="${profile}"></head><body>hi</body></html>`);
      case '/anchor':
        return page(200, `<p><a class=x href='${profile.toUpperCase().replace('HTTP', 'http')}' rel="nofollow  me">me</a></p>`);
      case '/actor':
        return page(200, `<a rel=me href="${roost.url}/users/linker2">fediverse</a>`);
      case '/relative':
        return page(200, `<a rel="me" href="/elsewhere">not me</a>`);
      case '/none':
        return page(200, `<a href="${profile}">no rel</a><a rel="me" href="https://someone.else/@linker">other</a>`);
      case '/gone':
        return page(404, `<link rel="me" href="${profile}">`);
      case '/redirect':
        res.writeHead(302, { location: '/link' });
        return res.end();
      case '/loop':
        res.writeHead(301, { location: '/loop' });
        return res.end();
      case '/ftp':
        res.writeHead(302, { location: 'ftp://files.example/x' });
        return res.end();
      case '/huge':
        return page(200, `${'x'.repeat(1024 * 1024)}<link rel="me" href="${profile}">`);
      case '/slow':
        return; // never answers
      default:
        return page(404, 'not found');
    }
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  site?.closeAllConnections();
  await new Promise((resolve) => site?.close(resolve));
  await roost?.close();
});

const pendingJobs = async () =>
  (await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from jobs where kind = $1`, [VERIFY_LINKS_JOB]))[0]!.n;

describe('rel="me" verification', () => {
  it('verifies fields whose page links back, through a queued job, after update_credentials', async () => {
    const res = await me.api('/api/v1/accounts/update_credentials', {
      method: 'PATCH',
      body: {
        fields_attributes: [
          { name: 'Link', value: `${base}/link` },
          { name: 'Anchor', value: `${base}/anchor` },
          { name: 'Redirect', value: `${base}/redirect` },
          { name: 'None', value: `${base}/none` },
        ],
      },
    });
    expect(res.body.fields.map((f: { verified_at: string | null }) => f.verified_at)).toEqual([null, null, null, null]);
    const fields = await eventually(async () => {
      const f = (await me.api('/api/v1/accounts/verify_credentials')).body.fields as { name: string; verified_at: string | null }[];
      return f.filter((x) => x.verified_at).length === 3 ? f : null;
    }, 15_000, 'three fields verified');
    expect(fields.map((f) => [f.name, f.verified_at !== null])).toEqual([
      ['Link', true],
      ['Anchor', true],
      ['Redirect', true],
      ['None', false],
    ]);
    expect(fields[0]!.verified_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // The link rendered for the field carries rel="me".
    expect((await me.api('/api/v1/accounts/verify_credentials')).body.fields[0].value).toContain('rel="nofollow noopener me"');
    await eventually(async () => (await pendingJobs()) === 0, 15_000, 'the job to finish');
  });

  it('leaves unverified what does not link back or cannot be fetched safely', async () => {
    const other = await createTestUser(roost, 'linker2');
    await other.api('/api/v1/accounts/update_credentials', {
      method: 'PATCH',
      body: {
        fields_attributes: [
          { name: 'Gone', value: `${base}/gone` },
          { name: 'Loop', value: `${base}/loop` },
          { name: 'Huge', value: `${base}/huge` },
          { name: 'Text', value: `my site is ${base}/link` },
        ],
      },
    });
    await eventually(async () => (await pendingJobs()) === 0, 15_000, 'the job to finish');
    expect((await verifyAccountLinks(roost.services, other.account.id)).verified).toEqual([]);
    const fields = (await other.api('/api/v1/accounts/verify_credentials')).body.source.fields as { verified_at: string | null }[];
    expect(fields.map((f) => f.verified_at)).toEqual([null, null, null, null]);
    // A link to the actor URI counts too; a relative rel="me" elsewhere does not.
    await other.api('/api/v1/accounts/update_credentials', {
      method: 'PATCH',
      body: { fields_attributes: [{ name: 'Actor', value: `${base}/actor` }, { name: 'Relative', value: `${base}/relative` }] },
    });
    const verified = await eventually(async () => {
      const f = (await other.api('/api/v1/accounts/verify_credentials')).body.source.fields as { name: string; verified_at: string | null }[];
      return f[0]?.name === 'Actor' && f[0].verified_at ? f : null;
    }, 15_000, 'the actor link verified');
    await eventually(async () => (await pendingJobs()) === 0, 15_000, 'the job to finish');
    expect(verified[1]!.verified_at).toBeNull();
    expect((await verifyAccountLinks(roost.services, other.account.id)).verified).toEqual([]);
  });
});

describe('the safe fetch', () => {
  const opts = { allowPrivateAddresses: true, userAgent: 'test' };

  it('refuses loopback and private addresses unless allowed, by literal and by name', async () => {
    await expect(fetchPageSafely(new URL(`${base}/link`), { ...opts, allowPrivateAddresses: false })).rejects.toThrow(
      new UnsafeUrlError('127.0.0.1 is not a public address'),
    );
    const byName = new URL(`${base}/link`);
    byName.hostname = 'localhost';
    await expect(fetchPageSafely(byName, { ...opts, allowPrivateAddresses: false })).rejects.toThrow('localhost resolves to a non-public address');
    expect((await fetchPageSafely(new URL(`${base}/link`), opts)).status).toBe(200);
  });

  it('follows at most three redirects, only to http(s), within the size and time limits', async () => {
    const redirected = await fetchPageSafely(new URL(`${base}/redirect`), opts);
    expect([redirected.url.href, redirected.status]).toEqual([`${base}/link`, 200]);
    await expect(fetchPageSafely(new URL(`${base}/loop`), opts)).rejects.toThrow('more than 3 redirects');
    await expect(fetchPageSafely(new URL(`${base}/ftp`), opts)).rejects.toThrow('ftp: URLs are not fetched');
    await expect(fetchPageSafely(new URL(`${base}/huge`), opts)).rejects.toThrow('the page is larger than 1048576 bytes');
    const t0 = performance.now();
    await expect(fetchPageSafely(new URL(`${base}/slow`), { ...opts, timeoutMs: 300 })).rejects.toThrow(/timeout|aborted/i);
    expect(performance.now() - t0).toBeLessThan(3_000);
  });

  it('knows which addresses are not public', () => {
    const cases: [string, boolean][] = [
      ['127.0.0.1', true], ['10.1.2.3', true], ['172.20.0.1', true], ['192.168.1.1', true], ['169.254.169.254', true], ['100.64.0.1', true],
      ['0.0.0.0', true], ['::1', true], ['::', true], ['::ffff:127.0.0.1', true], ['fd00::1', true], ['fe80::1', true],
      ['8.8.8.8', false], ['93.184.216.34', false], ['2606:4700:4700::1111', false], ['not an ip', true],
    ];
    expect(cases.map(([ip]) => [ip, isNonPublicAddress(ip)])).toEqual(cases);
  });

  it('reads rel="me" links from <a> and <link>, and field values that are one URL', () => {
    const page = new URL('https://site.example/about/');
    const html = `<LINK REL="Me" HREF="https://a.example/@x"><a href="/rel" rel="me nofollow">r</a><a rel="nofollow" href="https://no.example">n</a>
      <a rel="me" href="https://b.example/@y?q=1&amp;r=2">e</a><area rel="me" href="https://c.example"><a rel="me">no href</a>`;
    expect(relMeLinks(html, page)).toEqual(['https://a.example/@x', 'https://site.example/rel', 'https://b.example/@y?q=1&r=2']);
    expect(['https://x.example/p', ' http://x.example ', 'see https://x.example', 'ftp://x.example', 'https://u:p@x.example', 'x.example'].map((v) => verifiableUrl(v)?.href ?? null)).toEqual([
      'https://x.example/p',
      'http://x.example/',
      null,
      null,
      null,
      null,
    ]);
  });
});
