/**
 * The notification policy and requests (Mastodon 4.3) through the real server: the policy in its
 * v2 and v1 forms, with Mastodon's defaults; notifications from accounts the policy filters held
 * as requests (out of the list, the unread count, the groups and streaming; counted on the
 * request with the last status), released on accept (with `notifications_merged` streamed, and
 * the sender accepted from then on), deleted on dismiss, the batch forms, drop, the default
 * filtering of private mentions, pagination with Link headers and a fixed statement count.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { notificationsConsumer } from '../../src/effects/notifications.ts';
import type { ConsumerRecord } from '../../src/effects/registry.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dave: TestUser;

beforeAll(async () => {
  roost = await startTestRoost();
  [alice, bob, carol, dave] = [await createTestUser(roost, 'alice'), await createTestUser(roost, 'bob'), await createTestUser(roost, 'carol'), await createTestUser(roost, 'dave')];
  // alice follows carol: carol is never "not followed".
  expect((await alice.api(`/api/v1/accounts/${carol.account.id}/follow`, { method: 'POST' })).status).toBe(200);
}, 60_000);
afterAll(async () => roost?.close());

const post = async (u: TestUser, status: string, extra: Record<string, unknown> = {}) => {
  const res = await u.api('/api/v1/statuses', { method: 'POST', body: { status, ...extra } });
  expect(res.status).toBe(200);
  return res.body.id as string;
};

async function list(u: TestUser) {
  await settled(roost);
  const res = await u.api('/api/v1/notifications');
  expect(res.status).toBe(200);
  return (res.body as any[]).map((n) => [n.type, n.account.acct, n.status?.id ?? null]);
}

async function requests(u: TestUser, query = '') {
  await settled(roost);
  const res = await u.api(`/api/v1/notifications/requests${query}`);
  expect(res.status).toBe(200);
  return res;
}

const unread = async (u: TestUser) => (await u.api('/api/v1/notifications/unread_count')).body.count as number;
const policy = async (u: TestUser) => (await u.api('/api/v2/notifications/policy')).body;

/** The streaming frames written for `accountId`'s notification stream, by event. */
async function frames(accountId: string): Promise<{ event: string; payload: string | null }[]> {
  await settled(roost);
  return roost.services.db.sql.query(`select event, payload from streaming_events where $1 = any(streams) order by id`, [`user:notification:${accountId}`]);
}

describe('the policy', () => {
  it("answers Mastodon's defaults, in v2 and in v1 form", async () => {
    const v2 = await alice.api('/api/v2/notifications/policy');
    expect(v2.status).toBe(200);
    expect(v2.body).toEqual({
      for_not_following: 'accept', for_not_followers: 'accept', for_new_accounts: 'accept', for_private_mentions: 'filter', for_limited_accounts: 'filter',
      summary: { pending_requests_count: 0, pending_notifications_count: 0 },
    });
    expect(Object.keys(v2.body)).toEqual(['for_not_following', 'for_not_followers', 'for_new_accounts', 'for_private_mentions', 'for_limited_accounts', 'summary']);
    const v1 = await alice.api('/api/v1/notifications/policy');
    expect(v1.body).toEqual({
      filter_not_following: false, filter_not_followers: false, filter_new_accounts: false, filter_private_mentions: true,
      summary: { pending_requests_count: 0, pending_notifications_count: 0 },
    });
  });

  it('PATCH v2 changes the fields given; a value outside accept/filter/drop is a 422 that changes nothing', async () => {
    const res = await dave.api('/api/v2/notifications/policy', { method: 'PATCH', body: { for_new_accounts: 'drop', for_limited_accounts: 'accept' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ for_not_following: 'accept', for_new_accounts: 'drop', for_private_mentions: 'filter', for_limited_accounts: 'accept' });
    const bad = await dave.api('/api/v2/notifications/policy', { method: 'PATCH', body: { for_not_following: 'filter', for_not_followers: 'maybe' } });
    expect(bad.status).toBe(422);
    expect(bad.body.details).toEqual({ for_not_followers: [{ error: 'ERR_INCLUSION', description: 'is not included in the list' }] });
    expect(await policy(dave)).toMatchObject({ for_not_following: 'accept', for_not_followers: 'accept', for_new_accounts: 'drop' });
    // v1: booleans, true → filter, false → accept; drop reads as filtered.
    const v1 = await dave.api('/api/v1/notifications/policy', { method: 'PUT', body: { filter_not_followers: true, filter_private_mentions: 'false' } });
    expect(v1.status).toBe(200);
    expect(v1.body).toMatchObject({ filter_not_following: false, filter_not_followers: true, filter_new_accounts: true, filter_private_mentions: false });
    expect(await policy(dave)).toMatchObject({ for_not_followers: 'filter', for_new_accounts: 'drop', for_private_mentions: 'accept', for_limited_accounts: 'accept' });
    // Back to the defaults.
    await dave.api('/api/v2/notifications/policy', { method: 'PATCH', body: { for_not_followers: 'accept', for_new_accounts: 'accept', for_private_mentions: 'filter', for_limited_accounts: 'filter' } });
  });
});

describe('requests', () => {
  let pub: string;
  let mention1: string;
  let mention2: string;
  let requestId: string;

  it('holds what a filtered account sends: not listed, not counted unread, not grouped, not streamed', async () => {
    expect((await alice.api('/api/v2/notifications/policy', { method: 'PATCH', body: { for_not_following: 'filter' } })).status).toBe(200);
    const streamedBefore = (await frames(alice.account.id)).length;
    mention1 = await post(bob, '@alice hello there');
    const mine = await post(alice, 'like this');
    await settled(roost);
    expect((await bob.api(`/api/v1/statuses/${mine}/favourite`, { method: 'POST' })).status).toBe(200);
    await settled(roost);
    mention2 = await post(bob, '@alice hello again');
    // Its notification is written before carol's post: two event jobs may run side by side, and
    // the order of the list (by notification id) is what the test reads.
    await settled(roost);
    const fromCarol = await post(carol, '@alice I am followed');
    expect(await list(alice)).toEqual([['mention', 'carol', fromCarol]]);
    expect(await unread(alice)).toBe(1);
    expect((await alice.api('/api/v2/notifications')).body.notification_groups.map((g: any) => g.type)).toEqual(['mention']);
    expect((await frames(alice.account.id)).slice(streamedBefore).map((f) => f.event)).toEqual(['notification']);
    // The rows are there, held.
    const [{ n }] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from notifications where account_id = $1 and from_account_id = $2 and filtered`, [alice.account.id, bob.account.id]);
    expect(n).toBe(3);
  });

  it('lists one request per account with its count (a string) and last status; the policy sums them', async () => {
    const res = await requests(alice);
    expect(res.body.length).toBe(1);
    const [r] = res.body;
    requestId = r.id;
    expect(Object.keys(r)).toEqual(['id', 'created_at', 'updated_at', 'notifications_count', 'account', 'last_status']);
    expect(r).toMatchObject({ notifications_count: '3', account: { id: bob.account.id, acct: 'bob' }, last_status: { id: mention2, content: expect.stringContaining('hello again') } });
    expect(r.id).toMatch(/^\d+$/);
    expect(r.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(new Date(r.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(r.created_at).getTime());
    expect((await alice.api(`/api/v1/notifications/requests/${r.id}`)).body).toEqual(r);
    expect((await policy(alice)).summary).toEqual({ pending_requests_count: 1, pending_notifications_count: 3 });
    // Not anyone else's.
    for (const [method, path] of [['GET', `/api/v1/notifications/requests/${r.id}`], ['POST', `/api/v1/notifications/requests/${r.id}/accept`], ['POST', `/api/v1/notifications/requests/${r.id}/dismiss`], ['GET', '/api/v1/notifications/requests/123456']]) {
      const other = await bob.api(path!, { method });
      expect([other.status, other.body]).toEqual([404, { error: 'Record not found' }]);
    }
    expect((await requests(bob)).body).toEqual([]);
    expect((await alice.api('/api/v1/notifications/requests/merged')).body).toEqual({ merged: true });
    // Held ones are listed when asked for, or when the list is of their sender's (a request's screen), and readable by id.
    const ofBob = (await alice.api(`/api/v1/notifications?account_id=${bob.account.id}`)).body as any[];
    expect(ofBob.map((n) => [n.type, n.status.id])).toEqual([['mention', mention2], ['favourite', expect.any(String)], ['mention', mention1]]);
    const included = (await alice.api('/api/v1/notifications?include_filtered=true')).body as any[];
    expect(included.map((n) => n.account.acct)).toEqual(['carol', 'bob', 'bob', 'bob']);
    expect((await alice.api(`/api/v1/notifications/${ofBob[0].id}`)).body).toEqual(ofBob[0]);
  });

  it('accept releases them into the list, streams notifications_merged, and accepts the account from then on', async () => {
    const streamedBefore = (await frames(alice.account.id)).length;
    const res = await alice.api(`/api/v1/notifications/requests/${requestId}/accept`, { method: 'POST' });
    expect([res.status, res.body]).toEqual([200, {}]);
    expect((await list(alice)).filter((n) => n[1] === 'bob').map((n) => [n[0], n[2]])).toEqual([['mention', mention2], ['favourite', expect.any(String)], ['mention', mention1]]);
    expect(await unread(alice)).toBe(4);
    expect((await requests(alice)).body).toEqual([]);
    expect((await alice.api(`/api/v1/notifications/requests/${requestId}`)).status).toBe(404);
    expect((await policy(alice)).summary).toEqual({ pending_requests_count: 0, pending_notifications_count: 0 });
    expect((await frames(alice.account.id)).slice(streamedBefore)).toEqual([{ event: 'notifications_merged', payload: '1' }]);
    // bob is accepted now, though alice still does not follow him.
    const third = await post(bob, '@alice third time');
    expect((await list(alice))[0]).toEqual(['mention', 'bob', third]);
    expect((await requests(alice)).body).toEqual([]);
  });

  it('dismiss deletes the held notifications and the request; the next one opens a new request', async () => {
    await post(dave, '@alice from dave');
    const [r] = (await requests(alice)).body;
    expect(r).toMatchObject({ account: { id: dave.account.id }, notifications_count: '1' });
    const before = await list(alice);
    expect((await alice.api(`/api/v1/notifications/requests/${r.id}/dismiss`, { method: 'POST' })).status).toBe(200);
    expect((await requests(alice)).body).toEqual([]);
    expect(await list(alice)).toEqual(before);
    const [{ n }] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from notifications where account_id = $1 and from_account_id = $2`, [alice.account.id, dave.account.id]);
    expect(n).toBe(0);
    // Dismissed is not accepted: dave is held again.
    const again = await post(dave, '@alice still me');
    const [r2] = (await requests(alice)).body;
    expect(r2).toMatchObject({ account: { id: dave.account.id }, notifications_count: '1', last_status: { id: again } });
    expect(await list(alice)).toEqual(before);
    expect((await alice.api(`/api/v1/notifications/requests/${r2.id}/dismiss`, { method: 'POST' })).status).toBe(200);
  });

  it('drop writes nothing, not even a request', async () => {
    expect((await alice.api('/api/v2/notifications/policy', { method: 'PATCH', body: { for_not_following: 'drop' } })).status).toBe(200);
    const before = await list(alice);
    await post(dave, '@alice dropped');
    expect(await list(alice)).toEqual(before);
    expect((await requests(alice)).body).toEqual([]);
    const [{ n }] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from notifications where account_id = $1 and from_account_id = $2`, [alice.account.id, dave.account.id]);
    expect(n).toBe(0);
    await alice.api('/api/v2/notifications/policy', { method: 'PATCH', body: { for_not_following: 'accept' } });
  });

  it("by default, a private mention from an account not followed is held; one from a followed account is not", async () => {
    const held = await post(dave, '@carol a secret', { visibility: 'direct' });
    const fromFollowed = await post(alice, '@carol another secret', { visibility: 'direct' });
    // carol follows nobody: alice's is held too; now carol follows alice and hears her.
    const held2 = (await requests(carol)).body.map((r: any) => [r.account.acct, r.last_status.id]).sort();
    expect(held2).toEqual([['alice', fromFollowed], ['dave', held]].sort());
    expect((await list(carol)).filter((n) => n[0] === 'mention')).toEqual([]);
    expect((await carol.api(`/api/v1/accounts/${alice.account.id}/follow`, { method: 'POST' })).status).toBe(200);
    const open = await post(alice, '@carol now I am followed', { visibility: 'direct' });
    expect((await list(carol)).filter((n) => n[0] === 'mention')).toEqual([['mention', 'alice', open]]);
    // A public mention is not a private one.
    pub = await post(dave, '@carol in public');
    expect((await list(carol))[0]).toEqual(['mention', 'dave', pub]);
  });

  it('accepts and dismisses in batches (id[]), ignoring unknown and others\' ids', async () => {
    const [aliceReq, daveReq] = (await requests(carol)).body.sort((a: any, b: any) => a.account.acct.localeCompare(b.account.acct));
    expect([aliceReq.account.acct, daveReq.account.acct]).toEqual(['alice', 'dave']);
    const mine = await post(carol, '@bob a secret for bob', { visibility: 'direct' });
    const [bobsReq] = (await requests(bob)).body;
    expect(bobsReq.last_status.id).toBe(mine);
    const acc = await carol.api('/api/v1/notifications/requests/accept', { method: 'POST', body: { id: [aliceReq.id, '99999', bobsReq.id, 'abc'] } });
    expect([acc.status, acc.body]).toEqual([200, {}]);
    expect((await requests(carol)).body.map((r: any) => r.id)).toEqual([daveReq.id]);
    expect((await requests(bob)).body.map((r: any) => r.id)).toEqual([bobsReq.id]);
    expect((await list(carol)).some((n) => n[1] === 'alice' && n[0] === 'mention')).toBe(true);
    const dis = await carol.api('/api/v1/notifications/requests/dismiss', { method: 'POST', body: { id: [daveReq.id, bobsReq.id] } });
    expect([dis.status, dis.body]).toEqual([200, {}]);
    expect((await requests(carol)).body).toEqual([]);
    expect((await requests(bob)).body.map((r: any) => r.id)).toEqual([bobsReq.id]);
    // dave's held private mention went with the dismissal; his public one stays.
    expect((await list(carol)).filter((n) => n[1] === 'dave')).toEqual([['mention', 'dave', pub]]);
  });
});

describe('the other conditions', () => {
  it('for_not_followers: a follower of less than 3 days is not yet one (Mastodon); for_limited_accounts: a silenced account not followed is held by default', async () => {
    const frank = await createTestUser(roost, 'frank');
    const gina = await createTestUser(roost, 'gina');
    const hal = await createTestUser(roost, 'hal');
    await frank.api('/api/v2/notifications/policy', { method: 'PATCH', body: { for_not_followers: 'filter' } });
    expect((await gina.api(`/api/v1/accounts/${frank.account.id}/follow`, { method: 'POST' })).status).toBe(200);
    await settled(roost);
    const early = await post(gina, '@frank new follower here');
    expect((await requests(frank)).body.map((r: any) => [r.account.acct, r.last_status.id])).toEqual([['gina', early]]);
    await roost.services.db.sql.query(`update follows set created_at = created_at - interval '4 days' where account_id = $1`, [gina.account.id]);
    const later = await post(gina, '@frank an old follower now');
    expect((await list(frank)).filter((n) => n[0] === 'mention')).toEqual([['mention', 'gina', later]]);
    // hal is silenced by a moderator: held for frank (default filter), not for one who follows him.
    await roost.services.db.sql.query(`update accounts set silenced_at = now() where id = $1`, [hal.account.id]);
    expect((await gina.api(`/api/v1/accounts/${hal.account.id}/follow`, { method: 'POST' })).status).toBe(200);
    await settled(roost);
    const limited = await post(hal, '@frank @gina limited voice');
    expect((await requests(frank)).body.map((r: any) => r.account.acct).sort()).toEqual(['gina', 'hal']);
    expect((await list(frank)).some((n) => n[2] === limited)).toBe(false);
    expect((await list(gina)).filter((n) => n[0] === 'mention')).toEqual([['mention', 'hal', limited]]);
  });
});

describe('a page of requests', () => {
  it('pages newest first with Link headers, and costs a fixed number of statements', async () => {
    const erin = await createTestUser(roost, 'erin');
    await erin.api('/api/v2/notifications/policy', { method: 'PATCH', body: { for_not_following: 'filter' } });
    const senders: TestUser[] = [];
    for (let i = 0; i < 6; i++) senders.push(await createTestUser(roost, `sender${i}`));
    await post(senders[0]!, '@erin one');
    await settled(roost);
    await post(senders[1]!, '@erin two');
    const small = await capturedStatements(roost, () => erin.api('/api/v1/notifications/requests'));
    for (let i = 2; i < 6; i++) {
      await settled(roost); // requests are numbered as their events are handled
      await post(senders[i]!, `@erin number ${i}`);
    }
    await settled(roost);
    const all = (await requests(erin)).body as any[];
    expect(all.map((r) => r.account.acct)).toEqual(['sender5', 'sender4', 'sender3', 'sender2', 'sender1', 'sender0']);
    const big = await capturedStatements(roost, () => erin.api('/api/v1/notifications/requests'));
    expect(big).toEqual(small);
    const first = await requests(erin, '?limit=2');
    expect(first.body.map((r: any) => r.account.acct)).toEqual(['sender5', 'sender4']);
    const link = first.headers.get('link')!;
    const next = new URL(/<([^>]+)>; rel="next"/.exec(link)![1]!);
    expect(next.searchParams.get('max_id')).toBe(all[1].id);
    expect(/<([^>]+)>; rel="prev"/.exec(link)![1]).toContain(`min_id=${all[0].id}`);
    expect((await requests(erin, `?limit=2&max_id=${all[1].id}`)).body.map((r: any) => r.account.acct)).toEqual(['sender3', 'sender2']);
    expect((await requests(erin, `?limit=2&min_id=${all[2].id}`)).body.map((r: any) => r.account.acct)).toEqual(['sender5', 'sender4']);
    expect((await erin.api('/api/v2/notifications/policy')).body.summary).toEqual({ pending_requests_count: 6, pending_notifications_count: 6 });
  });
});

describe('the notifications consumer', () => {
  it('applies the policies of all the recipients in a fixed number of statements (1 and 5 recipients alike)', async () => {
    const recipients: TestUser[] = [];
    for (let i = 0; i < 5; i++) recipients.push(await createTestUser(roost, `many${i}`));
    // One accepts, one filters, one drops everyone not followed, one accepted the sender; one default.
    await recipients[1]!.api('/api/v2/notifications/policy', { method: 'PATCH', body: { for_not_following: 'filter' } });
    await recipients[2]!.api('/api/v2/notifications/policy', { method: 'PATCH', body: { for_not_following: 'drop' } });
    await recipients[3]!.api('/api/v2/notifications/policy', { method: 'PATCH', body: { for_new_accounts: 'filter' } });
    const sender = await createTestUser(roost, 'loud');
    const one = await post(sender, '@many0 hi');
    const five = await post(sender, '@many0 @many1 @many2 @many3 @many4 hi all');
    await settled(roost);
    const record = async (statusId: string): Promise<ConsumerRecord<'notifications'>> => {
      const [r] = await roost.services.db.sql.query<{ id: string; actor_kind: string; actor_id: string; actor_version: number | null; origin: string; payload: any }>(
        `select id::text, actor_kind, actor_id::text, actor_version, origin, payload from outbox_events where payload->>'type' = 'status.created' and payload->>'statusId' = $1`,
        [statusId],
      );
      return { id: r!.id, actorKind: r!.actor_kind, actorId: r!.actor_id, actorVersion: r!.actor_version, origin: r!.origin as never, event: r!.payload };
    };
    // What the running server decided: many1 and many3 hold it, many2 has nothing.
    const held = await roost.services.db.sql.query<{ username: string; filtered: boolean }>(
      `select a.username, n.filtered from notifications n join accounts a on a.id = n.account_id where n.status_id = $1 order by a.username`, [five]);
    expect(held.map((r) => [r.username, r.filtered])).toEqual([['many0', false], ['many1', true], ['many3', true], ['many4', false]]);
    // Replayed with the rows gone: the same statements for 1 and 5 recipients, the policies read
    // inside the insert (rendering for the sinks, per recipient, is left out: no sink here).
    const consume = notificationsConsumer(roost.services);
    const replay = async (statusId: string) => {
      await roost.services.db.sql.query(`delete from notifications where status_id = $1`, [statusId]);
      const rec = await record(statusId);
      return capturedStatements(roost, () => consume(rec));
    };
    const small = await replay(one);
    const big = await replay(five);
    expect(big).toEqual(small);
    expect(big.filter((s) => /notification_policies|notification_permissions/.test(s))).toEqual([]);
    expect(big.length).toBeLessThanOrEqual(3);
    // And it wrote what the server wrote.
    const again = await roost.services.db.sql.query<{ username: string; filtered: boolean }>(
      `select a.username, n.filtered from notifications n join accounts a on a.id = n.account_id where n.status_id = $1 order by a.username`, [five]);
    expect(again).toEqual(held);
  });
});
