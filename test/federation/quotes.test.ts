/**
 * Quote posts between two real Roost instances (real HTTP, real signatures), both ways: a quote
 * of the other server's post is pending, asks with a QuoteRequest, is accepted by the quoted
 * author's server (Accept with a QuoteAuthorization served at its URL), and the quoting Note goes
 * again carrying the stamp, which a third party's copy verifies; the quoted author revokes it
 * (Delete of the stamp): revoked on both; a policy change reaches the other server (an Update
 * that is not an edit); a QuoteRequest the policy refuses is answered with a Reject: rejected on
 * the quoting side.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { followAccount } from '../../src/services/follows.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';

let a: TestRoost;
let b: TestRoost;
let c: TestRoost;
let alice: TestUser; // on A, follows bob
let bob: TestUser; // on B, follows alice
let carol: TestUser; // on C, follows alice: a third party that verifies stamps

const AP = { accept: 'application/activity+json' };

beforeAll(async () => {
  [a, b, c] = await Promise.all([startTestRoost(), startTestRoost(), startTestRoost()]);
  [alice, bob, carol] = await Promise.all([createTestUser(a, 'alice'), createTestUser(b, 'bob'), createTestUser(c, 'carol')]);
  const aliceOnC = (await lookupRemoteAccount(c.services, c.federation, a.at('/users/alice')))!;
  const f3 = await followAccount(c.services, carol.account.id, aliceOnC.id);
  const aliceOnB = (await lookupRemoteAccount(b.services, b.federation, a.at('/users/alice')))!;
  const bobOnA = (await lookupRemoteAccount(a.services, a.federation, b.at('/users/bob')))!;
  const f1 = await followAccount(b.services, bob.account.id, aliceOnB.id);
  const f2 = await followAccount(a.services, alice.account.id, bobOnA.id);
  await eventually(async () => (await b.services.db.sql.query(`select 1 from follows where id = $1 and state = 'accepted'`, [f1.id])).length > 0, 20_000, 'the Accept on B');
  await eventually(async () => (await a.services.db.sql.query(`select 1 from follows where id = $1 and state = 'accepted'`, [f2.id])).length > 0, 20_000, 'the Accept on A');
  await eventually(async () => (await c.services.db.sql.query(`select 1 from follows where id = $1 and state = 'accepted'`, [f3.id])).length > 0, 20_000, 'the Accept on C');
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), c?.close()]);
});

async function post(u: TestUser, body: Record<string, unknown>) {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}
const idOn = (r: TestRoost, uri: string) =>
  eventually(async () => (await r.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [uri]))[0]?.id, 20_000, `${uri} to arrive`);
const quoteOn = async (r: TestRoost, uri: string) =>
  (await r.services.db.sql.query<{ state: string; approval_uri: string | null; quoted: string | null }>(
    `select q.state, q.approval_uri, o.uri as quoted from quotes q join statuses s on s.id = q.status_id left join statuses o on o.id = q.quoted_status_id where s.uri = $1`,
    [uri],
  ))[0];
const quoteState = (r: TestRoost, uri: string, state: string) =>
  eventually(async () => ((await quoteOn(r, uri))?.state === state ? quoteOn(r, uri) : null), 20_000, `${uri} quote ${state}`);

describe('a quote of a post on the other server', () => {
  it('B quotes A: pending, QuoteRequest, Accept with a stamp A serves, accepted on both, the Note sent again with the stamp; A revokes: revoked on both', async () => {
    const original = await post(alice, { status: 'from A, quotable' });
    const onB = await idOn(b, original.uri);
    const quoting = await post(bob, { status: 'B quotes A', quoted_status_id: onB });
    // Asked, not answered yet (Mastodon shows a pending quote without the post).
    expect(quoting.quote.state).toBe('pending');
    expect(quoting.quote.quoted_status).toBeNull();

    // A took the request: bob's status is stored there, its quote accepted with A's stamp.
    const accepted = await quoteState(a, quoting.uri, 'accepted');
    expect(accepted!.quoted).toBe(original.uri);
    expect(accepted!.approval_uri).toMatch(new RegExp(`^${a.at('/users/alice/quote_authorizations/')}\\d+$`));
    // B got the Accept: the same stamp.
    const onBQuote = await quoteState(b, quoting.uri, 'accepted');
    expect(onBQuote!.approval_uri).toBe(accepted!.approval_uri);
    const shown = (await bob.api(`/api/v1/statuses/${quoting.id}`)).body;
    expect(shown.quote.state).toBe('accepted');
    expect(shown.quote.quoted_status.uri).toBe(original.uri);

    // The stamp, served at its URI.
    const stamp = await fetch(accepted!.approval_uri!, { headers: AP });
    expect(stamp.status).toBe(200);
    const doc = (await stamp.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      id: accepted!.approval_uri,
      type: 'QuoteAuthorization',
      attributedTo: a.at('/users/alice'),
      interactingObject: quoting.uri,
      interactionTarget: original.uri,
    });
    // The quoting Note as B serves it names the quote and the stamp.
    const note = (await (await fetch(quoting.uri, { headers: AP })).json()) as Record<string, any>;
    expect([note.quote, note.quoteUri, note._misskey_quote, note.quoteAuthorization]).toEqual([original.uri, original.uri, original.uri, accepted!.approval_uri]);

    // alice (A) was told, and sees the quote and her post's count.
    const aQuoteId = await idOn(a, quoting.uri);
    const n = await eventually(async () => ((await alice.api('/api/v1/notifications?types[]=quote')).body as { status: { id: string } }[]).find((x) => x.status.id === aQuoteId));
    expect(n).toBeTruthy();
    expect((await alice.api(`/api/v1/statuses/${original.id}`)).body.quotes_count).toBe(1);
    expect((await alice.api(`/api/v1/statuses/${original.id}/quotes`)).body.map((s: { id: string }) => s.id)).toEqual([aQuoteId]);

    // alice revokes: the stamp is gone (404), revoked on A and, by the Delete, on B.
    const revoked = await alice.api(`/api/v1/statuses/${original.id}/quotes/${aQuoteId}/revoke`, { method: 'POST' });
    expect(revoked.status).toBe(200);
    expect(revoked.body.quote).toEqual({ state: 'revoked', quoted_status: null });
    await quoteState(b, quoting.uri, 'revoked');
    expect((await bob.api(`/api/v1/statuses/${quoting.id}`)).body.quote).toEqual({ state: 'revoked', quoted_status: null });
    expect((await fetch(accepted!.approval_uri!, { headers: AP })).status).toBe(404);
    await settled(a, b);
  });

  it('A quotes B (the other way): accepted by B; a third server (C) takes the stamp from the Update after fetching and checking it', async () => {
    const original = await post(bob, { status: 'from B, quotable' });
    const onA = await idOn(a, original.uri);
    expect((await alice.api(`/api/v1/statuses/${onA}`)).body.quote_approval).toEqual({ automatic: ['public'], manual: [], current_user: 'automatic' });
    const quoting = await post(alice, { status: 'A quotes B', quoted_status_id: onA });
    expect(quoting.quote.state).toBe('pending');
    const onAQuote = await quoteState(a, quoting.uri, 'accepted');
    expect(onAQuote!.approval_uri).toMatch(new RegExp(`^${b.at('/users/bob/quote_authorizations/')}\\d+$`));
    const onBQuote = await quoteState(b, quoting.uri, 'accepted');
    expect(onBQuote!.approval_uri).toBe(onAQuote!.approval_uri);
    expect((await alice.api(`/api/v1/statuses/${quoting.id}`)).body.quote.quoted_status.uri).toBe(original.uri);
    // C (carol follows alice) got the Create while the quote was pending, then the Update with
    // B's stamp: fetched from B, checked, accepted. It never heard of bob's post before: fetched too.
    const onCQuote = await quoteState(c, quoting.uri, 'accepted');
    expect(onCQuote).toEqual({ state: 'accepted', approval_uri: onAQuote!.approval_uri, quoted: original.uri });
    const onC = await idOn(c, quoting.uri);
    const seen = (await carol.api(`/api/v1/statuses/${onC}`)).body;
    expect(seen.quote.state).toBe('accepted');
    expect(seen.quote.quoted_status.uri).toBe(original.uri);
    // Not edited by that Update (it only brought the stamp).
    expect(seen.edited_at).toBeNull();
    await settled(a, b, c);
  });

  it('a policy that refuses: B answers the QuoteRequest with a Reject, A marks the quote rejected', async () => {
    const original = await post(bob, { status: 'do not quote me' });
    const onA = await idOn(a, original.uri);
    // B changes the policy after A has the post: A hears of it (an Update that is not an edit).
    expect((await bob.api(`/api/v1/statuses/${original.id}/interaction_policy`, { method: 'PUT', body: { quote_approval_policy: 'nobody' } })).status).toBe(200);
    await eventually(async () => ((await alice.api(`/api/v1/statuses/${onA}`)).body.quote_approval.current_user === 'denied' ? true : null), 20_000, 'the policy on A');
    expect((await alice.api(`/api/v1/statuses/${onA}`)).body.edited_at).toBeNull();
    // A copy that has not heard yet (made stale here): A asks, B refuses by its own policy.
    await a.services.db.sql.query(`update statuses set quote_policy = 'public' where id = $1`, [onA]);
    const quoting = await post(alice, { status: 'A tries', quoted_status_id: onA });
    await quoteState(a, quoting.uri, 'rejected');
    expect((await alice.api(`/api/v1/statuses/${quoting.id}`)).body.quote).toEqual({ state: 'rejected', quoted_status: null });
    // A post whose Note says nobody may quote it: A refuses at once, as Mastodon.
    const closed = await post(bob, { status: 'closed from the start', quote_approval_policy: 'nobody' });
    const closedOnA = await idOn(a, closed.uri);
    expect((await alice.api(`/api/v1/statuses/${closedOnA}`)).body.quote_approval).toEqual({ automatic: [], manual: [], current_user: 'denied' });
    expect((await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'x', quoted_status_id: closedOnA } })).status).toBe(404);
    await settled(a, b);
  });
});
