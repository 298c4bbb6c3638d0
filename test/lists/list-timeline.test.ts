/**
 * GET /api/v1/timelines/list/:list_id through the real server: exactly which statuses, in which
 * order — the members' statuses (fanned out after commit, merged on add), home's rules (blocks,
 * mutes, visibility) and the list's replies_policy (followed / list / none, Mastodon's
 * FeedManager#filter_from_list?); an exclusive list keeps its members' posts out of home but
 * not out of the list; a removed member drops out at once; Link-header paging; and a page costs
 * a fixed number of statements whatever its size.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let me: TestUser;
let alice: TestUser; // followed, in the list
let bob: TestUser; // followed, in the list
let carol: TestUser; // followed, not in the list
let dave: TestUser; // not followed
let listId: string;
const s: Record<string, string> = {};

async function post(u: TestUser, key: string, body: Record<string, unknown>): Promise<string> {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body });
  expect(r.status).toBe(200);
  s[key] = r.body.id;
  return r.body.id;
}
const keysOf = (body: { id: string }[]) => body.map((x) => Object.keys(s).find((k) => s[k] === x.id) ?? x.id);
const listKeys = async (query = '?limit=40', id = listId) => {
  const r = await me.api(`/api/v1/timelines/list/${id}${query}`);
  expect(r.status).toBe(200);
  return keysOf(r.body);
};
const homeKeys = async () => keysOf((await me.api('/api/v1/timelines/home?limit=40')).body);
const setPolicy = async (replies_policy: string) =>
  expect((await me.api(`/api/v1/lists/${listId}`, { method: 'PUT', body: { replies_policy } })).body.replies_policy).toBe(replies_policy);

beforeAll(async () => {
  roost = await startTestRoost();
  me = await createTestUser(roost, 'me');
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
  carol = await createTestUser(roost, 'carol');
  dave = await createTestUser(roost, 'dave');
  for (const u of [alice, bob, carol]) expect((await me.api(`/api/v1/accounts/${u.account.id}/follow`, { method: 'POST' })).body.following).toBe(true);
  // Before the list: merged when alice is added.
  await post(alice, 'aliceEarly', { status: 'before the list' });
  listId = (await me.api('/api/v1/lists', { method: 'POST', body: { title: 'friends' } })).body.id;
  expect((await me.api(`/api/v1/lists/${listId}/accounts`, { method: 'POST', body: { account_ids: [alice.account.id, bob.account.id] } })).status).toBe(200);

  await post(me, 'mine', { status: 'my post' });
  await post(dave, 'dave', { status: 'dave' });
  await post(carol, 'carol', { status: 'carol' });
  await post(alice, 'alice', { status: 'alice' });
  await post(bob, 'bob', { status: 'bob' });
  await post(alice, 'replyToBob', { status: '@bob to a member', in_reply_to_id: s.bob });
  await post(alice, 'replyToCarol', { status: '@carol to a followed non-member', in_reply_to_id: s.carol });
  await post(alice, 'replyToDave', { status: '@dave to someone not followed', in_reply_to_id: s.dave });
  await post(alice, 'replyToMe', { status: '@me to the owner', in_reply_to_id: s.mine });
  await post(alice, 'selfReply', { status: 'a thread', in_reply_to_id: s.alice });
  await post(bob, 'bobPrivate', { status: 'followers only', visibility: 'private' });
  await post(bob, 'bobDmToMe', { status: '@me psst', visibility: 'direct' });
  await post(bob, 'bobDmToCarol', { status: '@carol psst', visibility: 'direct' });
  const boost = await bob.api(`/api/v1/statuses/${s.dave}/reblog`, { method: 'POST' });
  s.bobBoostsDave = boost.body.id;
  await settled(roost);
}, 90_000);
afterAll(async () => roost?.close());

const BASE = ['bobBoostsDave', 'bobDmToMe', 'bobPrivate', 'selfReply', 'replyToMe'];
const REST = ['bob', 'alice', 'aliceEarly'];

describe('GET /api/v1/timelines/list/:list_id', () => {
  it("replies_policy list (the default): the members' statuses, replies to members and to the owner", async () => {
    expect(await listKeys()).toEqual([...BASE, 'replyToBob', ...REST]);
  });

  it('replies_policy followed: replies to anyone the owner follows, as home', async () => {
    await setPolicy('followed');
    expect(await listKeys()).toEqual([...BASE, 'replyToCarol', 'replyToBob', ...REST]);
  });

  it('replies_policy none: only self-replies and replies to the owner', async () => {
    await setPolicy('none');
    expect(await listKeys()).toEqual([...BASE, ...REST]);
    await setPolicy('list');
  });

  it('new statuses arrive by fan-out after commit', async () => {
    await post(bob, 'bobLater', { status: 'later' });
    await settled(roost);
    const feed = await roost.services.db.sql.query<{ id: string }>(`select list_id::text as id from list_feeds where status_id = $1`, [s.bobLater]);
    expect(feed.map((r) => r.id)).toEqual([listId]);
    expect((await listKeys())[0]).toBe('bobLater');
  });

  it('an exclusive list keeps its members out of home, not out of the list', async () => {
    const home = await homeKeys();
    expect(home).toEqual(expect.arrayContaining(['alice', 'bob', 'bobLater', 'carol', 'mine']));
    expect((await me.api(`/api/v1/lists/${listId}`, { method: 'PUT', body: { exclusive: true } })).body.exclusive).toBe(true);
    const exclusiveHome = await homeKeys();
    // Every status of alice and bob leaves home (boosts by a member too); carol's and mine stay.
    expect(exclusiveHome).toEqual(home.filter((k) => !/^(alice|bob|replyTo|selfReply)/.test(k)));
    expect(exclusiveHome).toEqual(expect.arrayContaining(['carol', 'mine']));
    expect((await listKeys())[0]).toBe('bobLater');
    // Not exclusive any more: back in home.
    await me.api(`/api/v1/lists/${listId}`, { method: 'PUT', body: { exclusive: false } });
    expect(await homeKeys()).toEqual(home);
  });

  it("blocks and mutes as home: a muted member's statuses leave the list", async () => {
    expect((await me.api(`/api/v1/accounts/${bob.account.id}/mute`, { method: 'POST' })).status).toBe(200);
    // Bob's statuses go; so does alice's reply mentioning bob (a muted account mentioned).
    expect(await listKeys()).toEqual(['selfReply', 'replyToMe', 'alice', 'aliceEarly']);
    expect((await me.api(`/api/v1/accounts/${bob.account.id}/unmute`, { method: 'POST' })).status).toBe(200);
  });

  it('a removed member drops out at once', async () => {
    expect((await me.api(`/api/v1/lists/${listId}/accounts`, { method: 'DELETE', body: { account_ids: [bob.account.id] } })).status).toBe(200);
    expect(await listKeys()).toEqual(['selfReply', 'replyToMe', 'alice', 'aliceEarly']);
    expect((await me.api(`/api/v1/lists/${listId}/accounts`, { method: 'POST', body: { account_ids: [bob.account.id] } })).status).toBe(200);
    expect(await listKeys()).toEqual(['bobLater', ...BASE, 'replyToBob', ...REST]);
  });

  it('pages with max_id and min_id, and says so in the Link header', async () => {
    const all = await listKeys();
    const first = await me.api(`/api/v1/timelines/list/${listId}?limit=3`);
    expect(keysOf(first.body)).toEqual(all.slice(0, 3));
    const base = `${roost.url}/api/v1/timelines/list/${listId}`;
    expect(first.headers.get('link')).toBe(`<${base}?limit=3&max_id=${s[all[2]!]}>; rel="next", <${base}?limit=3&min_id=${s[all[0]!]}>; rel="prev"`);
    expect(await listKeys(`?limit=3&max_id=${s[all[2]!]}`)).toEqual(all.slice(3, 6));
    expect(await listKeys(`?limit=2&min_id=${s[all[5]!]}`)).toEqual(all.slice(3, 5));
    expect(await listKeys(`?limit=2&since_id=${s[all[5]!]}`)).toEqual(all.slice(0, 2));
  });

  it('a member added while its follow was pending shows once the follow is accepted', async () => {
    const lena = await createTestUser(roost, 'lena');
    expect((await lena.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } })).status).toBe(200);
    await post(lena, 'lenaBefore', { status: 'before the follow' });
    expect((await me.api(`/api/v1/accounts/${lena.account.id}/follow`, { method: 'POST' })).body.requested).toBe(true);
    const pending = (await me.api('/api/v1/lists', { method: 'POST', body: { title: 'pending' } })).body.id;
    expect((await me.api(`/api/v1/lists/${pending}/accounts`, { method: 'POST', body: { account_ids: [lena.account.id] } })).status).toBe(200);
    await settled(roost);
    // Her posts went into the list's feed on add, but the owner does not follow her yet.
    expect(await listKeys('?limit=40', pending)).toEqual([]);
    expect((await lena.api(`/api/v1/follow_requests/${me.account.id}/authorize`, { method: 'POST' })).status).toBe(200);
    await post(lena, 'lenaAfter', { status: 'after the follow' });
    await settled(roost);
    expect(await listKeys('?limit=40', pending)).toEqual(['lenaAfter', 'lenaBefore']);
  });

  it('renders a page with a fixed number of statements', async () => {
    await me.api(`/api/v1/timelines/list/${listId}?limit=1`);
    const q2 = await capturedStatements(roost, () => me.api(`/api/v1/timelines/list/${listId}?limit=2`));
    const q10 = await capturedStatements(roost, () => me.api(`/api/v1/timelines/list/${listId}?limit=10`));
    expect(q10).toEqual(q2);
    // The list, the page of ids, then home's batched status view (3 with the page of ids; the viewer's filters come with the statuses).
    expect(q2.length).toBe(4);
  });
});
