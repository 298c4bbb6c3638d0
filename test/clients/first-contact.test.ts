/**
 * What a Mastodon app trips over on first contact (issue 8, items 10–15), through the real server:
 * default images, start-up endpoints, extended description time, ids in a GET body, HEAD,
 * attribution domains, registration errors, bio links, suggestions.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { request as httpRequest } from 'node:http';
import sharp from 'sharp';
import { formatPlainText, formatFieldValue, mentionedHandles, extractEntities } from '../../src/lib/text-format.ts';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, apiRequest, type TestUser } from '../helpers/auth.ts';

let r: TestRoost;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  r = await startTestRoost({ instance: { title: 'Roost', description: 'A **long** description.' } });
  alice = await createTestUser(r, 'alice');
  bob = await createTestUser(r, 'bob');
});
afterAll(async () => {
  await r?.close();
});

describe('default avatar and header', () => {
  it('serves real PNGs at the paths the account entity points at', async () => {
    const me = await alice.api('/api/v1/accounts/verify_credentials');
    expect(me.body.avatar).toBe(r.at('/avatars/original/missing.png'));
    expect(me.body.header).toBe(r.at('/headers/original/missing.png'));
    for (const [url, width, height] of [
      [me.body.avatar, 400, 400],
      [me.body.header, 1500, 500],
    ] as const) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
      expect(meta.format).toBe('png');
      expect([meta.width, meta.height]).toEqual([width, height]);
    }
  });
});

describe('endpoints clients call at start-up', () => {
  it('GET /api/v1/instance/translation_languages answers {} without a translation backend', async () => {
    const res = await apiRequest(r, '/api/v1/instance/translation_languages');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
  });

  it('GET /health answers 200 OK', async () => {
    const res = await fetch(r.at('/health'));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('OK');
  });

  it('endorse/unendorse are pin/unpin under their 4.4 names, listed by /api/v1/accounts/:id/endorsements', async () => {
    const carol = await createTestUser(r, 'carol');
    await carol.api(`/api/v1/accounts/${bob.account.id}/follow`, { method: 'POST' });
    const endorsed = await carol.api(`/api/v1/accounts/${bob.account.id}/endorse`, { method: 'POST' });
    expect(endorsed.status).toBe(200);
    expect(endorsed.body.endorsed).toBe(true);
    // The same row the old names and /api/v1/endorsements see.
    expect((await carol.api('/api/v1/endorsements')).body.map((a: any) => a.id)).toEqual([bob.account.id]);
    // Public: anyone (no token) sees whom carol features.
    const listed = await apiRequest(r, `/api/v1/accounts/${carol.account.id}/endorsements`);
    expect(listed.status).toBe(200);
    expect(listed.body.map((a: any) => a.acct)).toEqual(['bob']);
    expect((await apiRequest(r, '/api/v1/accounts/999999999/endorsements')).status).toBe(404);

    const undone = await carol.api(`/api/v1/accounts/${bob.account.id}/unendorse`, { method: 'POST' });
    expect(undone.status).toBe(200);
    expect(undone.body.endorsed).toBe(false);
    expect((await apiRequest(r, `/api/v1/accounts/${carol.account.id}/endorsements`)).body).toEqual([]);
    // The pre-4.4 name still works, on the same implementation.
    expect((await carol.api(`/api/v1/accounts/${bob.account.id}/pin`, { method: 'POST' })).body.endorsed).toBe(true);
    expect((await apiRequest(r, `/api/v1/accounts/${carol.account.id}/endorsements`)).body.map((a: any) => a.acct)).toEqual(['bob']);
  });
});

/** A request with a JSON body whatever the method (fetch refuses a body on GET), as some client libraries send. */
function rawRequest(url: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; text: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = httpRequest(url, { method, headers: { ...headers, ...(data ? { 'content-type': 'application/json', 'content-length': String(data.length) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const all = Buffer.concat(chunks);
        resolve({ status: res.statusCode!, headers: res.headers, text: all.toString('utf8'), bytes: all.length });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}

describe('what a client library sends and reads', () => {
  it('gives the configured extended description a stable updated_at', async () => {
    const first = await apiRequest(r, '/api/v1/instance/extended_description');
    expect(first.body.content).toContain('<strong>long</strong>');
    expect(first.body.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(first.body.updated_at)).toBeLessThanOrEqual(Date.now());
    const [row] = await r.services.db.sql.query<{ updated_at: Date }>(`select updated_at from configured_texts where name = 'extended_description'`);
    expect(new Date(row!.updated_at).toISOString()).toBe(first.body.updated_at);
    // The same text keeps its time.
    await r.services.db.sql.query(`update configured_texts set updated_at = '2026-01-02T03:04:05Z' where name = 'extended_description'`);
    const { buildInstanceView } = await import('../../src/services/instance.ts');
    expect((await buildInstanceView(r.services)).extendedDescription.updatedAt?.toISOString()).toBe('2026-01-02T03:04:05.000Z');
  });

  it('reads ids sent in the JSON body of a GET (familiar_followers, relationships, accounts)', async () => {
    const dan = await createTestUser(r, 'dan');
    await alice.api(`/api/v1/accounts/${dan.account.id}/follow`, { method: 'POST' });
    await dan.api(`/api/v1/accounts/${bob.account.id}/follow`, { method: 'POST' });
    const auth = { authorization: `Bearer ${alice.token}` };

    const familiar = await rawRequest(r.at('/api/v1/accounts/familiar_followers'), 'GET', { id: [bob.account.id] }, auth);
    expect(familiar.status).toBe(200);
    expect(JSON.parse(familiar.text).map((f: any) => [f.id, f.accounts.map((a: any) => a.acct)])).toEqual([[bob.account.id, ['dan']]]);

    const rels = await rawRequest(r.at('/api/v1/accounts/relationships'), 'GET', { id: [dan.account.id, bob.account.id] }, auth);
    expect(JSON.parse(rels.text).map((x: any) => [x.id, x.following])).toEqual([
      [dan.account.id, true],
      [bob.account.id, false],
    ]);

    const accounts = await rawRequest(r.at('/api/v1/accounts'), 'GET', { id: [bob.account.id, dan.account.id] }, auth);
    expect(JSON.parse(accounts.text).map((a: any) => a.acct)).toEqual(['bob', 'dan']);
  });

  it('answers HEAD like GET, without a body', async () => {
    const ap = { accept: 'application/activity+json' };
    const cases: [string, Record<string, string>][] = [
      ['/', {}],
      ['/api/v1/instance', {}],
      ['/health', {}],
      ['/avatars/original/missing.png', {}],
      ['/users/alice', ap],
      ['/@alice', ap],
      [`/.well-known/webfinger?resource=acct:alice@${r.config.domain}`, {}],
      ['/.well-known/nodeinfo', {}],
      ['/users/alice/followers', ap],
      ['/users/nobody', ap],
    ];
    for (const [path, headers] of cases) {
      const get = await rawRequest(r.at(path), 'GET', undefined, headers);
      const head = await rawRequest(r.at(path), 'HEAD', undefined, headers);
      expect([path, head.status, head.headers['content-type'], head.text]).toEqual([path, get.status, get.headers['content-type'], '']);
      // The length announced is the GET body's.
      expect([path, head.headers['content-length']]).toEqual([path, String(get.bytes)]);
    }
  });

  it('carries source.attribution_domains in the credentials', async () => {
    const me = await alice.api('/api/v1/accounts/verify_credentials');
    expect(me.body.source.attribution_domains).toEqual([]);
  });
});

describe('suggestions', () => {
  it('leave out moved accounts and accounts that did not opt into discovery', async () => {
    const seeker = await createTestUser(r, 'seeker');
    const friend = await createTestUser(r, 'sfriend');
    const shown = await createTestUser(r, 'shown');
    const shy = await createTestUser(r, 'shy');
    const unset = await createTestUser(r, 'unset');
    const gone = await createTestUser(r, 'gone');
    for (const u of [shown, gone]) await u.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { discoverable: true } });
    await shy.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { discoverable: false } });
    await r.services.db.sql.query(`update accounts set moved_to_account_id = $1 where id = $2`, [shown.account.id, gone.account.id]);
    await seeker.api(`/api/v1/accounts/${friend.account.id}/follow`, { method: 'POST' });
    for (const u of [shown, shy, unset, gone]) await friend.api(`/api/v1/accounts/${u.account.id}/follow`, { method: 'POST' });

    const v2 = await seeker.api('/api/v2/suggestions?limit=80');
    const ids = v2.body.map((s: any) => s.account.id);
    expect(v2.body[0]).toMatchObject({ source: 'past_interactions', sources: ['friends_of_friends'], account: { id: shown.account.id } });
    for (const u of [shy, unset, gone]) expect(ids).not.toContain(u.account.id);
    // The local fallback has the same rule.
    const v1 = (await seeker.api('/api/v1/suggestions?limit=80')).body.map((a: any) => a.id);
    for (const u of [shy, unset, gone]) expect(v1).not.toContain(u.account.id);
    expect(v1).toContain(shown.account.id);
  });
});

describe('the text formatter', () => {
  const opts = {
    baseUrl: 'https://roost.example',
    localDomain: 'roost.example',
    resolveMention: (username: string, domain: string | null) =>
      username.toLowerCase() === 'ann' && domain === null
        ? { username: 'ann', domain: null, url: 'https://roost.example/@ann' }
        : username === 'zed' && domain === 'far.example'
          ? { username: 'zed', domain: 'far.example', url: 'https://far.example/@zed' }
          : undefined,
  };

  it('links hashtags and known mentions the way Mastodon renders them', () => {
    expect(formatPlainText('Hi #café and @Ann, @zed@far.example, @ann@roost.example\nnot @nobody or me@mail.example', opts)).toBe(
      '<p>Hi <a href="https://roost.example/tags/caf%C3%A9" class="mention hashtag" rel="tag">#<span>café</span></a> and ' +
        '<span class="h-card" translate="no"><a href="https://roost.example/@ann" class="u-url mention">@<span>ann</span></a></span>, ' +
        '<span class="h-card" translate="no"><a href="https://far.example/@zed" class="u-url mention">@<span>zed</span></a></span>, ' +
        '<span class="h-card" translate="no"><a href="https://roost.example/@ann" class="u-url mention">@<span>ann</span></a></span>' +
        '<br />not @nobody or me@mail.example</p>',
    );
  });

  it('leaves URLs whole (no tags or mentions inside them), and numbers are not tags', () => {
    const entities = extractEntities('see https://x.example/@ann#top and #1 but #v2');
    expect(entities.map((e) => e.kind)).toEqual(['text', 'url', 'text', 'hashtag']);
    expect(formatFieldValue('@zed@far.example', opts)).toBe(
      '<span class="h-card" translate="no"><a href="https://far.example/@zed" class="u-url mention">@<span>zed@far.example</span></a></span>',
    );
  });

  it('names the handles to look up, local ones without a domain', () => {
    expect(mentionedHandles('@ann @Ann @ann@roost.example @zed@far.example @joe@localhost:3000', 'roost.example')).toEqual([
      { username: 'ann', domain: null },
      { username: 'zed', domain: 'far.example' },
      { username: 'joe', domain: 'localhost:3000' },
    ]);
  });
});
