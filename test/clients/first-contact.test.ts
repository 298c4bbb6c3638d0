/**
 * What a Mastodon app trips over on first contact (issue 8, items 10–15), through the real server:
 * default images, start-up endpoints, extended description time, ids in a GET body, HEAD,
 * attribution domains, registration errors, bio links, suggestions.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import sharp from 'sharp';
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
