/**
 * Notifications through the real server: each type produced once, by the event it comes from,
 * with Mastodon's exact entity; blocks and mutes respected; a replayed event creates nothing and
 * reaches no sink twice; types[] / exclude_types[]; dismiss and clear; the unread count following
 * the `notifications` marker; v2 groups (three favourites in one group); the poll's end to voters
 * and author; an edit's update notification replacing the earlier one; admin.report on a new
 * report and admin.sign_up on a sign-up, to the staff; a fixed statement count per page.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { notificationsConsumer, type NotificationSink } from '../../src/effects/notifications.ts';
import { closePoll } from '../../src/services/polls.ts';
import type { ConsumerRecord } from '../../src/effects/registry.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dave: TestUser;
let admin: TestUser;

beforeAll(async () => {
  roost = await startTestRoost({ registrations: { mode: 'open' }, instance: { rules: [{ text: 'Be nice', hint: '' }, { text: 'No spam', hint: '' }] } });
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
  carol = await createTestUser(roost, 'carol');
  dave = await createTestUser(roost, 'dave');
  admin = await createTestUser(roost, 'boss', { role: 'Admin' });
}, 60_000);
afterAll(async () => roost?.close());

const post = async (u: TestUser, status: string, extra: Record<string, unknown> = {}) => {
  const res = await u.api('/api/v1/statuses', { method: 'POST', body: { status, ...extra } });
  expect(res.status).toBe(200);
  return res.body.id as string;
};

async function list(u: TestUser, query = '') {
  await settled(roost);
  const res = await u.api(`/api/v1/notifications${query}`);
  expect(res.status).toBe(200);
  return res.body as any[];
}

const ofType = async (u: TestUser, type: string) => (await list(u)).filter((n) => n.type === type);

async function clear(...users: TestUser[]) {
  await settled(roost);
  for (const u of users) expect((await u.api('/api/v1/notifications/clear', { method: 'POST' })).status).toBe(200);
}

async function outboxRecord(where: string, params: unknown[]): Promise<ConsumerRecord<'notifications'>> {
  const [r] = await roost.services.db.sql.query<{ id: string; actor_kind: string; actor_id: string; actor_version: number | null; origin: string; payload: any }>(
    `select id::text, actor_kind, actor_id::text, actor_version, origin, payload from outbox_events where ${where} order by id desc limit 1`,
    params,
  );
  expect(r).toBeTruthy();
  return { id: r!.id, actorKind: r!.actor_kind, actorId: r!.actor_id, actorVersion: r!.actor_version, origin: r!.origin as never, event: r!.payload };
}

describe('each type, once, with the exact entity', () => {
  it('mention: to the local account mentioned, not the author, not when it blocks or mutes the author', async () => {
    await clear(alice, bob, carol, dave);
    expect((await carol.api(`/api/v1/accounts/${alice.account.id}/block`, { method: 'POST' })).status).toBe(200);
    expect((await dave.api(`/api/v1/accounts/${alice.account.id}/mute`, { method: 'POST' })).status).toBe(200);
    const id = await post(alice, '@bob @carol @dave @alice hello');
    const [n, ...rest] = await list(bob);
    expect(rest).toEqual([]);
    expect(Object.keys(n)).toEqual(['id', 'type', 'group_key', 'created_at', 'account', 'status']);
    expect(n).toMatchObject({ type: 'mention', group_key: `ungrouped-${n.id}`, account: { id: alice.account.id, acct: 'alice' }, status: { id, content: expect.stringContaining('hello') } });
    expect(typeof n.id).toBe('string');
    expect(n.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await list(alice)).toEqual([]);
    expect(await list(carol)).toEqual([]);
    expect(await list(dave)).toEqual([]);
    await carol.api(`/api/v1/accounts/${alice.account.id}/unblock`, { method: 'POST' });
    await dave.api(`/api/v1/accounts/${alice.account.id}/unmute`, { method: 'POST' });
    // GET one by id; another's id is a 404.
    expect((await bob.api(`/api/v1/notifications/${n.id}`)).body).toEqual(n);
    expect((await alice.api(`/api/v1/notifications/${n.id}`)).status).toBe(404);
    // bob mutes the thread: a reply in it that mentions him notifies nobody.
    expect((await bob.api(`/api/v1/statuses/${id}/mute`, { method: 'POST' })).status).toBe(200);
    await post(alice, '@bob still there?', { in_reply_to_id: id });
    expect((await list(bob)).map((x) => x.id)).toEqual([n.id]);
  });

  it('follow, then status to a follower who asked to be notified (a reply to another account notifies nobody)', async () => {
    await clear(alice, bob);
    expect((await bob.api(`/api/v1/accounts/${alice.account.id}/follow`, { body: { notify: true } })).status).toBe(200);
    const [follow, ...more] = await list(alice);
    expect(more).toEqual([]);
    expect(Object.keys(follow)).toEqual(['id', 'type', 'group_key', 'created_at', 'account']);
    expect(follow).toMatchObject({ type: 'follow', account: { id: bob.account.id } });
    expect(follow.group_key).toMatch(/^follow-\d+$/);
    const id = await post(alice, 'news for followers');
    await post(alice, `@carol a reply`, { in_reply_to_id: await post(carol, 'carol speaks') });
    const statuses = await ofType(bob, 'status');
    expect(statuses.map((n) => [n.status.id, n.account.id, n.group_key])).toEqual([[id, alice.account.id, `ungrouped-${statuses[0].id}`]]);
  });

  it("the follow notification goes with the follow: remove_from_followers, a block by either side (list and unread_count)", async () => {
    for (const u of [bob, carol, dave]) expect((await u.api(`/api/v1/accounts/${alice.account.id}/unfollow`, { method: 'POST' })).status).toBe(200);
    await clear(alice, bob, carol, dave);
    const unread = async (u: TestUser) => (await u.api('/api/v1/notifications/unread_count')).body.count as number;
    for (const u of [bob, carol, dave]) expect((await u.api(`/api/v1/accounts/${alice.account.id}/follow`, { method: 'POST' })).status).toBe(200);
    expect((await ofType(alice, 'follow')).map((n) => n.account.id).sort()).toEqual([bob.account.id, carol.account.id, dave.account.id].sort());
    expect(await unread(alice)).toBe(3);
    // alice removes bob from her followers; alice blocks carol; dave blocks alice.
    expect((await alice.api(`/api/v1/accounts/${bob.account.id}/remove_from_followers`, { method: 'POST' })).status).toBe(200);
    expect((await alice.api(`/api/v1/accounts/${carol.account.id}/block`, { method: 'POST' })).status).toBe(200);
    expect((await dave.api(`/api/v1/accounts/${alice.account.id}/block`, { method: 'POST' })).status).toBe(200);
    expect(await list(alice)).toEqual([]);
    expect(await unread(alice)).toBe(0);
    expect((await alice.api('/api/v2/notifications')).body.notification_groups).toEqual([]);
    const [{ n }] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from notifications where account_id = $1 and type = 'follow'`, [alice.account.id]);
    expect(n).toBe(0);
    await alice.api(`/api/v1/accounts/${carol.account.id}/unblock`, { method: 'POST' });
    await dave.api(`/api/v1/accounts/${alice.account.id}/unblock`, { method: 'POST' });
  });

  it('reblog and favourite: to the author, with the original status', async () => {
    await clear(alice, bob);
    const id = await post(alice, 'boost me');
    const reblog = await bob.api(`/api/v1/statuses/${id}/reblog`, { method: 'POST' });
    expect(reblog.status).toBe(200);
    await settled(roost); // notifications are numbered as their events are handled
    expect((await bob.api(`/api/v1/statuses/${id}/favourite`, { method: 'POST' })).status).toBe(200);
    const got = await list(alice);
    expect(got.map((n) => [n.type, n.account.id, n.status.id])).toEqual([
      ['favourite', bob.account.id, id],
      ['reblog', bob.account.id, id],
    ]);
    expect(got[0].group_key).toMatch(new RegExp(`^favourite-${id}-\\d+$`));
    expect(got[1].group_key).toMatch(new RegExp(`^reblog-${id}-\\d+$`));
    // Taken back: the notification goes with it.
    await bob.api(`/api/v1/statuses/${id}/unfavourite`, { method: 'POST' });
    expect((await list(alice)).map((n) => n.type)).toEqual(['reblog']);
  });

  it('follow_request to a locked account, gone once authorized', async () => {
    await clear(dave);
    expect((await dave.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } })).status).toBe(200);
    expect((await carol.api(`/api/v1/accounts/${dave.account.id}/follow`, { method: 'POST' })).body.requested).toBe(true);
    const [n, ...rest] = await list(dave);
    expect(rest).toEqual([]);
    expect(n).toMatchObject({ type: 'follow_request', group_key: `ungrouped-${n.id}`, account: { id: carol.account.id } });
    expect(n.status).toBeUndefined();
    expect((await dave.api(`/api/v1/follow_requests/${carol.account.id}/authorize`, { method: 'POST' })).status).toBe(200);
    expect(await list(dave)).toEqual([]);
  });

  it('update: to those who reblogged, the latest edit replacing the earlier notification', async () => {
    await clear(bob, carol);
    const id = await post(alice, 'first words');
    await bob.api(`/api/v1/statuses/${id}/reblog`, { method: 'POST' });
    await carol.api(`/api/v1/statuses/${id}/reblog`, { method: 'POST' });
    expect((await alice.api(`/api/v1/statuses/${id}`, { method: 'PUT', body: { status: 'second words' } })).status).toBe(200);
    const [first] = await ofType(bob, 'update');
    expect(first).toMatchObject({ type: 'update', account: { id: alice.account.id }, status: { id, content: expect.stringContaining('second') } });
    expect((await alice.api(`/api/v1/statuses/${id}`, { method: 'PUT', body: { status: 'third words' } })).status).toBe(200);
    for (const u of [bob, carol]) {
      const updates = await ofType(u, 'update');
      expect(updates.length).toBe(1);
      expect(updates[0].status.content).toContain('third');
    }
    expect((await ofType(bob, 'update'))[0].id).not.toBe(first.id);
    expect(await ofType(alice, 'update')).toEqual([]);
    // An edit that mentions dave for the first time: a mention, once.
    await clear(dave);
    expect((await alice.api(`/api/v1/statuses/${id}`, { method: 'PUT', body: { status: 'fourth words @dave' } })).status).toBe(200);
    expect((await alice.api(`/api/v1/statuses/${id}`, { method: 'PUT', body: { status: 'fifth words @dave' } })).status).toBe(200);
    expect((await list(dave)).map((n) => [n.type, n.status.id])).toEqual([['mention', id]]);
    expect((await ofType(bob, 'update')).length).toBe(1);
  });

  it('poll: to the voters and the author when it ends', async () => {
    await clear(alice, bob, carol);
    const res = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'pick', poll: { options: ['a', 'b'], expires_in: 3600 } } });
    const { id, poll } = res.body;
    expect((await bob.api(`/api/v1/polls/${poll.id}/votes`, { method: 'POST', body: { choices: ['0'] } })).status).toBe(200);
    expect((await carol.api(`/api/v1/polls/${poll.id}/votes`, { method: 'POST', body: { choices: ['1'] } })).status).toBe(200);
    expect(await closePoll(roost.services, poll.id, 'client')).toBe(true);
    for (const u of [alice, bob, carol]) {
      const polls = await ofType(u, 'poll');
      expect(polls.map((n) => [n.account.id, n.status.id, n.status.poll.expired])).toEqual([[alice.account.id, id, true]]);
    }
    expect(await ofType(dave, 'poll')).toEqual([]);
  });
});

describe('reports and the staff', () => {
  it('POST /api/v1/reports answers the Report entity; the admin gets admin.report', async () => {
    await clear(admin);
    const s = await post(alice, 'reportable');
    const res = await bob.api('/api/v1/reports', { body: { account_id: alice.account.id, status_ids: [s], comment: 'Spam account', category: 'spam', forward: false } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['id', 'action_taken', 'action_taken_at', 'category', 'comment', 'forwarded', 'created_at', 'status_ids', 'rule_ids', 'target_account']);
    expect(res.body).toMatchObject({
      action_taken: false, action_taken_at: null, category: 'spam', comment: 'Spam account', forwarded: false,
      status_ids: [s], rule_ids: null, target_account: { id: alice.account.id, acct: 'alice' },
    });
    const [n, ...rest] = await list(admin);
    expect(rest).toEqual([]);
    expect(Object.keys(n)).toEqual(['id', 'type', 'group_key', 'created_at', 'account', 'report']);
    expect(n).toMatchObject({ type: 'admin.report', group_key: `ungrouped-${n.id}`, account: { id: bob.account.id }, report: res.body });
    expect(await ofType(alice, 'admin.report')).toEqual([]);
    // rule_ids make it a violation
    const v = await bob.api('/api/v1/reports', { body: { account_id: alice.account.id, rule_ids: ['2'], category: 'spam' } });
    expect(v.body).toMatchObject({ category: 'violation', rule_ids: ['2'], status_ids: null, comment: '' });
  });

  it('bad reports: unknown account or status 404, bad category or rules 422, nothing written', async () => {
    const before = (await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from reports`))[0]!.n;
    expect(await bob.api('/api/v1/reports', { body: { account_id: '99999999' } })).toMatchObject({ status: 404, body: { error: 'Record not found' } });
    expect(await bob.api('/api/v1/reports', { body: {} })).toMatchObject({ status: 404, body: { error: 'Record not found' } });
    const carolStatus = await post(carol, 'not alice');
    expect((await bob.api('/api/v1/reports', { body: { account_id: alice.account.id, status_ids: [carolStatus] } })).status).toBe(404);
    expect(await bob.api('/api/v1/reports', { body: { account_id: alice.account.id, category: 'rude' } })).toMatchObject({
      status: 422,
      body: { error: 'Validation failed: Category is not included in the list', details: { category: [{ error: 'ERR_INCLUSION', description: 'is not included in the list' }] } },
    });
    expect(await bob.api('/api/v1/reports', { body: { account_id: alice.account.id, category: 'violation' } })).toMatchObject({
      status: 422, body: { error: 'Validation failed: Rule ids does not reference valid rules' },
    });
    expect((await bob.api('/api/v1/reports', { body: { account_id: alice.account.id, rule_ids: ['9'] } })).status).toBe(422);
    expect((await bob.api('/api/v1/reports', { body: { account_id: alice.account.id, comment: 'x'.repeat(1001) } })).status).toBe(422);
    expect((await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from reports`))[0]!.n).toBe(before);
  });

  it('admin.sign_up: a sign-up reaches the admin, not other users', async () => {
    await clear(admin, alice);
    const app = (await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Signup', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' } })).body;
    const token = (await apiRequest(roost, '/oauth/token', { body: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret, scope: 'read write' } })).body.access_token;
    const res = await apiRequest(roost, '/api/v1/accounts', { token, body: { username: 'newbie', email: 'newbie@example.test', password: 'long enough pw', agreement: true, locale: 'en' } });
    expect(res.status).toBe(200);
    const [n, ...rest] = await list(admin);
    expect(rest).toEqual([]);
    expect(n).toMatchObject({ type: 'admin.sign_up', account: { username: 'newbie' } });
    expect(n.group_key).toMatch(/^admin\.sign_up-\d+$/);
    expect(await list(alice)).toEqual([]);
  });
});

describe('an event handled twice', () => {
  it('creates nothing twice and reaches the sinks only with what it inserted', async () => {
    await clear(alice);
    const id = await post(alice, 'like me once');
    await bob.api(`/api/v1/statuses/${id}/favourite`, { method: 'POST' });
    const [fav] = await list(alice);
    const record = await outboxRecord(`type = 'status.favourited' and payload->>'statusId' = $1`, [id]);
    const got: Parameters<NotificationSink>[0][] = [];
    const consume = notificationsConsumer(roost.services, [async (items) => void got.push(items)]);
    await consume(record);
    await consume(record);
    expect(got).toEqual([]);
    expect(await list(alice)).toEqual([fav]);
    // Rows gone (as if never written): a replay writes it again, once, and the sink gets it rendered.
    await roost.services.db.sql.query(`delete from notifications where id = $1`, [fav.id]);
    await consume(record);
    await consume(record);
    expect(got.length).toBe(1);
    const [again] = await list(alice);
    expect(got[0]).toEqual([{ accountId: alice.account.id, notification: again }]);
    expect(again).toMatchObject({ type: 'favourite', account: { id: bob.account.id }, status: { id } });
  });
});

describe('a sink failing after the rows were written', () => {
  it('hands the rows over when the event is retried, once, and not again after', async () => {
    await clear(alice);
    const id = await post(alice, 'like me through a broken sink');
    // The running server's consumer has surfaced this one; the test replays the event through a
    // consumer whose sink fails once, as a process dying between the insert and the sinks would.
    await bob.api(`/api/v1/statuses/${id}/favourite`, { method: 'POST' });
    const [fav] = await list(alice);
    await roost.services.db.sql.query(`delete from notifications where id = $1`, [fav.id]);
    const record = await outboxRecord(`type = 'status.favourited' and payload->>'statusId' = $1`, [id]);
    const got: Parameters<NotificationSink>[0][] = [];
    let failures = 1;
    const consume = notificationsConsumer(
      roost.services,
      [
        async (items) => {
          if (failures-- > 0) throw new Error('sink down');
          got.push(items);
        },
      ],
    );
    await expect(consume(record)).rejects.toThrow('sink down');
    // The row is there, not yet handed over.
    const [row] = await roost.services.db.sql.query<{ id: string; surfaced_at: unknown }>(
      `select id::text, surfaced_at from notifications where account_id = $1 and type = 'favourite' and status_id = $2`,
      [alice.account.id, id],
    );
    expect(row).toMatchObject({ surfaced_at: null });
    await consume(record); // the job's retry
    await consume(record); // and a replay after it
    expect(got.length).toBe(1);
    expect(got[0]).toEqual([{ accountId: alice.account.id, notification: expect.objectContaining({ id: row!.id, type: 'favourite', status: expect.objectContaining({ id }) }) }]);
    const [after] = await roost.services.db.sql.query<{ surfaced_at: unknown }>(`select surfaced_at from notifications where id = $1`, [row!.id]);
    expect(after!.surfaced_at).not.toBeNull();
  });
});

describe('listing, dismissing, the unread count', () => {
  let ids: string[];
  beforeAll(async () => {
    await clear(alice);
    const s = await post(alice, 'list me');
    await post(bob, '@alice one');
    await settled(roost);
    await carol.api(`/api/v1/statuses/${s}/favourite`, { method: 'POST' });
    await settled(roost);
    await post(dave, '@alice two');
    ids = (await list(alice)).map((n) => n.id);
    expect(ids.length).toBe(3);
  });

  it('types[], exclude_types[], account_id, pagination with Link headers', async () => {
    expect((await list(alice, '?types[]=mention')).map((n) => n.type)).toEqual(['mention', 'mention']);
    expect((await list(alice, '?exclude_types[]=mention')).map((n) => n.type)).toEqual(['favourite']);
    expect((await list(alice, '?types[]=mention&types[]=favourite&exclude_types[]=favourite')).length).toBe(2);
    expect((await list(alice, `?account_id=${carol.account.id}`)).map((n) => n.account.id)).toEqual([carol.account.id]);
    expect(await list(alice, '?types[]=nonsense')).toEqual([]);
    const res = await alice.api('/api/v1/notifications?limit=2');
    expect(res.body.map((n: any) => n.id)).toEqual(ids.slice(0, 2));
    const link = res.headers.get('link')!;
    expect(link).toContain(`max_id=${ids[1]}>; rel="next"`);
    expect(link).toContain(`min_id=${ids[0]}>; rel="prev"`);
    expect((await alice.api(`/api/v1/notifications?max_id=${ids[1]}`)).body.map((n: any) => n.id)).toEqual([ids[2]]);
    expect((await alice.api(`/api/v1/notifications?min_id=${ids[2]}&limit=1`)).body.map((n: any) => n.id)).toEqual([ids[1]]);
  });

  it('the unread count follows the notifications marker', async () => {
    expect((await alice.api('/api/v1/notifications/unread_count')).body).toEqual({ count: 3 });
    expect((await alice.api('/api/v2/notifications/unread_count')).body).toEqual({ count: 3 });
    expect((await alice.api('/api/v1/markers', { body: { notifications: { last_read_id: ids[1] } } })).status).toBe(200);
    expect((await alice.api('/api/v1/notifications/unread_count')).body).toEqual({ count: 1 });
    expect((await alice.api('/api/v1/notifications/unread_count?types[]=favourite')).body).toEqual({ count: 0 });
    expect((await alice.api('/api/v1/notifications/unread_count?limit=1')).body).toEqual({ count: 1 });
    await alice.api('/api/v1/markers', { body: { notifications: { last_read_id: ids[0] } } });
    expect((await alice.api('/api/v1/notifications/unread_count')).body).toEqual({ count: 0 });
  });

  it('dismiss one (another\'s is a 404), then clear all', async () => {
    expect((await bob.api(`/api/v1/notifications/${ids[0]}/dismiss`, { method: 'POST' })).status).toBe(404);
    expect(await alice.api(`/api/v1/notifications/${ids[0]}/dismiss`, { method: 'POST' })).toMatchObject({ status: 200, body: {} });
    expect((await list(alice)).map((n) => n.id)).toEqual(ids.slice(1));
    expect((await alice.api(`/api/v1/notifications/${ids[0]}/dismiss`, { method: 'POST' })).status).toBe(404);
    await clear(alice);
    expect(await list(alice)).toEqual([]);
  });
});

describe('grouped notifications (v2)', () => {
  it('three favourites of one status make one group with its sample accounts and count', async () => {
    await clear(alice);
    const s = await post(alice, 'group me');
    const mention = await post(dave, '@alice between');
    for (const u of [bob, carol, dave]) {
      await settled(roost); // notifications are numbered as their events are handled
      expect((await u.api(`/api/v1/statuses/${s}/favourite`, { method: 'POST' })).status).toBe(200);
    }
    await settled(roost);
    const v1 = await list(alice);
    expect(v1.map((n) => n.type)).toEqual(['favourite', 'favourite', 'favourite', 'mention']);
    const res = await alice.api('/api/v2/notifications');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['accounts', 'statuses', 'notification_groups']);
    const [fav, men] = res.body.notification_groups;
    expect(res.body.notification_groups.length).toBe(2);
    expect(fav).toEqual({
      group_key: v1[0].group_key,
      notifications_count: 3,
      type: 'favourite',
      most_recent_notification_id: Number(v1[0].id),
      page_min_id: v1[2].id,
      page_max_id: v1[0].id,
      latest_page_notification_at: v1[0].created_at,
      sample_account_ids: [dave.account.id, carol.account.id, bob.account.id],
      status_id: s,
    });
    expect(men).toEqual({
      group_key: `ungrouped-${v1[3].id}`, notifications_count: 1, type: 'mention', most_recent_notification_id: Number(v1[3].id),
      page_min_id: v1[3].id, page_max_id: v1[3].id, latest_page_notification_at: v1[3].created_at, sample_account_ids: [dave.account.id], status_id: mention,
    });
    // A JSON integer with the exact digits (the parsed body above rounds it, as any JavaScript client would).
    const raw = await (await fetch(roost.at('/api/v2/notifications'), { headers: { authorization: `Bearer ${alice.token}` } })).text();
    expect(raw).toContain(`"type":"favourite","most_recent_notification_id":${v1[0].id},"page_min_id":"${v1[2].id}"`);
    expect(res.body.accounts.map((a: any) => a.id).sort()).toEqual([bob.account.id, carol.account.id, dave.account.id].sort());
    expect(res.body.statuses.map((x: any) => x.id)).toEqual([s, mention]);
    // grouped_types[] without favourite: each stands alone.
    const alone = (await alice.api('/api/v2/notifications?grouped_types[]=follow')).body.notification_groups;
    expect(alone.map((g: any) => g.group_key)).toEqual(v1.map((n) => `ungrouped-${n.id}`));
    // partial avatars: only the newest in full.
    const partial = (await alice.api('/api/v2/notifications?expand_accounts=partial_avatars')).body;
    expect(partial.accounts.map((a: any) => a.id)).toEqual([dave.account.id]);
    expect(partial.partial_accounts.map((a: any) => Object.keys(a))).toEqual([
      ['id', 'acct', 'url', 'avatar', 'avatar_static', 'locked', 'bot'],
      ['id', 'acct', 'url', 'avatar', 'avatar_static', 'locked', 'bot'],
    ]);
    // Paging by groups, as Mastodon: a page holds `limit` groups, each counted within the page's
    // range of ids (its newest notification per group): with limit=1, the newest favourite only.
    const first = await alice.api('/api/v2/notifications?limit=1');
    expect(first.body.notification_groups).toEqual([
      { ...fav, notifications_count: 1, page_min_id: v1[0].id, sample_account_ids: [dave.account.id] },
    ]);
    const next = new URL(/<([^>]+)>; rel="next"/.exec(first.headers.get('link')!)![1]!);
    expect(next.searchParams.get('max_id')).toBe(v1[0].id);
    expect(/<([^>]+)>; rel="prev"/.exec(first.headers.get('link')!)![1]).toContain(`min_id=${v1[0].id}`);
    const second = await apiRequest(roost, next.pathname + next.search, { token: alice.token });
    expect(second.body.notification_groups.map((g: any) => [g.group_key, g.page_max_id, g.sample_account_ids])).toEqual([
      [fav.group_key, v1[1].id, [carol.account.id]],
    ]);
    // limit=2 takes both groups: the range spans every favourite.
    expect((await alice.api('/api/v2/notifications?limit=2')).body.notification_groups).toEqual([fav, men]);
    // One group, its accounts, dismissing it.
    const one = await alice.api(`/api/v2/notifications/${encodeURIComponent(fav.group_key)}`);
    expect(one.body.notification_groups).toEqual([
      { group_key: fav.group_key, notifications_count: 3, type: 'favourite', most_recent_notification_id: Number(v1[0].id), sample_account_ids: fav.sample_account_ids, status_id: s },
    ]);
    expect((await alice.api(`/api/v2/notifications/${encodeURIComponent(fav.group_key)}/accounts`)).body.map((a: any) => a.id)).toEqual(fav.sample_account_ids);
    expect((await bob.api(`/api/v2/notifications/${encodeURIComponent(fav.group_key)}`)).status).toBe(404);
    expect((await alice.api(`/api/v2/notifications/ungrouped-${v1[3].id}`)).body.notification_groups[0].type).toBe('mention');
    expect((await alice.api(`/api/v2/notifications/${encodeURIComponent(fav.group_key)}/dismiss`, { method: 'POST' })).body).toEqual({});
    expect((await list(alice)).map((n) => n.type)).toEqual(['mention']);
  });

  it('a page costs a fixed number of statements whatever its size', async () => {
    await clear(alice);
    await post(bob, '@alice just one');
    const small1 = await capturedStatements(roost, () => alice.api('/api/v1/notifications'));
    const small2 = await capturedStatements(roost, () => alice.api('/api/v2/notifications'));
    for (let i = 0; i < 6; i++) {
      const s = await post(alice, `post ${i}`);
      await (i % 2 ? carol : bob).api(`/api/v1/statuses/${s}/favourite`, { method: 'POST' });
      await (i % 2 ? bob : dave).api(`/api/v1/statuses/${s}/reblog`, { method: 'POST' });
      await post(i % 2 ? carol : dave, `@alice hi ${i}`);
    }
    await settled(roost);
    expect((await list(alice)).length).toBe(19);
    const big1 = await capturedStatements(roost, () => alice.api('/api/v1/notifications'));
    const big2 = await capturedStatements(roost, () => alice.api('/api/v2/notifications'));
    expect(big1).toEqual(small1);
    expect(big2).toEqual(small2);
    // The page and the statuses' batched view (two: the statuses with the recipient's filters, then
    // their authors with the notifications' accounts); a page holding reports adds one. (Four
    // before the notifications' accounts were read with the authors.)
    expect([big1.length, big2.length]).toEqual([3, 3]);
  });
});
