import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedStatements, settled, startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { startPushService, type PushService, type PushClient } from './push-service.ts';
import { pushNotificationSink, vapidCacheOf, type PushableNotification } from '../../src/push/index.ts';

let roost: TestRoost;
let push: PushService;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

beforeAll(async () => {
  roost = await startTestRoost();
  push = await startPushService(roost.services.secrets.vapidPublicKey);
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob', { displayName: 'Bob B' } as never);
  carol = await createTestUser(roost, 'carol');
}, 60_000);
afterAll(async () => {
  await push?.close();
  await roost?.close();
});

function form(fields: Record<string, string>): URLSearchParams {
  return new URLSearchParams(fields);
}

function subscribeForm(c: PushClient, extra: Record<string, string> = {}): URLSearchParams {
  return form({ 'subscription[endpoint]': c.endpoint, 'subscription[keys][p256dh]': c.p256dh, 'subscription[keys][auth]': c.auth, ...extra });
}

function mentionFrom(sender: TestUser, id: string): PushableNotification {
  return {
    id,
    type: 'mention',
    account: { id: sender.account.id, acct: sender.account.username, display_name: 'Bob B', avatar_static: `${roost.url}/avatars/original/missing.png` },
    status: { id: '1', content: '<p>Hello <span class="h-card"><a href="x">@<span>alice</span></a></span> &amp; welcome</p>', spoiler_text: '' },
  };
}

async function countSubs(): Promise<number> {
  return (await roost.services.db.sql.query<{ n: number }>('select count(*)::int as n from web_push_subscriptions'))[0]!.n;
}

describe('/api/v1/push/subscription', () => {
  it('creates a subscription with alerts cast as Rails casts booleans, and renders WebPushSubscription exactly', async () => {
    const c = push.client('/crud');
    const res = await alice.api('/api/v1/push/subscription', {
      body: subscribeForm(c, {
        'subscription[standard]': 'true',
        'data[alerts][mention]': 'true',
        'data[alerts][follow]': '1',
        'data[alerts][favourite]': 'false',
        'data[alerts][reblog]': '0',
        'data[alerts][poll]': 'off',
        'data[alerts][admin.sign_up]': 'yes',
        'data[alerts][update]': '',
        'data[alerts][bogus]': 'true',
        'data[policy]': 'followed',
      }),
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      endpoint: c.endpoint,
      standard: true,
      alerts: { mention: true, reblog: false, follow: true, favourite: false, poll: false, update: null, 'admin.sign_up': true },
      server_key: roost.services.secrets.vapidPublicKey,
      policy: 'followed',
    });
    expect(Object.keys(res.body)).toEqual(['id', 'endpoint', 'standard', 'alerts', 'server_key', 'policy']);
    const got = await alice.api('/api/v1/push/subscription');
    expect(got).toMatchObject({ status: 200, body: res.body });

    // JSON keeps its types; PUT replaces the data wholly (Mastodon's update!(data: …)).
    const put = await alice.api('/api/v1/push/subscription', { method: 'PUT', body: { data: { alerts: { status: true, follow_request: 0 } } } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ ...res.body, alerts: { status: true, follow_request: false }, policy: 'all' });
    const put2 = await alice.api('/api/v1/push/subscription', { method: 'PUT', body: { policy: 'none' } });
    expect(put2.body.policy).toBe('none');

    const del = await alice.api('/api/v1/push/subscription', { method: 'DELETE' });
    expect(del).toMatchObject({ status: 200, body: {} });
    expect(await alice.api('/api/v1/push/subscription')).toMatchObject({ status: 404, body: { error: 'Record not found' } });
    expect(await alice.api('/api/v1/push/subscription', { method: 'PUT', body: { data: { alerts: { mention: true } } } })).toMatchObject({
      status: 404,
      body: { error: 'Record not found' },
    });
    // DELETE without one: {} (as the documentation and Mastodon's controller answer).
    expect(await alice.api('/api/v1/push/subscription', { method: 'DELETE' })).toMatchObject({ status: 200, body: {} });
  });

  it('refuses a bad endpoint, bad keys and a bad policy with 422, writing nothing', async () => {
    const c = push.client('/bad');
    const before = await countSubs();
    const cases: [Record<string, string>, string, Record<string, unknown>][] = [
      [{ 'subscription[endpoint]': 'not a url' }, 'Validation failed: Endpoint is invalid', { endpoint: [{ error: 'ERR_INVALID', description: 'is invalid' }] }],
      [{ 'subscription[endpoint]': 'ftp://push.example/x' }, 'Validation failed: Endpoint is invalid', { endpoint: [{ error: 'ERR_INVALID', description: 'is invalid' }] }],
      [{ 'subscription[keys][p256dh]': 'AAAA' }, 'Validation failed: Key p256dh is invalid', { key_p256dh: [{ error: 'ERR_INVALID', description: 'is invalid' }] }],
      [
        { 'subscription[keys][p256dh]': Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]).toString('base64url') },
        'Validation failed: Key p256dh is invalid',
        { key_p256dh: [{ error: 'ERR_INVALID', description: 'is invalid' }] },
      ],
      [{ 'subscription[keys][auth]': 'short' }, 'Validation failed: Key auth is invalid', { key_auth: [{ error: 'ERR_INVALID', description: 'is invalid' }] }],
      [{ 'subscription[keys][auth]': '' }, "Validation failed: Key auth can't be blank", { key_auth: [{ error: 'ERR_BLANK', description: "can't be blank" }] }],
      [{ 'data[policy]': 'everyone' }, 'Validation failed: Policy is not included in the list', { policy: [{ error: 'ERR_INCLUSION', description: 'is not included in the list' }] }],
    ];
    for (const [override, error, details] of cases) {
      const res = await alice.api('/api/v1/push/subscription', { body: subscribeForm(c, override) });
      expect(res, JSON.stringify(override)).toMatchObject({ status: 422, body: { error, details } });
    }
    expect(await alice.api('/api/v1/push/subscription', { body: form({ 'data[policy]': 'all' }) })).toMatchObject({
      status: 400,
      body: { error: 'param is missing or the value is empty: subscription' },
    });
    expect(await countSubs()).toBe(before);
    // PUT with a bad policy leaves the subscription as it was.
    await alice.api('/api/v1/push/subscription', { body: subscribeForm(c, { 'data[policy]': 'follower' }) });
    expect(await alice.api('/api/v1/push/subscription', { method: 'PUT', body: form({ 'data[policy]': 'x' }) })).toMatchObject({ status: 422 });
    expect((await alice.api('/api/v1/push/subscription')).body.policy).toBe('follower');
    await alice.api('/api/v1/push/subscription', { method: 'DELETE' });
  });

  it('needs the push scope', async () => {
    const reader = await createTestUser(roost, 'reader', { scopes: ['read'] });
    expect(await reader.api('/api/v1/push/subscription')).toMatchObject({ status: 403, body: { error: 'This action is outside the authorized scopes' } });
  });

  it('keeps one subscription per token: a new POST replaces it; another token keeps its own; revoking the token removes it', async () => {
    const a = push.client('/one-a');
    const b = push.client('/one-b');
    await alice.api('/api/v1/push/subscription', { body: subscribeForm(a) });
    await alice.api('/api/v1/push/subscription', { body: subscribeForm(b) });
    expect((await alice.api('/api/v1/push/subscription')).body.endpoint).toBe(b.endpoint);
    const rows = await roost.services.db.sql.query<{ endpoint: string }>('select endpoint from web_push_subscriptions where user_id = $1', [alice.user.id]);
    expect(rows.map((r) => r.endpoint)).toEqual([b.endpoint]);

    const other = await createTestUser(roost, 'alice2');
    await other.api('/api/v1/push/subscription', { body: subscribeForm(push.client('/one-c')) });
    const otherRow = await roost.services.db.sql.query<{ id: string }>('select id::text from web_push_subscriptions where user_id = $1', [other.user.id]);
    expect(otherRow).toHaveLength(1);
    await roost.services.db.sql.query('update oauth_access_tokens set revoked_at = now() where user_id = $1', [other.user.id]);
    expect(await roost.services.db.sql.query('select 1 from web_push_subscriptions where user_id = $1', [other.user.id])).toEqual([]);
    await alice.api('/api/v1/push/subscription', { method: 'DELETE' });
  });
});

describe('delivery', () => {
  it('pushes one encrypted payload with Mastodon fields, TTL, Urgency and a VAPID JWT that verifies; reuses the JWT', async () => {
    const c = push.client('/deliver');
    await alice.api('/api/v1/push/subscription', { body: subscribeForm(c, { 'subscription[standard]': 'true', 'data[alerts][mention]': 'true' }) });
    const sink = pushNotificationSink(roost.services);
    const signsBefore = vapidCacheOf(roost.services).signs;
    await sink([{ accountId: alice.account.id, notification: mentionFrom(bob, '9001') }]);
    await settled(roost);
    const got = push.received.filter((r) => r.path === '/deliver');
    expect(push.problems).toEqual([]);
    expect(got).toHaveLength(1);
    expect(got[0]!.payload).toEqual({
      access_token: alice.token,
      preferred_locale: 'en',
      notification_id: '9001',
      notification_type: 'mention',
      icon: `${roost.url}/avatars/original/missing.png`,
      title: 'You were mentioned by Bob B',
      body: 'Hello @alice & welcome',
    });
    expect(got[0]!.headers).toMatchObject({ ttl: '172800', urgency: 'normal', 'content-encoding': 'aes128gcm', 'content-type': 'application/octet-stream' });
    expect(got[0]!.jwt.aud).toBe(push.url);
    expect(got[0]!.jwt.sub).toMatch(/^mailto:/);

    // A second push to the same push service reuses the signed JWT.
    await sink([{ accountId: alice.account.id, notification: { ...mentionFrom(bob, '9002'), status: { id: '2', content: `<p>${'x'.repeat(200)}</p>`, spoiler_text: '' } } }]);
    await settled(roost);
    const both = push.received.filter((r) => r.path === '/deliver');
    expect(both).toHaveLength(2);
    expect(both[1]!.payload.body).toBe(`${'x'.repeat(137)}...`);
    expect(both[1]!.headers.authorization).toBe(both[0]!.headers.authorization);
    expect(vapidCacheOf(roost.services).signs - signsBefore).toBeLessThanOrEqual(1);
    await alice.api('/api/v1/push/subscription', { method: 'DELETE' });
  });

  it('pushes nothing for an alert that is off or absent', async () => {
    const c = push.client('/off');
    await alice.api('/api/v1/push/subscription', { body: subscribeForm(c, { 'data[alerts][mention]': 'false', 'data[alerts][follow]': 'true' }) });
    await pushNotificationSink(roost.services)([
      { accountId: alice.account.id, notification: mentionFrom(bob, '9100') },
      { accountId: alice.account.id, notification: { ...mentionFrom(bob, '9101'), type: 'favourite' } },
    ]);
    await settled(roost);
    expect(push.received.filter((r) => r.path === '/off')).toEqual([]);
    await alice.api('/api/v1/push/subscription', { method: 'DELETE' });
  });

  it('applies the policy: followed (the recipient follows the sender) and follower (the sender follows the recipient); legacy aesgcm decrypts', async () => {
    // carol follows alice; alice follows nobody.
    expect((await carol.api(`/api/v1/accounts/${alice.account.id}/follow`, { method: 'POST' })).status).toBe(200);
    await settled(roost);
    const sink = pushNotificationSink(roost.services);

    const followed = push.client('/followed');
    await alice.api('/api/v1/push/subscription', { body: subscribeForm(followed, { 'data[alerts][mention]': 'true', 'data[policy]': 'followed' }) });
    await sink([
      { accountId: alice.account.id, notification: mentionFrom(carol, '9200') },
      { accountId: alice.account.id, notification: mentionFrom(bob, '9201') },
    ]);
    await settled(roost);
    expect(push.received.filter((r) => r.path === '/followed')).toEqual([]);

    const follower = push.client('/follower');
    await alice.api('/api/v1/push/subscription', { body: subscribeForm(follower, { 'data[alerts][mention]': 'true', 'data[policy]': 'follower' }) });
    await sink([
      { accountId: alice.account.id, notification: mentionFrom(carol, '9202') },
      { accountId: alice.account.id, notification: mentionFrom(bob, '9203') },
    ]);
    await settled(roost);
    expect(push.problems).toEqual([]);
    const got = push.received.filter((r) => r.path === '/follower');
    expect(got.map((r) => r.payload.notification_id)).toEqual(['9202']);
    // Not standard: the legacy encoding Mastodon uses for such subscriptions.
    expect(got[0]!.headers['content-encoding']).toBe('aesgcm');

    const none = push.client('/none');
    await alice.api('/api/v1/push/subscription', { body: subscribeForm(none, { 'data[alerts][mention]': 'true', 'data[policy]': 'none' }) });
    await sink([{ accountId: alice.account.id, notification: mentionFrom(carol, '9204') }]);
    await settled(roost);
    expect(push.received.filter((r) => r.path === '/none')).toEqual([]);
    await alice.api('/api/v1/push/subscription', { method: 'DELETE' });
  });

  it('410 from the push service deletes the subscription', async () => {
    const c = push.client('/gone');
    push.answer('/gone', { status: 410 });
    await alice.api('/api/v1/push/subscription', { body: subscribeForm(c, { 'subscription[standard]': '1', 'data[alerts][mention]': '1' }) });
    await pushNotificationSink(roost.services)([{ accountId: alice.account.id, notification: mentionFrom(bob, '9300') }]);
    await settled(roost);
    expect(push.received.filter((r) => r.path === '/gone')).toHaveLength(1);
    expect(await alice.api('/api/v1/push/subscription')).toMatchObject({ status: 404 });
  });

  it('429 with Retry-After is retried no sooner than asked, then delivered once', async () => {
    const c = push.client('/busy');
    push.answer('/busy', { status: 429, headers: { 'retry-after': '1' } }, { status: 503 });
    await alice.api('/api/v1/push/subscription', { body: subscribeForm(c, { 'subscription[standard]': '1', 'data[alerts][mention]': '1' }) });
    await pushNotificationSink(roost.services)([{ accountId: alice.account.id, notification: mentionFrom(bob, '9400') }]);
    const got = await eventually(async () => {
      const r = push.received.filter((x) => x.path === '/busy');
      return r.length >= 3 && r;
    }, 20_000, 'three attempts');
    expect(got.map((r) => r.payload.notification_id)).toEqual(['9400', '9400', '9400']);
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(950);
    await settled(roost);
    expect(push.received.filter((x) => x.path === '/busy')).toHaveLength(3);
    expect((await alice.api('/api/v1/push/subscription')).status).toBe(200);
    await alice.api('/api/v1/push/subscription', { method: 'DELETE' });
  });

  it('a retry reads the subscription again: one removed in between is not pushed to', async () => {
    const c = push.client('/unsub');
    push.answer('/unsub', { status: 503 });
    await alice.api('/api/v1/push/subscription', { body: subscribeForm(c, { 'subscription[standard]': '1', 'data[alerts][mention]': '1' }) });
    await pushNotificationSink(roost.services)([{ accountId: alice.account.id, notification: mentionFrom(bob, '9450') }]);
    await eventually(async () => push.received.some((r) => r.path === '/unsub'), 10_000, 'the first attempt');
    await alice.api('/api/v1/push/subscription', { method: 'DELETE' });
    await settled(roost);
    expect(push.received.filter((r) => r.path === '/unsub')).toHaveLength(1);
  });

  it('queues with a fixed number of statements whatever the number of notifications and subscribers', async () => {
    const c = push.client('/count');
    await alice.api('/api/v1/push/subscription', { body: subscribeForm(c, { 'data[alerts][mention]': 'true', 'data[policy]': 'follower' }) });
    await carol.api('/api/v1/push/subscription', { body: subscribeForm(push.client('/count-c'), { 'data[alerts][mention]': 'true', 'data[policy]': 'followed' }) });
    const sink = pushNotificationSink(roost.services);
    const one = await capturedStatements(roost, () => sink([{ accountId: alice.account.id, notification: mentionFrom(carol, '9500') }]));
    const many = await capturedStatements(roost, () =>
      sink(
        Array.from({ length: 20 }, (_, i) => ({
          accountId: i % 2 ? alice.account.id : carol.account.id,
          notification: mentionFrom(i % 3 ? carol : bob, String(9600 + i)),
        })),
      ),
    );
    // The subscriptions and the follows the policies need (the jobs' insert is not counted here).
    expect(one).toHaveLength(2);
    expect(many).toEqual(one);
    await settled(roost);
    // alice (policy follower): carol follows her → pushed; bob does not → not. carol (policy followed): she follows alice, not bob.
    expect(push.received.filter((r) => r.path === '/count').map((r) => r.payload.notification_id).sort()).toEqual(
      ['9500', ...Array.from({ length: 20 }, (_, i) => i).filter((i) => i % 2 && i % 3).map((i) => String(9600 + i))].sort(),
    );
    expect(push.received.filter((r) => r.path === '/count-c')).toEqual([]);
    await alice.api('/api/v1/push/subscription', { method: 'DELETE' });
    await carol.api('/api/v1/push/subscription', { method: 'DELETE' });
  });
});
