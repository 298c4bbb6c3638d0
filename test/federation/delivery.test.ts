/**
 * Outgoing delivery (src/federation/delivery.ts, issue 10 item 1) against fake peers: loopback
 * sink servers that record each POST and answer what the test says. One real Roost instance;
 * fan-outs are real Update(Person)s (a profile edit through the API) and a real Follow.
 *
 * The circuit breaker is configured to open after 2 failed rounds (over any span) and to probe
 * after 2 s, so that it trips within a test.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { eventually, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { startSinks, type SinkPost, type Sinks } from '../helpers/sink.ts';
import { insertRemoteAccount } from '../../src/services/accounts.ts';
import { receiveFollow } from '../../src/services/follows.ts';
import { deliveryState, PRIORITY_LANE, BULK_LANE } from '../../src/federation/delivery.ts';
import { runCommand } from '../../src/control/commands.ts';
import type { Account } from '../../src/db/entities/index.ts';

let roost: TestRoost;
const sinks: Sinks[] = [];

beforeAll(async () => {
  roost = await startTestRoost({ federation: { circuitFailures: 2, circuitSpanSeconds: 0, circuitProbeSeconds: 2 } });
});
afterAll(async () => {
  await roost?.close();
  await Promise.all(sinks.map((s) => s.close()));
});

async function peer(): Promise<Sinks> {
  const s = await startSinks(1);
  sinks.push(s);
  return s;
}

/** A remote account on `base` (inbox /users/NAME/inbox, shared inbox /inbox when asked). */
async function remote(base: string, name: string, shared: boolean): Promise<Account> {
  return insertRemoteAccount(roost.services, {
    uri: `${base}/users/${name}`,
    username: name,
    domain: new URL(base).host,
    inboxUrl: `${base}/users/${name}/inbox`,
    sharedInboxUrl: shared ? `${base}/inbox` : null,
  } as never);
}

/** `follower` follows `target` (unlocked: accepted at once, and an Accept goes back). */
async function follows(follower: Account, target: TestUser) {
  const follow = await receiveFollow(roost.services, follower, target.account, `${follower.uri}#follows/${target.account.username}`);
  expect(follow?.state).toBe('accepted');
}

/** Edits the profile of `user`: an Update(Person) to every server with a follower. */
async function editProfile(user: TestUser, name: string) {
  const res = await user.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { display_name: name } });
  expect(res.status).toBe(200);
}

const updates = (s: Sinks) => s.posts.filter((p) => p.type === 'Update');

async function lastUpdateId(s: Sinks): Promise<string> {
  return eventually(async () => updates(s).at(-1)?.activityId, 15_000, 'an Update to arrive');
}

describe('outgoing delivery', () => {
  it('sends one copy to a shared inbox for three followers, signed by the sender, and counts it', { timeout: 60_000 }, async () => {
    const p = await peer();
    const alice = await createTestUser(roost, 'alice');
    for (const n of ['f1', 'f2', 'f3']) await follows(await remote(p.urls[0]!, n, true), alice);
    await editProfile(alice, 'Alice A.');
    const id = await lastUpdateId(p);
    const state = await eventually(async () => {
      const s = await deliveryState(roost.services.db.sql, id);
      return s && s.pending === 0 ? s : null;
    });
    expect(updates(p).map((u) => u.path)).toEqual(['/inbox']);
    expect(updates(p)[0]!.signature).toContain(`keyId="${roost.url}/users/alice#main-key",algorithm="rsa-sha256"`);
    // The Accepts went to each follower's own inbox, in the priority lane.
    expect(
      p.posts
        .filter((x) => x.type === 'Accept')
        .map((x) => x.path)
        .sort(),
    ).toEqual(['/users/f1/inbox', '/users/f2/inbox', '/users/f3/inbox']);
    expect(state).toMatchObject({ activityType: 'Update', sender: 'alice', lane: BULK_LANE, inboxes: 1, delivered: 1, failed: 0, pending: 0, lastError: null });
    const accept = p.posts.find((x) => x.type === 'Accept')!;
    expect(await deliveryState(roost.services.db.sql, accept.activityId)).toMatchObject({ lane: PRIORITY_LANE, inboxes: 1, delivered: 1 });
    // What `roost deliveries ID` prints comes from this command.
    const shown = await runCommand(roost.services, 'deliveries.show', { activityId: id }, { federation: roost.federation });
    expect(shown).toMatchObject({ delivery: { activityId: id, inboxes: 1, delivered: 1, failed: 0, pending: 0 } });
    await expect(runCommand(roost.services, 'deliveries.show', { activityId: 'https://nowhere.test/a' }, { federation: roost.federation })).rejects.toMatchObject({
      status: 404,
    });
  });

  it('retries a peer answering 429 no sooner than its Retry-After', { timeout: 60_000 }, async () => {
    const p = await peer();
    const bea = await createTestUser(roost, 'bea');
    await follows(await remote(p.urls[0]!, 'g1', false), bea);
    let refused = 0;
    p.answer = (post) => (post.type === 'Update' && refused++ === 0 ? { status: 429, headers: { 'retry-after': '2' } } : { status: 202 });
    await editProfile(bea, 'Bea');
    const id = await lastUpdateId(p);
    await eventually(async () => updates(p).length === 2, 20_000, 'the retry');
    const [first, second] = updates(p) as [SinkPost, SinkPost];
    expect(second.activityId).toBe(id);
    expect(second.at - first.at).toBeGreaterThanOrEqual(2_000);
    const state = await eventually(async () => {
      const s = await deliveryState(roost.services.db.sql, id);
      return s?.delivered === 1 ? s : null;
    });
    expect(state).toMatchObject({ inboxes: 1, delivered: 1, failed: 0, pending: 0 });
  });

  it('parks a host answering 500 until its probe, and a success reopens it', { timeout: 90_000 }, async () => {
    const p = await peer();
    const host = new URL(p.urls[0]!).host;
    const cid = await createTestUser(roost, 'cid');
    await follows(await remote(p.urls[0]!, 'h1', false), cid);
    await eventually(async () => p.posts.some((x) => x.type === 'Accept'));
    let failing = true;
    p.answer = (post) => (post.type === 'Update' && failing ? { status: 500 } : { status: 202 });
    await editProfile(cid, 'Cid');
    // Two failed rounds open the circuit.
    const opened = await eventually(async () => {
      const [row] = await roost.services.db.sql.query<{ open_until: Date | string | null; failures: number }>(
        `select open_until, failures from delivery_hosts where host = $1`,
        [host],
      );
      return row?.open_until ? { until: new Date(row.open_until).getTime(), failures: Number(row.failures) } : null;
    }, 20_000, 'the circuit to open');
    expect(opened.failures).toBe(2);
    const seenWhenOpened = updates(p).length;
    expect(seenWhenOpened).toBe(2);
    // Another activity to the parked host costs nothing either until the probe.
    await editProfile(cid, 'Cid again');
    // The probe comes at open_until, not before; it fails (the circuit stays open, probe later).
    await eventually(async () => updates(p).length > seenWhenOpened, 20_000, 'the probe');
    const probe = updates(p)[seenWhenOpened]!;
    expect(probe.at).toBeGreaterThanOrEqual(opened.until);
    const afterProbe = await eventually(async () => {
      const [row] = await roost.services.db.sql.query<{ open_until: Date | string | null; probes: number }>(
        `select open_until, probes from delivery_hosts where host = $1`,
        [host],
      );
      return row && Number(row.probes) === 1 ? new Date(row.open_until!).getTime() : null;
    });
    expect(updates(p).length).toBe(seenWhenOpened + 1);
    // The peer recovers: the next probe succeeds, the circuit closes and both Updates arrive.
    failing = false;
    await eventually(async () => (await roost.services.db.sql.query(`select 1 from delivery_hosts where host = $1`, [host])).length === 0, 30_000, 'the circuit to close');
    await eventually(async () => new Set(updates(p).slice(seenWhenOpened + 1).map((u) => u.activityId)).size === 2, 20_000, 'both Updates');
    const later = updates(p).slice(seenWhenOpened + 1);
    expect(Math.min(...later.map((u) => u.at))).toBeGreaterThanOrEqual(afterProbe);
    const [first, second] = [...new Set(later.map((u) => u.activityId))];
    for (const id of [first!, second!]) {
      await eventually(async () => (await deliveryState(roost.services.db.sql, id))?.delivered === 1, 10_000, 'the delivery counted');
    }
  });

  it('keeps the order of an account\'s activities per host, and a failing host holds up nobody else', { timeout: 90_000 }, async () => {
    const bad = await peer();
    const good = await peer();
    const gus = await createTestUser(roost, 'gus');
    await follows(await remote(bad.urls[0]!, 'k1', false), gus);
    await follows(await remote(good.urls[0]!, 'k2', false), gus);
    await eventually(async () => bad.posts.some((x) => x.type === 'Accept') && good.posts.some((x) => x.type === 'Accept'));
    let failing = true;
    bad.answer = (post) => (post.type === 'Update' && failing ? { status: 503 } : { status: 202 });
    await editProfile(gus, 'Gus 1');
    await eventually(async () => updates(good).length === 1, 15_000, 'the first Update on the good host');
    await editProfile(gus, 'Gus 2');
    await eventually(async () => updates(good).length === 2, 15_000, 'the second Update on the good host');
    const [first, second] = updates(good).map((u) => u.activityId) as [string, string];
    expect(first).not.toBe(second);
    // The failing host has only been tried with the first one.
    expect(new Set(updates(bad).map((u) => u.activityId))).toEqual(new Set([first]));
    failing = false;
    await eventually(async () => updates(bad).some((u) => u.activityId === second), 40_000, 'the second Update on the recovered host');
    const lastOfFirst = Math.max(...updates(bad).filter((u) => u.activityId === first).map((u) => u.at));
    const firstOfSecond = Math.min(...updates(bad).filter((u) => u.activityId === second).map((u) => u.at));
    expect(firstOfSecond).toBeGreaterThanOrEqual(lastOfFirst);
    for (const id of [first, second]) {
      await eventually(async () => (await deliveryState(roost.services.db.sql, id))?.pending === 0, 10_000, 'the count');
      expect(await deliveryState(roost.services.db.sql, id)).toMatchObject({ inboxes: 2, delivered: 2, failed: 0, pending: 0 });
    }
  });

  it('removes a follower whose own inbox answers 410 Gone', { timeout: 60_000 }, async () => {
    const p = await peer();
    const dee = await createTestUser(roost, 'dee');
    const gone = await remote(p.urls[0]!, 'gone', false);
    const stays = await remote(p.urls[0]!, 'stays', false);
    await follows(gone, dee);
    await follows(stays, dee);
    p.answer = (post) => (post.type === 'Update' && post.path === '/users/gone/inbox' ? { status: 410 } : { status: 202 });
    await editProfile(dee, 'Dee');
    const id = await lastUpdateId(p);
    const state = await eventually(async () => {
      const s = await deliveryState(roost.services.db.sql, id);
      return s && s.pending === 0 ? s : null;
    });
    expect(state).toMatchObject({ inboxes: 2, delivered: 1, failed: 1, pending: 0, lastError: `${p.urls[0]}/users/gone/inbox: HTTP 410` });
    await eventually(
      async () => (await roost.services.db.sql.query(`select 1 from accounts where uri = $1`, [gone.uri])).length === 0,
      15_000,
      'the gone account to be removed',
    );
    const followers = await roost.services.db.sql.query<{ uri: string }>(
      `select a.uri from follows f join accounts a on a.id = f.account_id where f.target_account_id = $1 and f.state = 'accepted'`,
      [dee.account.id],
    );
    expect(followers.map((f) => f.uri)).toEqual([stays.uri]);
    const dees = await dee.api(`/api/v1/accounts/${dee.account.id}`);
    expect(dees.body.followers_count).toBe(1);
  });

  it('delivers a Follow in the priority lane while a fan-out to 2,000 slow inboxes drains', { timeout: 120_000 }, async () => {
    const slow = await peer();
    const other = await peer();
    const eve = await createTestUser(roost, 'eve');
    const fay = await createTestUser(roost, 'fay');
    // 2,000 remote followers of eve on the slow peer, each with an inbox of its own (rows as a
    // migration would backfill them: the fan-out only reads them).
    const base = slow.urls[0]!;
    await roost.services.db.sql.query(
      `insert into accounts (id, username, domain, uri, url, inbox_url, actor_type, created_at, updated_at)
       select 900000000 + g, 'p' || g, $1, $2 || '/users/p' || g, $2 || '/@p' || g, $2 || '/users/p' || g || '/inbox', 'Person', now(), now()
         from generate_series(1, 2000) g`,
      [new URL(base).host, base],
    );
    await roost.services.db.sql.query(
      `insert into follows (id, account_id, target_account_id, state, created_at, updated_at)
       select 900000000 + g, 900000000 + g, $1, 'accepted', now(), now() from generate_series(1, 2000) g`,
      [eve.account.id],
    );
    slow.answer = () => ({ status: 202, delayMs: 100 });
    const target = await remote(other.urls[0]!, 'gil', false);
    let followAt = 0;
    let updatesWhenFollowed = -1;
    other.onPost = (post) => {
      if (post.type === 'Follow') {
        followAt = post.at;
        updatesWhenFollowed = updates(slow).length;
      }
    };
    await editProfile(eve, 'Eve');
    await eventually(async () => updates(slow).length >= 100, 30_000, 'the fan-out to start');
    const fanOutId = updates(slow)[0]!.activityId;
    const res = await fay.api(`/api/v1/accounts/${target.id}/follow`, { method: 'POST' });
    expect(res.status).toBe(200);
    // Its progress shows while it drains (flushed every second).
    const midway = await eventually(async () => {
      const st = await deliveryState(roost.services.db.sql, fanOutId);
      return st && st.delivered > 0 && st.delivered < 2000 ? st : null;
    }, 30_000, 'progress');
    expect(midway).toMatchObject({ inboxes: 2000, failed: 0, pending: 2000 - midway.delivered });
    await eventually(async () => updates(slow).length === 2000, 60_000, 'the fan-out to finish');
    expect(followAt).toBeGreaterThan(0);
    expect(updatesWhenFollowed).toBeGreaterThanOrEqual(100);
    expect(updatesWhenFollowed).toBeLessThan(2000);
    expect(followAt).toBeLessThan(updates(slow).at(-1)!.at);
    expect(new Set(updates(slow).map((u) => u.path)).size).toBe(2000);
    await eventually(async () => (await deliveryState(roost.services.db.sql, fanOutId))?.delivered === 2000, 10_000, 'the count');
    expect(await deliveryState(roost.services.db.sql, fanOutId)).toMatchObject({ lane: BULK_LANE, inboxes: 2000, delivered: 2000, failed: 0, pending: 0 });
  });
});
