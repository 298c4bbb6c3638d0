/**
 * The streaming API through the real server: WebSocket and SSE clients, events from real posts
 * (REST → outbox → streaming consumer → streaming_events → hub), exact frames, exactly once per
 * stream, blocks and mutes, list ownership, the three ways of giving the token, bad frames with
 * the socket still working, resume after a disconnect.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { SseClient, WsClient, sleep, type Frame } from './client.ts';
import { publishNotification, publishOutboxEvent } from '../../src/streaming/publish.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dave: TestUser;
beforeAll(async () => {
  roost = await startTestRoost();
  [alice, bob, carol, dave] = [await createTestUser(roost, 'alice'), await createTestUser(roost, 'bob'), await createTestUser(roost, 'carol'), await createTestUser(roost, 'dave')];
  // bob follows alice; carol blocks alice; dave mutes alice.
  expect((await bob.api(`/api/v1/accounts/${alice.account.id}/follow`, { method: 'POST' })).status).toBe(200);
  expect((await carol.api(`/api/v1/accounts/${alice.account.id}/block`, { method: 'POST' })).status).toBe(200);
  expect((await dave.api(`/api/v1/accounts/${alice.account.id}/mute`, { method: 'POST' })).status).toBe(200);
  await settled(roost);
}, 60_000);
afterAll(async () => roost?.close());

const post = async (u: TestUser, status: string, extra: Record<string, unknown> = {}) => {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body: { status, ...extra } });
  expect(r.status).toBe(200);
  return r.body.id as string;
};
const isUpdate = (id: string) => (f: Frame) => f.event === 'update' && JSON.parse(f.payload!).id === id;

describe('the streaming API', () => {
  it('health answers OK', async () => {
    const res = await fetch(roost.at('/api/v1/streaming/health'));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('OK');
  });

  it('refuses a missing or invalid token with 401', async () => {
    const res = await fetch(roost.at('/api/v1/streaming/public'));
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'Missing access token' });
    const bad = await fetch(roost.at('/api/v1/streaming/public'), { headers: { authorization: 'Bearer nope' } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ error: 'Invalid access token' });
    await expect(WsClient.open(roost, '?access_token=nope&stream=public')).rejects.toThrow();
  });

  it('delivers a public status once per subscribed stream, in Mastodon frames, with the token given three ways', async () => {
    const byHeader = await WsClient.open(roost, '?stream=public', { headers: { authorization: `Bearer ${bob.token}` } });
    const byProtocol = await WsClient.open(roost, '?stream=public:local', { protocols: [bob.token] });
    expect(byProtocol.ws.protocol).toBe(bob.token);
    const byQuery = await WsClient.open(roost, `?access_token=${bob.token}`);
    byQuery.send({ type: 'subscribe', stream: 'user' });
    byQuery.send({ type: 'subscribe', stream: 'hashtag', tag: 'Roost' });
    byQuery.send({ type: 'subscribe', stream: 'public:remote' });
    await sleep(100);
    const id = await post(alice, 'hello #roost');
    const [pub] = await byHeader.waitFor(isUpdate(id));
    expect(Object.keys(pub)).toEqual(['stream', 'event', 'payload', 'id']);
    expect(pub.stream).toEqual(['public']);
    const status = JSON.parse(pub.payload!);
    expect(status).toMatchObject({ id, visibility: 'public', account: { id: alice.account.id } });
    expect((await byProtocol.waitFor(isUpdate(id)))[0].stream).toEqual(['public:local']);
    const got = await byQuery.waitFor(isUpdate(id), 2);
    expect(got.map((f) => f.stream).sort()).toEqual([['hashtag', 'Roost'], ['user']]);
    await settled(roost);
    await sleep(200);
    // Exactly once each; nothing on public:remote.
    expect(byHeader.frames.filter(isUpdate(id)).length).toBe(1);
    expect(byQuery.frames.filter(isUpdate(id)).length).toBe(2);
    for (const c of [byHeader, byProtocol, byQuery]) c.close();
  });

  it('keeps replies to others, unlisted statuses and statuses without media off the public streams they do not belong to', async () => {
    const w = await WsClient.open(roost, `?access_token=${bob.token}&stream=public`);
    for (const stream of ['public:media', 'public:local:media', 'public:remote']) w.send({ type: 'subscribe', stream });
    w.send({ type: 'subscribe', stream: 'hashtag:local', tag: 'quiet' });
    await sleep(100);
    const parent = await post(bob, 'parent');
    const reply = await post(alice, '@bob a reply #quiet', { in_reply_to_id: parent });
    const unlisted = await post(alice, 'unlisted #quiet', { visibility: 'unlisted' });
    const selfReply = await post(bob, 'a thread of my own', { in_reply_to_id: parent });
    const [own] = await w.waitFor(isUpdate(selfReply));
    expect(own.stream).toEqual(['public']);
    // Replies to someone else still reach the hashtag stream (Mastodon), never the public ones.
    const [tagged] = await w.waitFor(isUpdate(reply));
    expect(tagged.stream).toEqual(['hashtag:local', 'quiet']);
    await settled(roost);
    await sleep(200);
    expect(w.frames.filter(isUpdate(reply)).length).toBe(1);
    expect(w.frames.filter(isUpdate(unlisted))).toEqual([]);
    expect(w.frames.filter(isUpdate(parent)).map((f) => f.stream)).toEqual([['public']]);
    w.close();
  });

  it('drops statuses of blocked and muted authors; unsubscribe stops events', async () => {
    const c = await WsClient.open(roost, `?access_token=${carol.token}&stream=public`);
    const d = await WsClient.open(roost, `?access_token=${dave.token}&stream=public`);
    const b = await WsClient.open(roost, `?access_token=${bob.token}&stream=public`);
    await sleep(50);
    const id = await post(alice, 'from alice');
    const other = await post(bob, 'from bob');
    // Each status's frames come from a job of its own: wait for both where both are due, and for
    // bob's where alice's must not come (it went out before or with bob's, or not at all).
    await b.waitFor(isUpdate(id));
    await b.waitFor(isUpdate(other));
    await c.waitFor(isUpdate(other));
    await d.waitFor(isUpdate(other));
    await sleep(200);
    expect(c.frames.filter(isUpdate(id))).toEqual([]);
    expect(d.frames.filter(isUpdate(id))).toEqual([]);
    expect(b.frames.filter(isUpdate(id)).length).toBe(1);
    b.send({ type: 'unsubscribe', stream: 'public' });
    await sleep(100);
    const later = await post(bob, 'after unsubscribe');
    await c.waitFor(isUpdate(later));
    await sleep(200);
    expect(b.frames.filter(isUpdate(later))).toEqual([]);
    for (const x of [b, c, d]) x.close();
  });

  it('sends delete with the bare id, and status.update on edit', async () => {
    const b = await WsClient.open(roost, `?access_token=${bob.token}&stream=user`);
    await sleep(50);
    const id = await post(alice, 'to be edited');
    await b.waitFor(isUpdate(id));
    expect((await alice.api(`/api/v1/statuses/${id}`, { method: 'PUT', body: { status: 'edited' } })).status).toBe(200);
    const [upd] = await b.waitFor((f) => f.event === 'status.update');
    expect(JSON.parse(upd.payload!)).toMatchObject({ id, content: '<p>edited</p>' });
    expect((await alice.api(`/api/v1/statuses/${id}`, { method: 'DELETE' })).status).toBe(200);
    const [del] = await b.waitFor((f) => f.event === 'delete');
    expect(del).toEqual({ stream: ['user'], event: 'delete', payload: id, id: del.id });
    b.close();
  });

  it('answers bad frames with Mastodon errors and keeps the socket working', async () => {
    const b = await WsClient.open(roost, `?access_token=${bob.token}`);
    b.send({ type: 'subscribe', stream: 'nonsense' });
    b.send({ type: 'subscribe', stream: 'hashtag' });
    b.send('{not json');
    b.send({ type: 'subscribe', stream: 'list', list: '12345' });
    const errors = await b.waitFor((f) => f.error !== undefined, 4);
    expect(errors).toEqual([
      { error: 'Unknown stream type', status: 400 },
      { error: 'No tag for stream provided', status: 400 },
      { error: 'Error parsing request', status: 400 },
      { error: 'Not authorized to stream this list', status: 401 },
    ]);
    const unknown = await fetch(roost.at('/api/v1/streaming/nonsense/x'), { headers: { authorization: `Bearer ${bob.token}` } });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({ error: 'Unknown channel requested' });
    const sse = await fetch(roost.at('/api/v1/streaming/hashtag'), { headers: { authorization: `Bearer ${bob.token}` } });
    expect(sse.status).toBe(400);
    expect(await sse.json()).toEqual({ error: 'No tag for stream provided' });
    b.send({ type: 'subscribe', stream: 'public' });
    await sleep(50);
    const id = await post(alice, 'still working');
    await b.waitFor(isUpdate(id));
    expect(b.closed).toBe(false);
    b.close();
  });

  it('streams a list to its owner only', async () => {
    const list = (await bob.api('/api/v1/lists', { method: 'POST', body: { title: 'friends' } })).body;
    expect((await bob.api(`/api/v1/lists/${list.id}/accounts`, { method: 'POST', body: { account_ids: [alice.account.id] } })).status).toBe(200);
    const owner = await WsClient.open(roost, `?access_token=${bob.token}&stream=list&list=${list.id}`);
    const stranger = await WsClient.open(roost, `?access_token=${dave.token}&stream=list&list=${list.id}`);
    expect(await stranger.waitFor((f) => f.error !== undefined)).toEqual([{ error: 'Not authorized to stream this list', status: 401 }]);
    await sleep(50);
    const id = await post(alice, 'for the list');
    const [f] = await owner.waitFor(isUpdate(id));
    expect(f.stream).toEqual(['list', list.id]);
    owner.close();
    stranger.close();
  });

  it('direct statuses reach participants as conversation events', async () => {
    const b = await WsClient.open(roost, `?access_token=${bob.token}&stream=direct`);
    await sleep(50);
    const id = await post(alice, '@bob psst', { visibility: 'direct' });
    const [f] = await b.waitFor((x) => x.event === 'conversation');
    const conv = JSON.parse(f.payload!);
    expect(conv).toMatchObject({ unread: true, last_status: { id }, accounts: [{ id: alice.account.id }] });
    b.close();
  });

  it('serves SSE with event ids and resumes after a disconnect without losing events', async () => {
    const s = await SseClient.open(roost, '/api/v1/streaming/public/local', bob.token);
    expect(s.status).toBe(200);
    await sleep(50);
    const first = await post(alice, 'sse one');
    const [e1] = await s.waitFor((e) => e.event === 'update' && JSON.parse(e.data!).id === first);
    expect(e1.id).toMatch(/^\d+$/);
    s.close();
    // One after the other, each through its event job: two statuses' event jobs run in parallel,
    // and their streaming events take ids in the order the jobs get there, not the posts.
    const missed: string[] = [];
    for (const text of ['missed one', 'missed two']) {
      missed.push(await post(alice, text));
      await settled(roost);
    }
    const back = await SseClient.open(roost, '/api/v1/streaming/public/local', bob.token, { 'last-event-id': e1.id! });
    const got = await back.waitFor((e) => e.event === 'update', 2);
    expect(got.map((e) => JSON.parse(e.data!).id)).toEqual(missed);
    const live = await post(alice, 'live again');
    await back.waitFor((e) => e.event === 'update' && JSON.parse(e.data!).id === live);
    await sleep(200);
    expect(back.events.filter((e) => e.event === 'update').map((e) => JSON.parse(e.data!).id)).toEqual([...missed, live]);
    back.close();
    // WebSocket resume through last_event_id.
    const w = await WsClient.open(roost, `?access_token=${bob.token}&stream=public:local&last_event_id=${e1.id}`);
    const frames = await w.waitFor((f) => f.event === 'update', 3);
    expect(frames.map((f) => JSON.parse(f.payload!).id)).toEqual([...missed, live]);
    w.close();
  });

  it('sends notifications to user and user:notification, filters_changed without payload, reblogs to followers', async () => {
    const erin = await createTestUser(roost, 'erin');
    expect((await erin.api(`/api/v1/accounts/${alice.account.id}/follow`, { method: 'POST' })).status).toBe(200);
    await settled(roost);
    const w = await WsClient.open(roost, `?access_token=${erin.token}&stream=user`);
    w.send({ type: 'subscribe', stream: 'user:notification' });
    const sse = await SseClient.open(roost, '/api/v1/streaming?stream=user:notification', erin.token);
    expect(sse.status).toBe(200);
    await sleep(100);
    await publishNotification(roost.services, erin.account.id, { id: '7', type: 'mention' } as { id: string });
    const got = await w.waitFor((f) => f.event === 'notification', 2);
    expect(got.map((f) => [f.stream, f.payload])).toEqual([
      [['user'], '{"id":"7","type":"mention"}'],
      [['user:notification'], '{"id":"7","type":"mention"}'],
    ]);
    const [n] = await sse.waitFor((e) => e.event === 'notification');
    expect(n.data).toBe('{"id":"7","type":"mention"}');
    await publishOutboxEvent(roost.services, { type: 'filters.changed', accountId: erin.account.id }, 'outbox:test');
    const [fc] = await w.waitFor((f) => f.event === 'filters_changed');
    expect(fc).toEqual({ stream: ['user'], event: 'filters_changed', id: fc.id });
    const original = await post(bob, 'boost me');
    const reblog = await alice.api(`/api/v1/statuses/${original}/reblog`, { method: 'POST' });
    expect(reblog.status).toBe(200);
    const [rb] = await w.waitFor((f) => f.event === 'update' && JSON.parse(f.payload!).reblog?.id === original);
    expect(JSON.parse(rb.payload!)).toMatchObject({ id: reblog.body.id, account: { id: alice.account.id }, reblog: { id: original } });
    w.close();
    sse.close();
  });

  it('drops a client that stops reading', async () => {
    const hub = (await import('../../src/streaming/hub.ts')).streamingHubOf(roost.services)!;
    const before = hub.clients.size;
    let writes = 0;
    const client = hub.connect(bob.account.id, { format: 'ws', write: () => ++writes < 3 });
    hub.subscribe(client, { key: 'public', stream: ['public'], context: 'public' });
    for (let i = 0; i < 4; i++) await post(bob, `flood ${i}`);
    await settled(roost);
    await sleep(200);
    expect(client.closed).toBe(true);
    expect(hub.clients.has(client)).toBe(false);
    void before;
  });
});
