/**
 * One pipeline from event to every screen (issue 12, "What must hold"), through the real server:
 * alice has a WebSocket open on her user, hashtag and list streams, an SSE stream on `user`, and a
 * Web Push subscription pointed at a local push service (which checks the VAPID signature and
 * decrypts every payload). A scripted scenario — a mention, a follow request, a boost, an edit of
 * a status she boosted, a poll's end, a new report — reaches each channel exactly once. Then her
 * filters: `hide` removes a status from the timelines, the notifications, streaming and push
 * alike; `warn` gives the same `filtered` result on every channel; one request editing five
 * keywords yields one `filters_changed`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { startPushService, type PushService } from '../push/push-service.ts';
import { SseClient, WsClient, type Frame } from '../streaming/client.ts';
import { closePoll } from '../../src/services/polls.ts';

let roost: TestRoost;
let push: PushService;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let ws: WsClient;
let sse: SseClient;
let listId: string;
const PUSH_PATH = '/alice-phone';

const SCENARIO_TYPES = ['mention', 'follow_request', 'reblog', 'update', 'poll', 'admin.report'];

async function post(u: TestUser, status: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await u.api('/api/v1/statuses', { method: 'POST', body: { status, ...extra } });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

const parse = (f: { payload?: string; data?: string }) => JSON.parse((f.payload ?? f.data)!);
const wsNotifications = () => ws.frames.filter((f) => f.event === 'notification').map(parse);
const sseNotifications = () => sse.events.filter((e) => e.event === 'notification').map(parse);
const pushes = () => push.received.filter((r) => r.path === PUSH_PATH).map((r) => r.payload);
const updatesOf = (id: string) => (f: Frame) => f.event === 'update' && parse(f).id === id;

beforeAll(async () => {
  roost = await startTestRoost();
  push = await startPushService(roost.services.secrets.vapidPublicKey);
  alice = await createTestUser(roost, 'alice', { role: 'Admin' });
  bob = await createTestUser(roost, 'bob');
  carol = await createTestUser(roost, 'carol');
  expect((await alice.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } })).status).toBe(200);
  expect((await alice.api(`/api/v1/accounts/${bob.account.id}/follow`, { method: 'POST' })).status).toBe(200);
  const list = await alice.api('/api/v1/lists', { method: 'POST', body: { title: 'friends' } });
  listId = list.body.id;
  expect((await alice.api(`/api/v1/lists/${listId}/accounts`, { method: 'POST', body: { account_ids: [bob.account.id] } })).status).toBe(200);

  const phone = push.client(PUSH_PATH);
  const alerts = Object.fromEntries(SCENARIO_TYPES.concat('favourite', 'follow', 'status').map((t) => [t, true]));
  const sub = await alice.api('/api/v1/push/subscription', {
    method: 'POST',
    body: { subscription: { endpoint: phone.endpoint, standard: true, keys: { p256dh: phone.p256dh, auth: phone.auth } }, data: { alerts, policy: 'all' } },
  });
  expect(sub.status).toBe(200);

  ws = await WsClient.open(roost, `?access_token=${alice.token}&stream=user`);
  ws.send({ type: 'subscribe', stream: 'hashtag', tag: 'roost' });
  ws.send({ type: 'subscribe', stream: 'list', list: listId });
  sse = await SseClient.open(roost, '/api/v1/streaming/user', alice.token);
  expect(sse.status).toBe(200);
  await settled(roost);
  await sleep(200);
}, 60_000);

afterAll(async () => {
  ws?.close();
  sse?.abort.abort();
  await push?.close();
  await roost?.close();
});

describe('one event, every channel, exactly once', () => {
  it('a mention, a follow request, a boost, an edit of a boosted status, a poll end and a report reach WebSocket, SSE and Web Push once each', async () => {
    // mention (bob is followed and in alice's list; the status carries #roost)
    const mention = await post(bob, '@alice look at this #roost');
    // follow request (alice is locked)
    expect((await carol.api(`/api/v1/accounts/${alice.account.id}/follow`, { method: 'POST' })).body).toMatchObject({ requested: true });
    // boost of alice's status (public: a locked account posts private by default, and bob does not follow her)
    const own = await post(alice, 'my own words', { visibility: 'public' });
    expect((await bob.api(`/api/v1/statuses/${own}/reblog`, { method: 'POST' })).status).toBe(200);
    // alice boosts bob's status, then bob edits it
    const edited = await post(bob, 'first take');
    expect((await alice.api(`/api/v1/statuses/${edited}/reblog`, { method: 'POST' })).status).toBe(200);
    await settled(roost);
    expect((await bob.api(`/api/v1/statuses/${edited}`, { method: 'PUT', body: { status: 'second take' } })).status).toBe(200);
    // alice votes on bob's poll, which then ends
    const pollStatus = await bob.api('/api/v1/statuses', { method: 'POST', body: { status: 'pick one', poll: { options: ['a', 'b'], expires_in: 3600 } } });
    expect((await alice.api(`/api/v1/polls/${pollStatus.body.poll.id}/votes`, { method: 'POST', body: { choices: ['0'] } })).status).toBe(200);
    await settled(roost);
    expect(await closePoll(roost.services, pollStatus.body.poll.id, 'client')).toBe(true);
    // carol reports bob: alice is an Admin
    const report = await carol.api('/api/v1/reports', { method: 'POST', body: { account_id: bob.account.id, comment: 'spam', category: 'spam' } });
    expect(report.status).toBe(200);

    await eventually(async () => wsNotifications().length >= 6 && sseNotifications().length >= 6 && pushes().length >= 6, 20_000, 'six notifications on every channel');
    await settled(roost);
    await sleep(500);

    const listed = (await alice.api('/api/v1/notifications?limit=40')).body as { id: string; type: string }[];
    expect(listed.map((n) => n.type).sort()).toEqual([...SCENARIO_TYPES].sort());
    const byType = new Map(listed.map((n) => [n.type, n.id]));
    // Each channel: the same six notifications, once each, as the API lists them.
    for (const channel of [wsNotifications(), sseNotifications()]) {
      expect(channel.map((n) => n.type).sort()).toEqual([...SCENARIO_TYPES].sort());
      for (const n of channel) expect(n.id).toBe(byType.get(n.type));
    }
    const pushed = pushes();
    expect(pushed.map((p) => p.notification_type).sort()).toEqual([...SCENARIO_TYPES].sort());
    for (const p of pushed) expect(p.notification_id).toBe(byType.get(p.notification_type));
    expect(push.problems).toEqual([]);
    // The WebSocket carries them on the user stream only (one subscription of it).
    expect(ws.frames.filter((f) => f.event === 'notification').every((f) => f.stream!.length === 1 && f.stream![0] === 'user')).toBe(true);

    // The mentioning status: once on each of the three WebSocket streams, once on SSE.
    const frames = ws.frames.filter(updatesOf(mention));
    expect(frames.map((f) => f.stream).sort()).toEqual([['hashtag', 'roost'], ['list', listId], ['user']]);
    expect(sse.events.filter(updatesOf(mention)).length).toBe(1);
    // The edit of the boosted status: status.update on alice's home stream, once.
    expect(ws.frames.filter((f) => f.event === 'status.update' && parse(f).id === edited).map((f) => f.stream).sort()).toEqual([['list', listId], ['user']]);
    const upd = pushed.find((p) => p.notification_type === 'update');
    expect(upd).toMatchObject({ access_token: alice.token, preferred_locale: 'en', body: 'second take' });
  });
});

describe('filters apply the same on every channel', () => {
  it('hide removes a status from the timelines, the notifications, streaming and push; warn gives the same filtered result everywhere', async () => {
    const hide = await alice.api('/api/v2/filters', {
      method: 'POST',
      body: { title: 'no spoilers', context: ['home', 'notifications', 'public'], filter_action: 'hide', keywords_attributes: [{ keyword: 'finale', whole_word: true }] },
    });
    expect(hide.status).toBe(200);
    const warn = await alice.api('/api/v2/filters', {
      method: 'POST',
      body: { title: 'careful', context: ['home', 'notifications', 'public'], filter_action: 'warn', keywords_attributes: [{ keyword: 'politics', whole_word: true }] },
    });
    expect(warn.status).toBe(200);
    await settled(roost);
    const wsBefore = ws.frames.length;
    const sseBefore = sse.events.length;
    const pushBefore = pushes().length;

    const hidden = await post(bob, '@alice the finale was something #roost');
    const warned = await post(bob, '@alice some politics today #roost');
    await eventually(async () => ws.frames.slice(wsBefore).some((f) => f.event === 'notification' && parse(f).status?.id === warned), 15_000, 'the warned mention on the WebSocket');
    await eventually(async () => pushes().length > pushBefore, 15_000, 'the warned mention pushed');
    await settled(roost);
    await sleep(500);

    // hide: nowhere (the hashtag stream of a public status is the public context: hidden too).
    const home = (await alice.api('/api/v1/timelines/home')).body as { id: string; filtered: unknown[] }[];
    expect(home.map((s) => s.id)).not.toContain(hidden);
    const notes = (await alice.api('/api/v1/notifications')).body as { status?: { id: string; filtered: unknown[] } }[];
    expect(notes.map((n) => n.status?.id)).not.toContain(hidden);
    const grouped = (await alice.api('/api/v2/notifications')).body as { statuses: { id: string }[] };
    expect(grouped.statuses.map((s) => s.id)).not.toContain(hidden);
    const newWs = ws.frames.slice(wsBefore);
    expect(newWs.filter((f) => f.payload?.includes(hidden))).toEqual([]);
    expect(sse.events.slice(sseBefore).filter((e) => e.data?.includes(hidden))).toEqual([]);
    const newPushes = pushes().slice(pushBefore);
    expect(newPushes.map((p) => p.body)).toEqual(['@alice some politics today #roost']);

    // warn: the same FilterResult on the home timeline, the notification, and each stream.
    const expected = [{ filter: { id: warn.body.id, title: 'careful', filter_action: 'warn' }, keyword_matches: ['politics'], status_matches: null }];
    const fromHome = home.find((s) => s.id === warned)!.filtered;
    expect(fromHome).toMatchObject(expected);
    const fromNotification = notes.find((n) => n.status?.id === warned)!.status!.filtered;
    expect(fromNotification).toEqual(fromHome);
    const wsUpdates = newWs.filter(updatesOf(warned));
    expect(wsUpdates.map((f) => f.stream).sort()).toEqual([['hashtag', 'roost'], ['list', listId], ['user']]);
    for (const f of wsUpdates) expect(parse(f).filtered).toEqual(fromHome);
    const wsNote = newWs.filter((f) => f.event === 'notification').map(parse);
    expect(wsNote.map((n) => n.status.id)).toEqual([warned]);
    expect(wsNote[0].status.filtered).toEqual(fromHome);
    const sseUpdate = sse.events.slice(sseBefore).filter(updatesOf(warned)).map(parse);
    expect(sseUpdate.map((s) => s.filtered)).toEqual([fromHome]);
  });

  it('one request editing five keywords yields one filters_changed', async () => {
    const created = await alice.api('/api/v2/filters', {
      method: 'POST',
      body: { title: 'many', context: ['home'], keywords_attributes: ['one', 'two', 'three', 'four'].map((keyword) => ({ keyword })) },
    });
    expect(created.status).toBe(200);
    await settled(roost);
    await sleep(200);
    const before = ws.frames.filter((f) => f.event === 'filters_changed').length;
    const kw = created.body.keywords as { id: string }[];
    const res = await alice.api(`/api/v2/filters/${created.body.id}`, {
      method: 'PUT',
      body: {
        keywords_attributes: [
          { id: kw[0]!.id, keyword: 'uno' },
          { id: kw[1]!.id, keyword: 'dos' },
          { id: kw[2]!.id, _destroy: true },
          { id: kw[3]!.id, whole_word: false },
          { keyword: 'cinco' },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect((res.body.keywords as { keyword: string }[]).map((k) => k.keyword)).toEqual(['uno', 'dos', 'four', 'cinco']);
    await eventually(async () => ws.frames.filter((f) => f.event === 'filters_changed').length > before, 10_000, 'filters_changed');
    await settled(roost);
    await sleep(300);
    const changed = ws.frames.filter((f) => f.event === 'filters_changed').slice(before);
    expect(changed).toHaveLength(1);
    expect(changed[0]).toMatchObject({ stream: ['user'], event: 'filters_changed' });
    expect(changed[0]!.payload).toBeUndefined();
    expect(sse.events.filter((e) => e.event === 'filters_changed').length).toBe(before + 1);
  });
});
