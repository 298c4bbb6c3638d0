/**
 * GET /api/v1/timelines/home through the real server: exactly which statuses, in which order,
 * for a user who follows some accounts (one with reblogs off), mutes one (for a while), blocks
 * one, is blocked by another, blocks a remote domain, and whose followed accounts reply to
 * accounts the user does or does not follow (Mastodon's FeedManager#filter_from_home?). Also
 * max_id / since_id / min_id paging with the exact Link header.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { createManualClock } from '../../src/lib/clock.ts';
import { writeOutbox } from '../../src/events/outbox.ts';

const clock = createManualClock(new Date('2026-05-01T12:00:00.000Z'));
let roost: TestRoost;
let me: TestUser;
let alice: TestUser; // followed
let bob: TestUser; // followed, reblogs off
let carol: TestUser; // not followed
let dave: TestUser; // followed, then muted for an hour
let erin: TestUser; // followed, then blocked
let hank: TestUser; // not followed; blocks me
const s: Record<string, string> = {};
let remoteId = '';

async function post(u: TestUser, key: string, body: Record<string, unknown>): Promise<string> {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body });
  expect(r.status).toBe(200);
  s[key] = r.body.id;
  return r.body.id;
}
async function reblog(u: TestUser, key: string, of: string): Promise<void> {
  const r = await u.api(`/api/v1/statuses/${s[of]}/reblog`, { method: 'POST' });
  expect(r.status).toBe(200);
  s[key] = r.body.id;
}
const home = async (query = '') => {
  const r = await me.api(`/api/v1/timelines/home${query}`);
  expect(r.status).toBe(200);
  return r;
};
/** The keys of `s` for the ids of a page, in page order. */
const keysOf = (body: { id: string }[]) => body.map((x) => Object.keys(s).find((k) => s[k] === x.id) ?? x.id);

beforeAll(async () => {
  roost = await startTestRoost({}, { clock });
  me = await createTestUser(roost, 'me');
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
  carol = await createTestUser(roost, 'carol');
  dave = await createTestUser(roost, 'dave');
  erin = await createTestUser(roost, 'erin');
  hank = await createTestUser(roost, 'hank');
  const follow = async (u: TestUser, body: Record<string, unknown> = {}) =>
    expect((await me.api(`/api/v1/accounts/${u.account.id}/follow`, { method: 'POST', body })).body.following).toBe(true);
  await follow(alice);
  await follow(bob, { reblogs: false });
  await follow(dave);
  await follow(erin);
  // A remote account the user follows (the inbox is another branch's: its rows stand in here),
  // and its status recorded as the inbound Create will record it.
  const sql = roost.services.db.sql;
  remoteId = roost.services.ids.next();
  const now = clock.now();
  await sql.query(
    `insert into accounts (id, username, domain, uri, url, inbox_url, created_at, updated_at)
     values ($1, 'rita', 'remote.example', 'https://remote.example/users/rita', 'https://remote.example/@rita', 'https://remote.example/users/rita/inbox', $2, $2)`,
    [remoteId, now],
  );
  await sql.query(`insert into follows (id, account_id, target_account_id, state, created_at, updated_at) values ($1, $2, $3, 'accepted', $4, $4)`, [
    roost.services.ids.next(),
    me.account.id,
    remoteId,
    now,
  ]);

  await post(me, 'mine', { status: 'my own post' });
  await post(alice, 'alice', { status: 'alice public' });
  await post(carol, 'carol', { status: 'carol, not followed' });
  await reblog(alice, 'aliceBoostsCarol', 'carol');
  await reblog(bob, 'bobBoostsCarol', 'carol');
  await post(bob, 'bob', { status: 'bob public' });
  await post(alice, 'replyToCarol', { status: '@carol a reply to someone not followed', in_reply_to_id: s.carol });
  await post(alice, 'replyToBob', { status: '@bob a reply to someone followed', in_reply_to_id: s.bob });
  await post(alice, 'selfReply', { status: 'a thread', in_reply_to_id: s.alice });
  await post(alice, 'replyToMe', { status: '@me a reply to the reader', in_reply_to_id: s.mine });
  await post(alice, 'private', { status: 'followers only', visibility: 'private' });
  await post(alice, 'unlisted', { status: 'unlisted', visibility: 'unlisted' });
  await post(alice, 'dmToMe', { status: '@me psst', visibility: 'direct' });
  await post(alice, 'dmToCarol', { status: '@carol psst', visibility: 'direct' });
  await post(carol, 'carolPrivate', { status: 'carol followers only', visibility: 'private' });
  await post(dave, 'dave', { status: 'dave public' });
  await post(erin, 'erin', { status: 'erin public' });
  await post(alice, 'mentionsErin', { status: 'hello @erin' });
  await post(hank, 'hank', { status: 'hank public' });
  await reblog(alice, 'aliceBoostsHank', 'hank');
  const remoteStatus = roost.services.ids.next();
  await sql.transaction(async (tx) => {
    await tx.query(
      `insert into statuses (id, account_id, uri, url, text, content, visibility, local, created_at, updated_at)
       values ($1, $2, $3, $3, '', '<p>from afar</p>', 'public', false, $4, $4)`,
      [remoteStatus, remoteId, `https://remote.example/users/rita/statuses/${remoteStatus}`, clock.now()],
    );
    await writeOutbox(tx, {
      actorKind: 'status',
      actorId: remoteStatus,
      actorVersion: null,
      origin: 'federation',
      events: [{ type: 'status.created', statusId: remoteStatus, accountId: remoteId, local: false, visibility: 'public', inReplyToId: null }],
      now: clock.now(),
    });
  });
  s.remote = remoteStatus;
  await post(me, 'mineLast', { status: 'my last post' });
  await settled(roost);
}, 60_000);
afterAll(async () => roost?.close());

const EVERYTHING = [
  'mineLast', 'remote', 'aliceBoostsHank', 'mentionsErin', 'erin', 'dave', 'dmToMe', 'unlisted', 'private', 'replyToMe', 'selfReply',
  'replyToBob', 'bob', 'aliceBoostsCarol', 'alice', 'mine',
];

describe('GET /api/v1/timelines/home', () => {
  it('needs a user token', async () => {
    const r = await apiRequest(roost, '/api/v1/timelines/home');
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'The access token is invalid' });
  });

  it("shows own and followed accounts' statuses, boosts where shown, replies to followed accounts, private and direct ones addressed to the reader", async () => {
    const r = await home('?limit=40');
    // Not there: carol's status and private one (not followed), bob's boost (reblogs off), alice's
    // reply to carol (not followed) and her direct message to carol.
    expect(keysOf(r.body)).toEqual(EVERYTHING);
    // Full entities: the boost carries its original, the limited ones their visibility.
    const boost = r.body.find((x: { id: string }) => x.id === s.aliceBoostsCarol);
    expect([boost.account.username, boost.reblog.id, boost.reblog.account.username, boost.reblog.content]).toEqual(['alice', s.carol, 'carol', '<p>carol, not followed</p>']);
    expect(r.body.find((x: { id: string }) => x.id === s.private).visibility).toBe('private');
    expect(r.body.find((x: { id: string }) => x.id === s.dmToMe).visibility).toBe('direct');
    expect(r.body.find((x: { id: string }) => x.id === s.remote).account.acct).toBe('rita@remote.example');
  });

  it('is filled after commit with the local followers a status reaches (not its author)', async () => {
    const feedsOf = async (key: string) =>
      (await roost.services.db.sql.query<{ id: string }>(`select account_id::text as id from home_feeds where status_id = $1 order by 1`, [s[key]])).map((r) => r.id);
    // me follows alice; carol follows nobody yet; a direct message reaches only mentioned followers.
    expect(await feedsOf('alice')).toEqual([me.account.id]);
    expect(await feedsOf('dmToMe')).toEqual([me.account.id]);
    expect(await feedsOf('dmToCarol')).toEqual([]);
    expect(await feedsOf('carol')).toEqual([]);
    expect(await feedsOf('mine')).toEqual([]);
    expect(await feedsOf('remote')).toEqual([me.account.id]);
  });

  it('leaves out mutes (until they expire), blocks in both directions and blocked domains', async () => {
    expect((await me.api(`/api/v1/accounts/${dave.account.id}/mute`, { method: 'POST', body: { duration: 3600 } })).status).toBe(200);
    expect((await me.api(`/api/v1/accounts/${erin.account.id}/block`, { method: 'POST' })).status).toBe(200);
    expect((await hank.api(`/api/v1/accounts/${me.account.id}/block`, { method: 'POST' })).status).toBe(200);
    expect((await me.api('/api/v1/domain_blocks', { method: 'POST', body: { domain: 'remote.example' } })).status).toBe(200);
    const hidden = ['dave', 'erin', 'mentionsErin', 'aliceBoostsHank', 'remote'];
    expect(keysOf((await home('?limit=40')).body)).toEqual(EVERYTHING.filter((k) => !hidden.includes(k)));
    // An hour later the mute has run out: dave is back.
    clock.advance(3601_000);
    await settled(roost);
    expect(keysOf((await home('?limit=40')).body)).toEqual(EVERYTHING.filter((k) => !hidden.includes(k) || k === 'dave'));
    // Lifting the block and the domain block brings the rest back but erin (a block ends the follow).
    expect((await hank.api(`/api/v1/accounts/${me.account.id}/unblock`, { method: 'POST' })).status).toBe(200);
    expect((await me.api(`/api/v1/accounts/${erin.account.id}/unblock`, { method: 'POST' })).status).toBe(200);
    expect((await me.api('/api/v1/domain_blocks?domain=remote.example', { method: 'DELETE' })).status).toBe(200);
    expect(keysOf((await home('?limit=40')).body)).toEqual(EVERYTHING.filter((k) => k !== 'erin'));
  });

  it('drops an unfollowed account at once, and merges a newly followed one', async () => {
    expect((await me.api(`/api/v1/accounts/${bob.account.id}/unfollow`, { method: 'POST' })).status).toBe(200);
    // Without the follow of bob, alice's reply to bob goes too.
    expect(keysOf((await home('?limit=40')).body)).toEqual(EVERYTHING.filter((k) => !['erin', 'bob', 'replyToBob'].includes(k)));
    expect((await me.api(`/api/v1/accounts/${carol.account.id}/follow`, { method: 'POST' })).body.following).toBe(true);
    await settled(roost);
    const keys = keysOf((await home('?limit=40')).body);
    // carol's statuses (her private one too, now that the reader follows her) and the reply to her.
    expect(keys).toEqual([
      'mineLast', 'remote', 'aliceBoostsHank', 'mentionsErin', 'dave', 'carolPrivate', 'dmToMe', 'unlisted', 'private', 'replyToMe', 'selfReply',
      'replyToCarol', 'aliceBoostsCarol', 'carol', 'alice', 'mine',
    ]);
  });

  it('pages with max_id, since_id and min_id, and says so in the Link header', async () => {
    const all = keysOf((await home('?limit=40')).body);
    const first = await home('?limit=3');
    expect(keysOf(first.body)).toEqual(all.slice(0, 3));
    const base = `${roost.url}/api/v1/timelines/home`;
    expect(first.headers.get('link')).toBe(`<${base}?limit=3&max_id=${s[all[2]!]}>; rel="next", <${base}?limit=3&min_id=${s[all[0]!]}>; rel="prev"`);
    const second = await home(`?limit=3&max_id=${s[all[2]!]}`);
    expect(keysOf(second.body)).toEqual(all.slice(3, 6));
    // since_id: the newest ones above the cursor; min_id: the ones just above it (both newest first).
    expect(keysOf((await home(`?limit=2&since_id=${s[all[5]!]}`)).body)).toEqual(all.slice(0, 2));
    expect(keysOf((await home(`?limit=2&min_id=${s[all[5]!]}`)).body)).toEqual(all.slice(3, 5));
    const last = await home(`?limit=3&max_id=${s[all[all.length - 2]!]}`);
    expect(keysOf(last.body)).toEqual([all[all.length - 1]]);
    // A short page has no next link.
    expect(last.headers.get('link')).toBe(`<${base}?limit=3&min_id=${s[all[all.length - 1]!]}>; rel="prev"`);
  });
});
