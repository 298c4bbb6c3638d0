/**
 * Complete threads (src/federation/threads.ts, services/threads.ts): four real instances on
 * loopback. A thread rooted on A with replies on B and C, read on D, whose only tie is that dan
 * follows A's author: opening the thread on D answers at once with Mastodon 4.5's async refresh,
 * and the refresh brings in the replies from B and C (through A's replies and context collections
 * and B's replies collection); the completeness reads whole afterwards, the thread rests for its
 * cooldown, and with C stopped the next refresh names C as unreachable. Then hostile remotes (a
 * fake server): a chain 10,000 replies deep, a loop of replies and pages, an unreachable host and
 * one that never answers: partial results, each refresh finished within its bounds, never a hang.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { createManualClock } from '../../src/lib/clock.ts';

const W = 30_000;
const MIN = 60_000;
const clock = createManualClock(new Date(Math.floor(Date.now() / 1000) * 1000));
let a: TestRoost;
let b: TestRoost;
let c: TestRoost | null;
let d: TestRoost;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dan: TestUser;

beforeAll(async () => {
  [a, b, c, d] = await Promise.all([startTestRoost(), startTestRoost(), startTestRoost(), startTestRoost({}, { clock })]);
  [alice, bob, carol, dan] = await Promise.all([createTestUser(a, 'alice'), createTestUser(b, 'bob'), createTestUser(c!, 'carol'), createTestUser(d, 'dan')]);
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), c?.close(), d?.close()]);
});

async function follow(who: TestUser, home: TestRoost, r: TestRoost, username: string) {
  const acc = await lookupRemoteAccount(home.services, home.federation, r.at(`/users/${username}`));
  expect((await who.api(`/api/v1/accounts/${acc!.id}/follow`, { method: 'POST' })).status).toBe(200);
  await eventually(async () => (await who.api(`/api/v1/accounts/relationships?id[]=${acc!.id}`)).body[0]?.following, W, `${who.account.username} following ${username}`);
}
async function post(u: TestUser, body: Record<string, unknown>) {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body });
  expect(r.status).toBe(200);
  return r.body as { id: string; uri: string };
}
async function idOn(r: TestRoost, uri: string): Promise<string | undefined> {
  return (await r.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1 and deleted_at is null`, [uri]))[0]?.id;
}
/** The refresh named by a Mastodon-Async-Refresh header. */
function refreshOf(header: string | null): { id: string; retry: number; resultCount: number } | null {
  const m = header && /^id="([^"]+)", retry=(\d+), result_count=(\d+)$/.exec(header);
  return m ? { id: m[1]!, retry: Number(m[2]), resultCount: Number(m[3]) } : null;
}
async function finished(u: TestUser, id: string) {
  return eventually(
    async () => {
      const r = await u.api(`/api/v1_alpha/async_refreshes/${id}`);
      expect(r.status).toBe(200);
      return r.body.async_refresh.status === 'finished' ? (r.body.async_refresh as { id: string; status: string; result_count: number }) : null;
    },
    W,
    'the refresh to finish',
  );
}

describe('a thread across four instances', () => {
  it('is brought whole to a server that follows only its root author, says so, and names a server it cannot reach', async () => {
    await follow(dan, d, a, 'alice');
    await follow(bob, b, a, 'alice');
    await follow(carol, c!, b, 'bob');
    const root = await post(alice, { status: 'A thread about roosts' });
    const rootOnB = await eventually(() => idOn(b, root.uri), W, 'the root on B');
    const rootOnD = await eventually(() => idOn(d, root.uri), W, 'the root on D');
    // B replies to the root; C replies to B's reply (C learns it as bob's follower) and to the root.
    const r1 = await post(bob, { status: `@alice@${a.config.domain} from B`, in_reply_to_id: rootOnB });
    const r1OnC = await eventually(() => idOn(c!, r1.uri), W, "B's reply on C");
    const r2 = await post(carol, { status: `@bob@${b.config.domain} from C, to B`, in_reply_to_id: r1OnC });
    await eventually(() => idOn(b, r2.uri), W, "C's reply on B");
    // C fetched the root as the parent of B's reply.
    const rootOnC = await eventually(() => idOn(c!, root.uri), W, 'the root on C');
    const r3 = await post(carol, { status: `@alice@${a.config.domain} from C, to A`, in_reply_to_id: rootOnC });
    await eventually(() => idOn(a, r3.uri), W, "C's reply on A");
    // D holds none of the replies: nobody it follows wrote or delivered them.
    for (const r of [r1, r2, r3]) expect(await idOn(d, r.uri)).toBeUndefined();

    // Opening the thread on D answers at once, with what D has and the refresh it started.
    const opened = await dan.api(`/api/v1/statuses/${rootOnD}/context`);
    expect(opened.status).toBe(200);
    expect(opened.body.descendants).toEqual([]);
    const refresh = refreshOf(opened.headers.get('mastodon-async-refresh'));
    expect(refresh).toMatchObject({ retry: 3, resultCount: 0 });
    expect(opened.body.roost_completeness).toMatchObject({ refreshing: true });
    expect(opened.headers.get('access-control-expose-headers')).toContain('Mastodon-Async-Refresh');
    // Anonymous readers start nothing, and while it runs they see it too.
    const done = await finished(dan, refresh!.id);
    expect(done).toEqual({ id: refresh!.id, status: 'finished', result_count: 3 });

    // The thread is whole on D: the three replies, in thread order.
    const after = await dan.api(`/api/v1/statuses/${rootOnD}/context`);
    expect(after.body.descendants.map((s: { uri: string }) => s.uri)).toEqual([r1.uri, r2.uri, r3.uri]);
    expect(after.headers.get('mastodon-async-refresh')).toBeNull();
    expect(after.body.roost_completeness).toEqual({
      known_replies: 3,
      reported_replies: 3,
      statuses_checked: 4,
      unreachable_servers: [],
      complete: true,
      checked_at: expect.any(String),
      refreshing: false,
    });
    // Backfilled replies sort where they were written, and are the real ones.
    const r2OnD = after.body.descendants[1];
    expect(r2OnD.account.acct).toBe(`carol@${c!.config.domain}`);
    expect(r2OnD.in_reply_to_id).toBe(after.body.descendants[0].id);

    // Within the cooldown, opening it again fetches nothing; past it, a new refresh runs.
    clock.advance(5 * MIN);
    expect((await dan.api(`/api/v1/statuses/${rootOnD}/context`)).headers.get('mastodon-async-refresh')).toBeNull();
    expect((await dan.api(`/api/v1_alpha/async_refreshes/${refresh!.id}`)).body.async_refresh.status).toBe('finished');

    // C stops; past the cooldown the next refresh cannot reach it and says so.
    await c!.close();
    c = null;
    clock.advance(11 * MIN);
    const again = refreshOf((await dan.api(`/api/v1/statuses/${after.body.descendants[1].id}/context`)).headers.get('mastodon-async-refresh'));
    expect(again).not.toBeNull();
    expect(again!.id).not.toBe(refresh!.id);
    expect(await finished(dan, again!.id)).toMatchObject({ status: 'finished', result_count: 0 });
    const partial = (await dan.api(`/api/v1/statuses/${rootOnD}/context`)).body;
    expect(partial.descendants).toHaveLength(3);
    expect(partial.roost_completeness).toMatchObject({ unreachable_servers: [new URL(r2.uri).host], complete: false });
  }, 180_000);

  it('answers the async refresh route as Mastodon does', async () => {
    expect((await dan.api('/api/v1_alpha/async_refreshes/nope')).status).toBe(404);
    expect((await dan.api('/api/v1_alpha/async_refreshes/nope')).body).toEqual({ error: 'Not Found' });
    expect((await dan.api(`/api/v1_alpha/async_refreshes/${'x'.repeat(300)}`)).status).toBe(404);
    const anonymous = await fetch(d.at('/api/v1_alpha/async_refreshes/nope'));
    expect(anonymous.status).toBe(401);
  });
});
