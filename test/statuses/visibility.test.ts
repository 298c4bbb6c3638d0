/**
 * Who sees which status: public / unlisted / private / direct × stranger, follower, mentioned,
 * author, blocked (and nobody signed in), through GET /statuses/:id, the account's statuses, the
 * thread, and acting on it. Also the account statuses list: paging with Link headers and filters.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let author: TestUser;
let stranger: TestUser;
let follower: TestUser;
let mentioned: TestUser;
let blocked: TestUser;
const ids: Record<string, string> = {};
beforeAll(async () => {
  roost = await startTestRoost();
  author = await createTestUser(roost, 'author');
  stranger = await createTestUser(roost, 'stranger');
  follower = await createTestUser(roost, 'follower');
  mentioned = await createTestUser(roost, 'mentioned');
  blocked = await createTestUser(roost, 'blocked');
  expect((await follower.api(`/api/v1/accounts/${author.account.id}/follow`, { method: 'POST' })).body.following).toBe(true);
  // The blocked one followed first: the block ends that, and hides everything anyway.
  await blocked.api(`/api/v1/accounts/${author.account.id}/follow`, { method: 'POST' });
  for (const visibility of ['public', 'unlisted', 'private', 'direct']) {
    const r = await author.api('/api/v1/statuses', { method: 'POST', body: { status: `${visibility} for @mentioned and @blocked`, visibility } });
    expect(r.status).toBe(200);
    expect(r.body.visibility).toBe(visibility);
    ids[visibility] = r.body.id;
  }
  expect((await author.api(`/api/v1/accounts/${blocked.account.id}/block`, { method: 'POST' })).status).toBe(200);
}, 60_000);
afterAll(async () => roost?.close());

type Who = 'anonymous' | 'stranger' | 'follower' | 'mentioned' | 'author' | 'blocked';
const get = (who: Who, path: string) => {
  const u = { stranger, follower, mentioned, author, blocked, anonymous: null }[who];
  return u ? u.api(path) : apiRequest(roost, path);
};

// What each viewer sees, as Mastodon's StatusPolicy#show?.
const MATRIX: Record<string, Who[]> = {
  public: ['anonymous', 'stranger', 'follower', 'mentioned', 'author'],
  unlisted: ['anonymous', 'stranger', 'follower', 'mentioned', 'author'],
  private: ['follower', 'mentioned', 'author'],
  direct: ['mentioned', 'author'],
};
const VIEWERS: Who[] = ['anonymous', 'stranger', 'follower', 'mentioned', 'author', 'blocked'];

describe('the visibility matrix', () => {
  for (const [visibility, allowed] of Object.entries(MATRIX)) {
    it(`${visibility}: seen by ${allowed.join(', ')} only`, async () => {
      const seen: Who[] = [];
      for (const who of VIEWERS) {
        const r = await get(who, `/api/v1/statuses/${ids[visibility]}`);
        expect([200, 404]).toContain(r.status);
        if (r.status === 200) seen.push(who);
        if (r.status === 404) expect(r.body).toEqual({ error: 'Record not found' });
        // The same answer in the account's statuses, the many-statuses read and the thread.
        const list = await get(who, `/api/v1/accounts/${author.account.id}/statuses`);
        expect(list.body.some((s: { id: string }) => s.id === ids[visibility])).toBe(r.status === 200);
        const many = await get(who, `/api/v1/statuses?id[]=${ids[visibility]}`);
        expect(many.body.length).toBe(r.status === 200 ? 1 : 0);
        expect((await get(who, `/api/v1/statuses/${ids[visibility]}/context`)).status).toBe(r.status);
      }
      expect(seen).toEqual(allowed);
    });
  }

  it('hides the thread replies a viewer may not see, and refuses to act on hidden statuses', async () => {
    const hidden = await author.api('/api/v1/statuses', { method: 'POST', body: { status: 'a private reply', visibility: 'private', in_reply_to_id: ids.public } });
    const open = await follower.api('/api/v1/statuses', { method: 'POST', body: { status: 'a public reply', in_reply_to_id: ids.public } });
    const forStranger = await stranger.api(`/api/v1/statuses/${ids.public}/context`);
    expect(forStranger.body.descendants.map((s: { id: string }) => s.id)).toEqual([open.body.id]);
    const forFollower = await follower.api(`/api/v1/statuses/${ids.public}/context`);
    expect(forFollower.body.descendants.map((s: { id: string }) => s.id).sort()).toEqual([hidden.body.id, open.body.id].sort());
    // A stranger cannot favourite, reblog or reply to what they cannot see.
    expect((await stranger.api(`/api/v1/statuses/${ids.private}/favourite`, { method: 'POST' })).status).toBe(404);
    expect((await stranger.api(`/api/v1/statuses/${ids.direct}/reblog`, { method: 'POST' })).status).toBe(404);
    const reply = await stranger.api('/api/v1/statuses', { method: 'POST', body: { status: 'hi', in_reply_to_id: ids.private } });
    expect(reply.status).toBe(404);
    // Private and direct statuses cannot be reblogged by others, even by those who see them.
    expect((await follower.api(`/api/v1/statuses/${ids.private}/reblog`, { method: 'POST' })).status).toBe(403);
    expect((await mentioned.api(`/api/v1/statuses/${ids.direct}/reblog`, { method: 'POST' })).status).toBe(403);
    expect((await blocked.api(`/api/v1/statuses/${ids.public}/favourite`, { method: 'POST' })).status).toBe(404);
  });

  it('masks the internal limited visibility as private', async () => {
    const s = await author.api('/api/v1/statuses', { method: 'POST', body: { status: 'for @mentioned', visibility: 'private' } });
    await roost.services.db.sql.query(`update statuses set visibility = 'limited' where id = $1`, [s.body.id]);
    const r = await mentioned.api(`/api/v1/statuses/${s.body.id}`);
    expect([r.status, r.body.visibility]).toEqual([200, 'private']);
    // Limited needs a mention: a follower does not see it.
    expect((await follower.api(`/api/v1/statuses/${s.body.id}`)).status).toBe(404);
  });
});

describe("an account's statuses", () => {
  it('pages with max_id / min_id / since_id and Link headers, and filters replies and reblogs', async () => {
    const poster = await createTestUser(roost, 'poster');
    const posted: string[] = [];
    for (let i = 0; i < 7; i++) posted.push((await poster.api('/api/v1/statuses', { method: 'POST', body: { status: `post ${i} #tagged${i % 2}` } })).body.id);
    const reply = (await poster.api('/api/v1/statuses', { method: 'POST', body: { status: 'reply', in_reply_to_id: ids.public } })).body.id;
    const boost = (await poster.api(`/api/v1/statuses/${ids.public}/reblog`, { method: 'POST' })).body.id;
    const all = [boost, reply, ...[...posted].reverse()];
    const base = `/api/v1/accounts/${poster.account.id}/statuses`;
    const first = await apiRequest(roost, `${base}?limit=4`);
    expect(first.body.map((s: { id: string }) => s.id)).toEqual(all.slice(0, 4));
    const link = first.headers.get('link')!;
    expect(link).toContain(`max_id=${all[3]}>; rel="next"`);
    expect(link).toContain(`min_id=${all[0]}>; rel="prev"`);
    const next = new URL(/<([^>]+)>; rel="next"/.exec(link)![1]!);
    const second = await apiRequest(roost, `${next.pathname}${next.search}`);
    expect(second.body.map((s: { id: string }) => s.id)).toEqual(all.slice(4, 8));
    expect((await apiRequest(roost, `${base}?min_id=${all[5]}&limit=2`)).body.map((s: { id: string }) => s.id)).toEqual(all.slice(3, 5));
    expect((await apiRequest(roost, `${base}?since_id=${all[5]}&limit=2`)).body.map((s: { id: string }) => s.id)).toEqual(all.slice(0, 2));
    const noReplies = await apiRequest(roost, `${base}?exclude_replies=true&exclude_reblogs=true`);
    expect(noReplies.body.map((s: { id: string }) => s.id)).toEqual([...posted].reverse());
    const withBoost = await apiRequest(roost, `${base}?limit=1`);
    expect(withBoost.body[0].reblog.id).toBe(ids.public);
    const tagged = await apiRequest(roost, `${base}?tagged=TAGGED1`);
    expect(tagged.body.map((s: { id: string }) => s.id)).toEqual([posted[5], posted[3], posted[1]]);
    expect((await apiRequest(roost, `${base}?only_media=true`)).body).toEqual([]);
    expect((await apiRequest(roost, `/api/v1/accounts/99999999/statuses`)).status).toBe(404);
  });
});
