/**
 * Three real instances on loopback (real HTTP, real signatures), one scenario: follows across all
 * three, a post with mentions, a reply thread across the three (C replies to B's reply to A's
 * post), boosts, likes, a poll voted from the two others, an edit, a delete, a block, an account
 * move (A's user to B) and a domain block (C suspends B) — then the three agree, through their
 * REST APIs, on what they show: the statuses, their counts, the thread, the poll's tallies and
 * the relationships. Every wait is on a condition.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { migrateLocalAccount, setAccountAliases } from '../../src/services/moves.ts';
import { createManualClock } from '../../src/lib/clock.ts';

const MIN = 60_000;
// A drives its clock past the poll's 3-minute Update throttle; it starts at the wall clock.
const clock = createManualClock(new Date(Math.floor(Date.now() / 1000) * 1000));
let a: TestRoost;
let b: TestRoost;
let c: TestRoost;
let alice: TestUser; // A
let bob: TestUser; // B
let carol: TestUser; // C
let dave: TestUser; // C, follows alice then blocks her
let mover: TestUser; // A, moves to B's newhome
let newhome: TestUser; // B
let cAdmin: TestUser; // C's operator

const W = 30_000;

beforeAll(async () => {
  [a, b, c] = await Promise.all([startTestRoost({}, { clock }), startTestRoost(), startTestRoost()]);
  [alice, mover, bob, newhome, carol, dave, cAdmin] = await Promise.all([
    createTestUser(a, 'alice'),
    createTestUser(a, 'mover'),
    createTestUser(b, 'bob'),
    createTestUser(b, 'newhome'),
    createTestUser(c, 'carol'),
    createTestUser(c, 'dave'),
    createTestUser(c, 'operator', { role: 'Owner', scopes: ['read', 'write', 'follow', 'admin:read', 'admin:write'] }),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), c?.close()]);
});

const roostOf = new Map<TestUser, () => TestRoost>();
/** The id on `viewer`'s instance of the account `user@instance`. */
async function idOf(viewer: TestUser, r: TestRoost, username: string): Promise<string> {
  const res = await viewer.api(`/api/v1/accounts/lookup?acct=${encodeURIComponent(`${username}@${r.config.domain}`)}`);
  if (res.status === 200) return res.body.id;
  const home = roostOf.get(viewer)!();
  const acc = await lookupRemoteAccount(home.services, home.federation, r.at(`/users/${username}`));
  return acc!.id;
}
/** The id on `viewer`'s instance of the status with this URI, once it is there. */
async function statusIdOf(viewer: TestUser, uri: string, what = uri): Promise<string> {
  const home = roostOf.get(viewer)!();
  return eventually(
    async () => (await home.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1 and deleted_at is null`, [uri]))[0]?.id,
    W,
    what,
  );
}
async function relationship(viewer: TestUser, id: string) {
  const r = await viewer.api(`/api/v1/accounts/relationships?id[]=${id}`);
  return r.body[0] as { following: boolean; followed_by: boolean; blocking: boolean; blocked_by: boolean; requested: boolean };
}
async function follow(who: TestUser, r: TestRoost, username: string) {
  const id = await idOf(who, r, username);
  const res = await who.api(`/api/v1/accounts/${id}/follow`, { method: 'POST' });
  expect(res.status).toBe(200);
  await eventually(async () => (await relationship(who, id)).following, W, `${who.account.username} following ${username}`);
}
async function post(u: TestUser, body: Record<string, unknown>) {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body });
  expect(r.status).toBe(200);
  return r.body as { id: string; uri: string; poll?: { id: string } };
}

describe('three instances converge', () => {
  it('follows, a thread across three, boosts, likes, a poll, an edit, a delete, a block, a move and a domain block', async () => {
    for (const u of [alice, mover]) roostOf.set(u, () => a);
    for (const u of [bob, newhome]) roostOf.set(u, () => b);
    for (const u of [carol, dave, cAdmin]) roostOf.set(u, () => c);
    const viewers: [TestUser, TestRoost][] = [
      [alice, a],
      [bob, b],
      [carol, c],
    ];

    // Follows across all three.
    await follow(alice, b, 'bob');
    await follow(alice, c, 'carol');
    await follow(bob, a, 'alice');
    await follow(bob, c, 'carol');
    await follow(carol, a, 'alice');
    await follow(carol, b, 'bob');
    await follow(dave, a, 'alice');
    await follow(bob, a, 'mover');
    await follow(carol, a, 'mover');

    // A post with mentions; B replies; C replies to B's reply.
    const root = await post(alice, { status: `Hello @bob@${b.config.domain} and @carol@${c.config.domain}` });
    const rootOnB = await statusIdOf(bob, root.uri, 'the post on B');
    const rootOnC = await statusIdOf(carol, root.uri, 'the post on C');
    const reply1 = await post(bob, { status: `@alice@${a.config.domain} hi from B`, in_reply_to_id: rootOnB });
    const reply1OnC = await statusIdOf(carol, reply1.uri, "B's reply on C");
    const reply2 = await post(carol, { status: `@bob@${b.config.domain} and hi from C`, in_reply_to_id: reply1OnC });
    await statusIdOf(alice, reply2.uri, "C's reply on A");
    await statusIdOf(bob, reply2.uri, "C's reply on B");

    // Boosts and likes of the post, from B and from C.
    for (const [u, id] of [[bob, rootOnB], [carol, rootOnC]] as const) {
      expect((await u.api(`/api/v1/statuses/${id}/reblog`, { method: 'POST' })).status).toBe(200);
      expect((await u.api(`/api/v1/statuses/${id}/favourite`, { method: 'POST' })).status).toBe(200);
    }

    // A poll, voted from B and from C.
    const poll = await post(alice, { status: 'Tea or coffee?', poll: { options: ['tea', 'coffee'], expires_in: 3600 } });
    for (const [u, choice] of [[bob, '0'], [carol, '1']] as const) {
      const sid = await statusIdOf(u, poll.uri, 'the poll');
      const shown = await u.api(`/api/v1/statuses/${sid}`);
      const voted = await u.api(`/api/v1/polls/${shown.body.poll.id}/votes`, { method: 'POST', body: { choices: [choice] } });
      expect(voted.status).toBe(200);
    }
    await eventually(async () => (await alice.api(`/api/v1/statuses/${poll.id}`)).body.poll.votes_count === 2, W, 'both votes on A');

    // An edit of the post, once A has both likes: its Update carries them (the Note's `likes`).
    await eventually(async () => (await alice.api(`/api/v1/statuses/${root.id}`)).body.favourites_count === 2, W, 'both likes on A');
    const edited = await alice.api(`/api/v1/statuses/${root.id}`, {
      method: 'PUT',
      body: { status: `Hello again @bob@${b.config.domain} and @carol@${c.config.domain}` },
    });
    expect(edited.status).toBe(200);

    // A delete: a post of carol's, seen on A and B, then deleted.
    const doomed = await post(carol, { status: 'soon gone' });
    await statusIdOf(alice, doomed.uri, 'the doomed post on A');
    await statusIdOf(bob, doomed.uri, 'the doomed post on B');
    expect((await carol.api(`/api/v1/statuses/${doomed.id}`, { method: 'DELETE' })).status).toBe(200);

    // A block: dave (C) blocks alice (A), which ends his follow.
    const aliceOnC = await idOf(dave, a, 'alice');
    expect((await dave.api(`/api/v1/accounts/${aliceOnC}/block`, { method: 'POST' })).status).toBe(200);

    // The move: A's mover to B's newhome (which names mover as an alias first).
    const bResolve = (q: string) => lookupRemoteAccount(b.services, b.federation, q);
    await setAccountAliases(b.services, bResolve, 'newhome', { add: [a.at('/users/mover')] });
    await settled(a, b, c);
    const aResolve = (q: string) => lookupRemoteAccount(a.services, a.federation, q);
    await migrateLocalAccount(a.services, aResolve, { username: 'mover', target: b.at('/users/newhome') });

    // Let every queue drain, then push A past its 3-minute poll Update throttle.
    await settled(a, b, c);
    clock.advance(3 * MIN);
    await settled(a, b, c);

    // ---- Convergence, through each instance's REST API. ----
    // The post: edited text, 2 boosts, 2 likes and 1 direct reply everywhere. A Like goes to the
    // author's inbox only: B and C saw one like each themselves, and show 2 from the `likes`
    // totalItems of the edit's Update(Note) (Mastodon 4.3's untrusted counts; the larger is shown).
    const likesSeen = new Map([[alice, 2], [bob, 2], [carol, 2]]);
    for (const [u, r] of viewers) {
      const likes = likesSeen.get(u)!;
      const id = await statusIdOf(u, root.uri);
      let seen: unknown;
      const s = await eventually(
        async () => {
          const x = (await u.api(`/api/v1/statuses/${id}`)).body;
          seen = { name: u.account.username, r: x.reblogs_count, f: x.favourites_count, re: x.replies_count, content: x.content };
          return x.reblogs_count === 2 && x.favourites_count === likes && x.replies_count === 1 && String(x.content).includes('Hello again') ? x : null;
        },
        W,
        `the post's counts on ${r.config.domain}`,
      ).catch((e) => {
        throw new Error(`${(e as Error).message}: ${JSON.stringify(seen)}`);
      });
      expect(s).toMatchObject({ uri: root.uri, reblogs_count: 2, favourites_count: likes, replies_count: 1, edited_at: expect.any(String) });
      // The thread: B's reply to the post, C's reply to B's.
      const ctx = (await u.api(`/api/v1/statuses/${id}/context`)).body;
      expect(ctx.ancestors).toEqual([]);
      expect(ctx.descendants.map((d: { uri: string }) => d.uri)).toEqual([reply1.uri, reply2.uri]);
      expect(ctx.descendants[0].in_reply_to_id).toBe(id);
      expect(ctx.descendants[1].in_reply_to_id).toBe(ctx.descendants[0].id);
      // The poll's tallies.
      const pid = await statusIdOf(u, poll.uri);
      const p = await eventually(
        async () => {
          const x = (await u.api(`/api/v1/statuses/${pid}`)).body.poll;
          return x.votes_count === 2 ? x : null;
        },
        W,
        `the tallies on ${r.config.domain}`,
      );
      expect(p).toMatchObject({ votes_count: 2, voters_count: 2, options: [{ title: 'tea', votes_count: 1 }, { title: 'coffee', votes_count: 1 }] });
      // The deleted post is nowhere.
      expect((await r.services.db.sql.query(`select 1 from statuses where uri = $1 and deleted_at is null`, [doomed.uri])).length).toBe(0);
    }
    // Relationships: all three follow one another, seen from both sides.
    for (const [u] of viewers) {
      for (const [other, r] of viewers) {
        if (other === u) continue;
        const rel = await relationship(u, await idOf(u, r, other.account.username));
        expect({ following: rel.following, followed_by: rel.followed_by }).toEqual({ following: true, followed_by: true });
      }
    }
    // The block: on C dave blocks alice, on A alice is blocked by dave and no longer followed by him.
    expect(await relationship(dave, aliceOnC)).toMatchObject({ blocking: true, following: false });
    const daveOnA = await idOf(alice, c, 'dave');
    await eventually(async () => {
      const rel = await relationship(alice, daveOnA);
      return rel.blocked_by && !rel.followed_by;
    }, W, 'the block on A');
    // The move: bob (B) and carol (C) now follow newhome, and mover shows as moved everywhere.
    const newhomeOnC = await idOf(carol, b, 'newhome');
    await eventually(async () => (await relationship(carol, newhomeOnC)).following, W, 'carol following newhome');
    await eventually(async () => (await relationship(bob, newhome.account.id)).following, W, 'bob following newhome');
    for (const [u, r] of [[bob, b], [carol, c]] as const) {
      const moverId = await idOf(u, a, 'mover');
      const shown = await eventually(async () => {
        const x = (await u.api(`/api/v1/accounts/${moverId}`)).body;
        return x.moved ? x : null;
      }, W, `mover moved on ${r.config.domain}`);
      expect(shown.moved.acct).toBe(r === b ? 'newhome' : `newhome@${b.config.domain}`);
    }

    // The domain block: C suspends B. C drops carol's follow of bob and hides B's posts.
    const blocked = await cAdmin.api('/api/v1/admin/domain_blocks', { method: 'POST', body: { domain: b.config.domain, severity: 'suspend' } });
    expect(blocked.status).toBe(200);
    const bobOnC = (await c.services.db.sql.query<{ id: string }>(`select id::text from accounts where uri = $1`, [b.at('/users/bob')]))[0]!.id;
    await eventually(async () => !(await relationship(carol, bobOnC)).following, W, "carol's follow of bob gone on C");
    const reply1OnCNow = await carol.api(`/api/v1/statuses/${reply1OnC}`);
    expect(reply1OnCNow.status).toBe(404);
    const rootCtxOnC = (await carol.api(`/api/v1/statuses/${rootOnC}/context`)).body;
    expect(rootCtxOnC.descendants.map((d: { uri: string }) => d.uri)).not.toContain(reply1.uri);
    // A and B are untouched by C's decision: A still shows the whole thread.
    const ctxOnA = (await alice.api(`/api/v1/statuses/${root.id}/context`)).body;
    expect(ctxOnA.descendants.map((d: { uri: string }) => d.uri)).toEqual([reply1.uri, reply2.uri]);
  }, 400_000);
});
