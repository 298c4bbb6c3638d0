/**
 * The viewer's relationship lists through the REST API: blocks, mutes, follow requests,
 * endorsements and domain blocks page newest first by their own row ids with Mastodon's Link
 * header (`max_id` for the next page, `since_id` for the previous one), and each endpoint asks
 * for the scopes Mastodon declares.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;

beforeAll(async () => {
  roost = await startTestRoost();
});
afterAll(async () => roost?.close());

const ids = (body: { id: string }[]) => body.map((a) => a.id);

function links(res: { headers: Headers }): { next?: string; prev?: string } {
  const out: { next?: string; prev?: string } = {};
  for (const m of (res.headers.get('link') ?? '').matchAll(/<([^>]+)>; rel="(next|prev)"/g)) out[m[2] as 'next' | 'prev'] = m[1];
  return out;
}

/** GET an absolute Link URL of this instance with the user's token. */
const follow = (user: TestUser, url: string) => user.api(new URL(url).pathname + new URL(url).search);

async function users(prefix: string, n: number): Promise<TestUser[]> {
  const out: TestUser[] = [];
  for (let i = 1; i <= n; i++) out.push(await createTestUser(roost, `${prefix}${i}`));
  return out;
}

describe('relationship lists', () => {
  it('pages blocks with max_id / since_id / min_id and Link headers', async () => {
    const me = await createTestUser(roost, 'blocker');
    const [t1, t2, t3] = await users('blocked', 3);
    for (const t of [t1, t2, t3]) expect((await me.api(`/api/v1/accounts/${t.account.id}/block`, { method: 'POST' })).status).toBe(200);
    const blockIds = (
      await roost.services.db.sql.query<{ id: string }>(`select id::text from blocks where account_id = $1 order by id`, [me.account.id])
    ).map((r) => r.id);

    const first = await me.api('/api/v1/blocks?limit=2');
    expect(ids(first.body)).toEqual([t3.account.id, t2.account.id]);
    const l = links(first);
    expect(l.next).toBe(roost.at(`/api/v1/blocks?limit=2&max_id=${blockIds[1]}`));
    expect(l.prev).toBe(roost.at(`/api/v1/blocks?limit=2&since_id=${blockIds[2]}`));
    const second = await follow(me, l.next!);
    expect(ids(second.body)).toEqual([t1.account.id]);
    // A short page has no next link; its prev link leads back.
    expect(links(second).next).toBeUndefined();
    expect(ids((await follow(me, links(second).prev!)).body)).toEqual([t3.account.id, t2.account.id]);
    // Nothing newer than the newest: an empty page without a Link header.
    const newer = await follow(me, l.prev!);
    expect(newer.body).toEqual([]);
    expect(newer.headers.get('link')).toBeNull();
    // min_id walks forward from the oldest.
    expect(ids((await me.api(`/api/v1/blocks?limit=1&min_id=${blockIds[0]}`)).body)).toEqual([t2.account.id]);
  });

  it('pages mutes (with mute_expires_at), follow requests, endorsements and domain blocks', async () => {
    const me = await createTestUser(roost, 'curator');
    const [m1, m2] = await users('muted', 2);
    await me.api(`/api/v1/accounts/${m1.account.id}/mute`, { method: 'POST' });
    await me.api(`/api/v1/accounts/${m2.account.id}/mute`, { body: { duration: 600 } });
    const mutes = await me.api('/api/v1/mutes?limit=1');
    expect(ids(mutes.body)).toEqual([m2.account.id]);
    expect(typeof mutes.body[0].mute_expires_at).toBe('string');
    const older = await follow(me, links(mutes).next!);
    expect(older.body.map((a: { id: string; mute_expires_at: string | null }) => [a.id, a.mute_expires_at])).toEqual([[m1.account.id, null]]);

    await me.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } });
    const [r1, r2, r3] = await users('asker', 3);
    for (const r of [r1, r2, r3]) expect((await r.api(`/api/v1/accounts/${me.account.id}/follow`, { method: 'POST' })).body.requested).toBe(true);
    const requests = await me.api('/api/v1/follow_requests?limit=2');
    expect(ids(requests.body)).toEqual([r3.account.id, r2.account.id]);
    expect(links(requests).prev).toMatch(/\/api\/v1\/follow_requests\?limit=2&since_id=\d+$/);
    expect(ids((await follow(me, links(requests).next!)).body)).toEqual([r1.account.id]);

    const [e1, e2] = await users('endorsed', 2);
    for (const e of [e1, e2]) {
      await me.api(`/api/v1/accounts/${e.account.id}/follow`, { method: 'POST' });
      expect((await me.api(`/api/v1/accounts/${e.account.id}/pin`, { method: 'POST' })).body).toMatchObject({ following: true, endorsed: true });
    }
    const endorsements = await me.api('/api/v1/endorsements?limit=1');
    expect(ids(endorsements.body)).toEqual([e2.account.id]);
    expect(ids((await follow(me, links(endorsements).next!)).body)).toEqual([e1.account.id]);

    for (const d of ['a.example', 'b.example', 'c.example']) expect((await me.api('/api/v1/domain_blocks', { body: { domain: d } })).body).toEqual({});
    const domains = await me.api('/api/v1/domain_blocks?limit=2');
    expect(domains.body).toEqual(['c.example', 'b.example']);
    expect((await follow(me, links(domains).next!)).body).toEqual(['a.example']);
  });

  it('hides an account\'s followers and following from someone it blocks', async () => {
    const star = await createTestUser(roost, 'hider');
    const fan = await createTestUser(roost, 'hiderfan');
    const pest = await createTestUser(roost, 'pest');
    await fan.api(`/api/v1/accounts/${star.account.id}/follow`, { method: 'POST' });
    await star.api(`/api/v1/accounts/${fan.account.id}/follow`, { method: 'POST' });
    expect(ids((await pest.api(`/api/v1/accounts/${star.account.id}/followers`)).body)).toEqual([fan.account.id]);
    await star.api(`/api/v1/accounts/${pest.account.id}/block`, { method: 'POST' });
    for (const which of ['followers', 'following']) {
      const hidden = await pest.api(`/api/v1/accounts/${star.account.id}/${which}`);
      expect([hidden.status, hidden.body, hidden.headers.get('link')]).toEqual([200, [], null]);
      // Others, and anonymous callers, still see them.
      expect(ids((await fan.api(`/api/v1/accounts/${star.account.id}/${which}`)).body)).toEqual([fan.account.id]);
      expect(ids((await apiRequest(roost, `/api/v1/accounts/${star.account.id}/${which}`)).body)).toEqual([fan.account.id]);
    }
  });

  it('asks for the scopes Mastodon declares', async () => {
    const target = await createTestUser(roost, 'scoped');
    const blocksOnly = await createTestUser(roost, 'blockreader', { scopes: ['read:blocks', 'write:blocks'] });
    const mutesOnly = await createTestUser(roost, 'mutereader', { scopes: ['read:mutes', 'write:mutes'] });
    const followsOnly = await createTestUser(roost, 'followreader', { scopes: ['read:follows', 'write:follows'] });
    const outside = { error: 'This action is outside the authorized scopes' };

    expect((await blocksOnly.api('/api/v1/blocks')).status).toBe(200);
    expect((await blocksOnly.api('/api/v1/domain_blocks')).status).toBe(200);
    expect((await blocksOnly.api(`/api/v1/accounts/${target.account.id}/block`, { method: 'POST' })).body.blocking).toBe(true);
    const noMutes = await blocksOnly.api('/api/v1/mutes');
    expect([noMutes.status, noMutes.body]).toEqual([403, outside]);
    expect((await blocksOnly.api(`/api/v1/accounts/${target.account.id}/mute`, { method: 'POST' })).status).toBe(403);

    expect((await mutesOnly.api('/api/v1/mutes')).status).toBe(200);
    expect((await mutesOnly.api(`/api/v1/accounts/${target.account.id}/mute`, { method: 'POST' })).status).toBe(200);
    expect((await mutesOnly.api('/api/v1/blocks')).status).toBe(403);
    expect((await mutesOnly.api(`/api/v1/accounts/${target.account.id}/follow`, { method: 'POST' })).status).toBe(403);

    expect((await followsOnly.api(`/api/v1/accounts/${target.account.id}/follow`, { method: 'POST' })).body.following).toBe(true);
    expect((await followsOnly.api('/api/v1/follow_requests')).status).toBe(200);
    expect((await followsOnly.api(`/api/v1/accounts/relationships?id[]=${target.account.id}`)).status).toBe(200);
    expect((await followsOnly.api(`/api/v1/accounts/familiar_followers?id[]=${target.account.id}`)).status).toBe(200);
    // Notes and endorsements are account writes.
    expect((await followsOnly.api(`/api/v1/accounts/${target.account.id}/note`, { body: { comment: 'x' } })).status).toBe(403);
    expect((await followsOnly.api(`/api/v1/accounts/${target.account.id}/pin`, { method: 'POST' })).status).toBe(403);

    for (const [method, path] of [
      ['GET', '/api/v1/blocks'],
      ['GET', '/api/v1/mutes'],
      ['GET', '/api/v1/follow_requests'],
      ['GET', '/api/v1/endorsements'],
      ['GET', '/api/v1/domain_blocks'],
      ['GET', `/api/v1/accounts/relationships?id[]=${target.account.id}`],
      ['GET', `/api/v1/accounts/familiar_followers?id[]=${target.account.id}`],
      ['GET', '/api/v2/suggestions'],
      ['POST', `/api/v1/accounts/${target.account.id}/follow`],
      ['POST', `/api/v1/accounts/${target.account.id}/block`],
      ['POST', `/api/v1/accounts/${target.account.id}/mute`],
    ]) {
      const res = await apiRequest(roost, path, { method });
      expect([path, res.status, res.body]).toEqual([path, 401, { error: 'The access token is invalid' }]);
    }
    // Public: followers/following and the retired identity proofs.
    expect((await apiRequest(roost, `/api/v1/accounts/${target.account.id}/identity_proofs`)).body).toEqual([]);
  });
});
