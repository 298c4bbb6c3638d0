/**
 * Each consumer of the outbox succeeds or retries on its own (src/effects/registry.ts): one
 * consumer made to fail on a fact's first attempts never makes another run twice.
 *
 * One real instance, its real job workers, and around it: a remote follower of the author on a
 * loopback sink (the deliveries), a local follower who is mentioned (home feed, notification),
 * with a WebSocket on its user stream (streaming frames) and a Web Push subscription on a local
 * push service. For each consumer in turn, the hook the instance offers before every consumer run
 * throws on that consumer's first attempt(s) for the new status; afterwards every effect
 * happened exactly once: one Create POST to the follower's inbox, one `update` frame, one
 * `notification` frame, one mention notification, one push, the feed row, and, for a direct
 * status, one conversation row and one `conversation` frame per participant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled, startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { startSinks, type Sinks } from '../helpers/sink.ts';
import { startPushService, type PushService } from '../push/push-service.ts';
import { WsClient, sleep } from '../streaming/client.ts';
import { insertRemoteAccount } from '../../src/services/accounts.ts';
import { receiveFollow } from '../../src/services/follows.ts';
import type { ConsumerName } from '../../src/events/consumers.ts';

let roost: TestRoost;
let sink: Sinks;
let push: PushService;
let alice: TestUser;
let bob: TestUser;
let ws: WsClient;
/** Consumer → how many more runs on the watched status fail. */
const faults = new Map<ConsumerName, number>();
/** Consumer → runs on the watched status (failed ones included). */
const runs = new Map<ConsumerName, number>();
/** The next status alice creates becomes the watched one. */
let armed = false;
let watched: string | null = null;

beforeAll(async () => {
  sink = await startSinks(1);
  roost = await startTestRoost({}, {
    beforeConsumer: (name, record) => {
      const e = record.event;
      if (armed && e.type === 'status.created' && e.accountId === alice.account.id) {
        watched = e.statusId;
        armed = false;
      }
      if (!('statusId' in e) || e.statusId !== watched) return;
      runs.set(name, (runs.get(name) ?? 0) + 1);
      const left = faults.get(name) ?? 0;
      if (left > 0) {
        faults.set(name, left - 1);
        throw new Error(`injected failure of ${name}`);
      }
    },
  });
  push = await startPushService(roost.services.secrets.vapidPublicKey);
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
  // A remote follower of alice, with an inbox of its own on the sink.
  const base = sink.urls[0]!;
  const remote = await insertRemoteAccount(roost.services, {
    uri: `${base}/users/rem`, username: 'rem', domain: new URL(base).host, inboxUrl: `${base}/users/rem/inbox`, sharedInboxUrl: null,
  } as never);
  expect((await receiveFollow(roost.services, remote, alice.account, `${base}/users/rem#follows/1`))?.state).toBe('accepted');
  expect((await bob.api(`/api/v1/accounts/${alice.account.id}/follow`, { method: 'POST' })).status).toBe(200);
  const client = push.client('/bob');
  const sub = await bob.api('/api/v1/push/subscription', {
    body: new URLSearchParams({
      'subscription[endpoint]': client.endpoint, 'subscription[keys][p256dh]': client.p256dh, 'subscription[keys][auth]': client.auth,
      'data[alerts][mention]': 'true', 'data[policy]': 'all',
    }),
  });
  expect(sub.status).toBe(200);
  ws = await WsClient.open(roost, `?access_token=${bob.token}&stream=user`);
  await settled(roost);
  await sleep(200);
}, 90_000);

afterAll(async () => {
  ws?.close();
  await roost?.close();
  await push?.close();
  await sink?.close();
});

/** Posts as alice with `failing` failing `times` times on the new status; returns its id once everything settled. */
async function postWith(failing: ConsumerName | null, times: number, body: Record<string, string>): Promise<string> {
  runs.clear();
  faults.clear();
  if (failing) faults.set(failing, times);
  armed = true;
  const res = await alice.api('/api/v1/statuses', { body });
  expect(res.status).toBe(200);
  const id = (res.body as { id: string }).id;
  await eventually(async () => watched === id, 10_000, 'the fact to reach the consumers');
  await settled(roost);
  // Streaming frames and pushes travel on after the jobs: give them time to arrive (and any
  // duplicate time to show).
  await sleep(500);
  return id;
}

async function effectsOf(id: string) {
  const sql = roost.services.db.sql;
  const count = async (q: string) => Number((await sql.query<{ n: string }>(q, [id]))[0]!.n);
  const [mention] = await sql.query<{ id: string }>(`select id::text from notifications where type = 'mention' and status_id = $1`, [id]);
  return {
    creates: sink.posts.filter((p) => p.type === 'Create' && p.activityId.includes(`/statuses/${id}`)).length,
    updateFrames: ws.frames.filter((f) => f.event === 'update' && JSON.parse(String(f.payload)).id === id).length,
    notificationFrames: ws.frames.filter((f) => f.event === 'notification' && JSON.parse(String(f.payload)).status?.id === id).length,
    conversationFrames: await count(`select count(*)::text as n from streaming_events where event = 'conversation' and (payload::json)->'last_status'->>'id' = $1::text`),
    mentions: await count(`select count(*)::text as n from notifications where type = 'mention' and status_id = $1`),
    pushes: mention ? push.received.filter((r) => String(r.payload?.notification_id) === mention.id).length : 0,
    feedRows: await count(`select count(*)::text as n from home_feeds where status_id = $1`),
    conversations: await count(`select count(*)::text as n from account_conversations where last_status_id = $1`),
  };
}

// feedRows: bob's home feed (an author's own posts are not fanned out to its own feed).
const PUBLIC = { creates: 1, updateFrames: 1, notificationFrames: 1, conversationFrames: 0, mentions: 1, pushes: 1, feedRows: 1, conversations: 0 };

describe('a failing consumer retries alone', () => {
  it('with no failure, a public status mentioning a follower has each effect once (the baseline)', async () => {
    const id = await postWith(null, 0, { status: 'hello @bob, no faults' });
    expect(await effectsOf(id)).toEqual(PUBLIC);
    expect(Object.fromEntries(runs)).toEqual({ federate: 1, 'home-feeds': 1, streaming: 1, notifications: 1, webhooks: 1 });
  }, 60_000);

  for (const [failing, times] of [['federate', 1], ['home-feeds', 1], ['streaming', 1], ['notifications', 1]] as const) {
    it(`${failing} failing ${times}× runs ${times + 1}×, every other consumer once, each effect once`, async () => {
      const id = await postWith(failing, times, { status: `hello @bob, ${failing} fails` });
      expect(await effectsOf(id)).toEqual(PUBLIC);
      const expected: Record<string, number> = { federate: 1, 'home-feeds': 1, streaming: 1, notifications: 1, webhooks: 1 };
      expected[failing] = times + 1;
      expect(Object.fromEntries(runs)).toEqual(expected);
      // The job is gone (done), not dead.
      const left = await roost.services.db.sql.query(`select state from jobs where kind = 'event' and payload->'event'->>'statusId' = $1`, [id]);
      expect(left).toEqual([]);
    }, 90_000);
  }

  it('streaming waits for a failed home-feeds run (it reads the feeds), and runs once after it', async () => {
    const id = await postWith('home-feeds', 1, { status: 'hello @bob, feeds first' });
    expect(await effectsOf(id)).toEqual(PUBLIC);
    // streaming did not run on the first attempt: it declares home-feeds before it.
    expect(runs.get('streaming')).toBe(1);
    expect(runs.get('home-feeds')).toBe(2);
  }, 90_000);

  it('conversations failing on a direct status: one conversation row and frame, one notification, one push', async () => {
    const id = await postWith('conversations', 1, { status: '@bob psst', visibility: 'direct' });
    // One conversation row and one `conversation` frame for each participant (alice and bob).
    expect(await effectsOf(id)).toMatchObject({ creates: 0, conversationFrames: 2, mentions: 1, notificationFrames: 1, pushes: 1, conversations: 2 });
    expect(Object.fromEntries(runs)).toEqual({ federate: 1, 'home-feeds': 1, conversations: 2, streaming: 1, notifications: 1, webhooks: 1 });
  }, 90_000);
});
