/**
 * GET /metrics through the real server: absent (404) unless a token is configured; 401 without it
 * or with a wrong one; Prometheus text with the job queue, deliveries by lane and state, the
 * circuit breaker's hosts, push subscriptions, the streaming event log, and this process's
 * streaming clients.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { WsClient } from '../streaming/client.ts';
import { startPushService, type PushService } from '../push/push-service.ts';

const TOKEN = 'scrape-me-7f3a';
let roost: TestRoost;
let bare: TestRoost;
let push: PushService;
let alice: TestUser;

beforeAll(async () => {
  [roost, bare] = await Promise.all([startTestRoost({ metricsToken: TOKEN }), startTestRoost()]);
  push = await startPushService(roost.services.secrets.vapidPublicKey);
  alice = await createTestUser(roost, 'alice');
}, 60_000);
afterAll(async () => {
  await push?.close();
  await Promise.all([roost?.close(), bare?.close()]);
});

const scrape = (r: TestRoost, token?: string) =>
  fetch(r.at('/metrics'), { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });

/** The samples of a Prometheus text body, by `name{labels}`. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.trimEnd().split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-z_]+(?:\{[^}]*\})?) (-?\d+(?:\.\d+)?)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    out.set(m[1]!, Number(m[2]));
  }
  return out;
}

describe('GET /metrics', () => {
  it('is absent without a configured token, and refuses a missing or wrong token', async () => {
    const absent = await scrape(bare, TOKEN);
    expect(absent.status).toBe(404);
    expect(await absent.json()).toEqual({ error: 'Not found' });
    for (const token of [undefined, 'wrong', `${TOKEN}x`]) {
      const res = await scrape(roost, token);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await res.json()).toEqual({ error: 'The access token is invalid' });
    }
  });

  it('reports the queue, deliveries, hosts, push subscriptions, the event log and streaming clients', async () => {
    const phone = push.client('/metrics-phone');
    const sub = await alice.api('/api/v1/push/subscription', {
      method: 'POST',
      body: { subscription: { endpoint: phone.endpoint, keys: { p256dh: phone.p256dh, auth: phone.auth } }, data: { alerts: { mention: true } } },
    });
    expect(sub.status).toBe(200);
    // A poll an hour long: its close is a timer job scheduled for later.
    const polled = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'which?', poll: { options: ['a', 'b'], expires_in: 3600 } } });
    expect(polled.status).toBe(200);
    const now = roost.services.clock.now();
    await roost.services.db.sql.query(
      `insert into deliveries (activity_id, activity_type, sender, lane, inboxes, delivered, failed, pending, created_at, updated_at)
       values ('https://x.test/a/1', 'Create', 'alice', 'bulk', 10, 7, 2, 1, $1, $1), ('https://x.test/a/2', 'Create', 'alice', 'bulk', 3, 3, 0, 0, $1, $1),
              ('https://x.test/a/3', 'Follow', 'alice', 'priority', 1, 0, 0, 1, $1, $1)`,
      [now],
    );
    await roost.services.db.sql.query(
      `insert into delivery_hosts (host, failures, first_failure_at, last_failure_at, open_until)
       values ('down.test', 9, $1, $1, $2), ('flaky.test', 1, $1, $1, null)`,
      [now, new Date(now.getTime() + 3_600_000)],
    );
    const ws = await WsClient.open(roost, `?access_token=${alice.token}&stream=user`);
    await settled(roost);
    await sleep(100);

    const res = await scrape(roost, TOKEN);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(text).toContain('# TYPE roost_jobs gauge\n');
    expect(text).toContain('# HELP roost_delivery_inboxes Inboxes of the tracked activities, by lane and state (delivered, failed, pending).\n');
    const got = samples(text);
    const [{ n }] = await roost.services.db.sql.query<{ n: number }>(
      `select count(*)::int as n from jobs where queue = 'default' and state = 'pending' and run_at > $1`,
      [roost.services.clock.now()],
    );
    expect(n).toBeGreaterThanOrEqual(1);
    expect(got.get('roost_jobs{queue="default",state="scheduled"}')).toBe(n);
    expect(got.get('roost_delivery_activities{lane="bulk"}')).toBe(2);
    expect(got.get('roost_delivery_activities{lane="priority"}')).toBe(1);
    expect(got.get('roost_delivery_inboxes{lane="bulk",state="delivered"}')).toBe(10);
    expect(got.get('roost_delivery_inboxes{lane="bulk",state="failed"}')).toBe(2);
    expect(got.get('roost_delivery_inboxes{lane="bulk",state="pending"}')).toBe(1);
    expect(got.get('roost_delivery_inboxes{lane="priority",state="pending"}')).toBe(1);
    expect(got.get('roost_delivery_hosts_open')).toBe(1);
    expect(got.get('roost_delivery_hosts_failing')).toBe(2);
    expect(got.get('roost_push_subscriptions')).toBe(1);
    expect(got.get('roost_streaming_clients')).toBe(1);
    const [{ events }] = await roost.services.db.sql.query<{ events: number }>(`select count(*)::int as events from streaming_events`);
    expect(events).toBeGreaterThanOrEqual(1);
    expect(got.get('roost_streaming_events')).toBe(events);
    expect(got.get('process_resident_memory_bytes')).toBeGreaterThan(10_000_000);

    ws.close();
    await sleep(200);
    expect(samples(await (await scrape(roost, TOKEN)).text()).get('roost_streaming_clients')).toBe(0);
  });
});
