/**
 * GET /api/v2/search across three real instances on loopback (real HTTP, real signatures): a
 * searcher on A finds accounts of B and C by `user@domain` and statuses of both by URL (a reply
 * on C to a post on B brings its parent along); a followers-only post of B, delivered to A and C
 * because each has a follower of its author, is found by URL on each by that follower only, and
 * by full text by nobody but its author.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

const W = 30_000;
let a: TestRoost;
let b: TestRoost;
let c: TestRoost;
let alice: TestUser; // A: the searcher, follows nobody
let fan: TestUser; // A: follows carol
let carol: TestUser; // B: indexable
let dave: TestUser; // C: follows carol, replies to her
let eve: TestUser; // C: follows nobody

type Json = Record<string, any>;
const search = (u: TestUser, q: string, extra = '') => u.api(`/api/v2/search?q=${encodeURIComponent(q)}${extra}`);
const resolved = async (u: TestUser, q: string, extra = '') => {
  const res = await search(u, q, `&resolve=true${extra}`);
  expect(res.status, q).toBe(200);
  return res.body as { accounts: Json[]; statuses: Json[]; hashtags: Json[] };
};
const acct = (r: TestRoost, u: TestUser) => `${u.account.username}@${r.config.domain}`;

/** `who` follows `u` of `r` (found by resolve), and waits until the follow is accepted. */
async function follow(who: TestUser, r: TestRoost, u: TestUser): Promise<void> {
  const [target] = (await resolved(who, acct(r, u), '&type=accounts')).accounts;
  expect(target?.acct).toBe(acct(r, u));
  expect((await who.api(`/api/v1/accounts/${target!.id}/follow`, { method: 'POST' })).status).toBe(200);
  await eventually(async () => (await who.api(`/api/v1/accounts/relationships?id[]=${target!.id}`)).body[0]?.following === true, W, `${who.account.username} following ${u.account.username}`);
}

/** The id of the status `uri` on the instance, once it is there. */
const heldOn = (r: TestRoost, uri: string) =>
  eventually(async () => (await r.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1 and deleted_at is null`, [uri]))[0]?.id, W, `${uri} on ${r.config.domain}`);

beforeAll(async () => {
  [a, b, c] = await Promise.all([startTestRoost(), startTestRoost(), startTestRoost()]);
  [alice, fan, carol, dave, eve] = await Promise.all([
    createTestUser(a, 'alice'),
    createTestUser(a, 'fan'),
    createTestUser(b, 'carol'),
    createTestUser(c, 'dave'),
    createTestUser(c, 'eve'),
  ]);
  expect((await carol.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { indexable: true } })).status).toBe(200);
  await follow(fan, b, carol);
  await follow(dave, b, carol);
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), c?.close()]);
});

describe('search across three instances', () => {
  it('finds remote accounts by user@domain on both other instances', async () => {
    for (const [r, u] of [[b, carol], [c, dave], [c, eve]] as const) {
      const found = await resolved(alice, acct(r, u));
      expect(found.accounts.map((x) => x.acct)).toEqual([acct(r, u)]);
      expect(found.accounts[0]!.url).toBe(r.at(`/@${u.account.username}`));
      // With the leading @, and from C about B's account.
      expect((await resolved(alice, `@${acct(r, u)}`, '&type=accounts')).accounts[0]!.id).toBe(found.accounts[0]!.id);
    }
    expect((await resolved(eve, acct(b, carol))).accounts.map((x) => x.acct)).toEqual([acct(b, carol)]);
  });

  it('finds remote statuses by URL, a reply on C with its parent on B', async () => {
    const root = await carol.api('/api/v1/statuses', { body: { status: 'Swifts sleep on the wing' } });
    expect(root.status).toBe(200);
    const rootOnC = await heldOn(c, root.body.uri);
    const reply = await dave.api('/api/v1/statuses', { body: { status: `@${acct(b, carol)} they do, for months`, in_reply_to_id: rootOnC } });
    expect(reply.status).toBe(200);
    await settled(a, b, c);
    // A knows neither (alice follows nobody, fan follows carol only: the root is there, the reply not).
    expect((await a.services.db.sql.query(`select 1 from statuses where uri = $1`, [reply.body.uri])).length).toBe(0);
    const found = await resolved(alice, reply.body.url);
    expect(found.accounts).toEqual([]);
    expect(found.statuses.map((s) => [s.uri, s.account.acct])).toEqual([[reply.body.uri, acct(c, dave)]]);
    const rootOnA = await heldOn(a, root.body.uri);
    expect(found.statuses[0]!.in_reply_to_id).toBe(rootOnA);
    expect((await resolved(alice, root.body.uri)).statuses.map((s) => s.id)).toEqual([rootOnA]);
    // Full text finds carol's post (she is indexable; dave is not).
    expect((await search(alice, 'swifts', '&type=statuses')).body.statuses.map((s: Json) => s.uri)).toEqual([root.body.uri]);
  });

  it('finds a followers-only post by URL only for a follower, and by text for nobody but its author', async () => {
    const secret = await carol.api('/api/v1/statuses', { body: { status: 'Nightjars churr at dusk behind the heath', visibility: 'private' } });
    expect(secret.status).toBe(200);
    // Delivered to A (fan) and to C (dave): each instance holds it.
    await heldOn(a, secret.body.uri);
    await heldOn(c, secret.body.uri);
    for (const [outsider, follower] of [[alice, fan], [eve, dave]] as const) {
      for (const q of [secret.body.uri, secret.body.url]) {
        expect(await resolved(outsider, q), `${outsider.account.username} ${q}`).toMatchObject({ accounts: [], statuses: [] });
        expect((await resolved(follower, q)).statuses.map((s) => s.uri), `${follower.account.username} ${q}`).toEqual([secret.body.uri]);
      }
      // Not by its words, whoever searches (not public, and in no one's library here).
      for (const u of [outsider, follower]) expect((await search(u, 'nightjars', '&type=statuses')).body.statuses).toEqual([]);
    }
    // Its author finds it by its words at home.
    expect((await search(carol, 'nightjars', '&type=statuses')).body.statuses.map((s: Json) => s.uri)).toEqual([secret.body.uri]);
  });
});
