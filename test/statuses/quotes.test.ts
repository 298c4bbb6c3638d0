/**
 * Quote posts through the REST API (Mastodon 4.5): quoted_status_id on create with the policies
 * (public, followers, nobody; private and direct posts; self-quotes), the `quote` (Quote with a
 * full quoted status, whose own quote is shallow) and `quote_approval` attributes, quotes_count,
 * GET /quotes, revoke, PUT /interaction_policy, source.quote_policy, the `quote` and
 * `quoted_update` notifications,
 * the states a quote shows (revoked, deleted, unauthorized, blocked_account, muted_account), and
 * a home timeline page with quotes in a fixed number of statements.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, eventually, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dave: TestUser;

const NOT_FOUND = 'The post you are trying to quote does not appear to exist.';

beforeAll(async () => {
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
  carol = await createTestUser(roost, 'carol');
  dave = await createTestUser(roost, 'dave');
  expect((await carol.api(`/api/v1/accounts/${alice.account.id}/follow`, { method: 'POST' })).status).toBe(200);
}, 60_000);
afterAll(async () => roost?.close());

const post = (u: TestUser, body: Record<string, unknown>) => u.api('/api/v1/statuses', { method: 'POST', body });

describe('quoting a post', () => {
  it('a public post: accepted at once, the quoted post in full, the fallback link, counted, and a quote notification', async () => {
    const original = (await post(alice, { status: 'quote me' })).body;
    expect(original.quote_approval).toEqual({ automatic: ['public'], manual: [], current_user: 'automatic' });
    expect((await bob.api(`/api/v1/statuses/${original.id}`)).body.quote_approval).toEqual({ automatic: ['public'], manual: [], current_user: 'automatic' });
    expect((await apiRequest(roost, `/api/v1/statuses/${original.id}`)).body.quote_approval.current_user).toBe('denied');

    const q = await post(bob, { status: 'look at this', quoted_status_id: original.id });
    expect(q.status).toBe(200);
    expect(q.body.quote.state).toBe('accepted');
    expect(q.body.quote.quoted_status.id).toBe(original.id);
    expect(q.body.quote.quoted_status.content).toBe('<p>quote me</p>');
    expect(q.body.quote.quoted_status.quote).toBeNull();
    expect(q.body.content).toBe(`<p class="quote-inline">RE: <a href="${original.url}">${original.url}</a></p><p>look at this</p>`);
    expect(q.body.quotes_count).toBe(0);
    expect((await alice.api(`/api/v1/statuses/${original.id}`)).body.quotes_count).toBe(1);

    // The text already links the post: no fallback paragraph.
    const linked = await post(carol, { status: `see ${original.url}`, quoted_status_id: original.id });
    expect(linked.body.content).not.toContain('quote-inline');

    const n = await eventually(async () => {
      const list = (await alice.api('/api/v1/notifications?types[]=quote')).body as { type: string; status: { id: string }; account: { id: string } }[];
      return list.find((x) => x.status.id === q.body.id);
    });
    expect(n.type).toBe('quote');
    expect(n.account.id).toBe(bob.account.id);

    const quotes = await alice.api(`/api/v1/statuses/${original.id}/quotes`);
    expect(quotes.status).toBe(200);
    expect(quotes.body.map((s: { id: string }) => s.id)).toEqual([linked.body.id, q.body.id]);
  });

  it('a quote of a quote shows the inner quote shallow; a reblog of a post quotes the post', async () => {
    const original = (await post(alice, { status: 'first' })).body;
    const q1 = (await post(bob, { status: 'second', quoted_status_id: original.id })).body;
    const q2 = (await post(dave, { status: 'third', quoted_status_id: q1.id })).body;
    expect(q2.quote.quoted_status.id).toBe(q1.id);
    expect(q2.quote.quoted_status.quote).toEqual({ state: 'accepted', quoted_status_id: original.id });

    const reblog = (await dave.api(`/api/v1/statuses/${original.id}/reblog`, { method: 'POST' })).body;
    const q3 = (await post(carol, { status: 'of the reblog', quoted_status_id: reblog.id })).body;
    expect(q3.quote.quoted_status.id).toBe(original.id);
    // A reblog of a quote carries the quote in its inner status.
    const reblogged = (await carol.api(`/api/v1/statuses/${q1.id}/reblog`, { method: 'POST' })).body;
    expect(reblogged.reblog.quote.quoted_status.id).toBe(original.id);
    expect(reblogged.quote_approval.current_user).toBe('denied');
  });

  it('followers and nobody policies; the author quotes their own post whatever its policy', async () => {
    const followers = (await post(alice, { status: 'followers may quote', quote_approval_policy: 'followers' })).body;
    expect(followers.quote_approval).toEqual({ automatic: ['followers'], manual: [], current_user: 'automatic' });
    expect((await bob.api(`/api/v1/statuses/${followers.id}`)).body.quote_approval.current_user).toBe('denied');
    expect((await carol.api(`/api/v1/statuses/${followers.id}`)).body.quote_approval.current_user).toBe('automatic');
    const refused = await post(bob, { status: 'x', quoted_status_id: followers.id });
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ error: NOT_FOUND });
    expect((await post(carol, { status: 'x', quoted_status_id: followers.id })).body.quote.state).toBe('accepted');

    const nobody = (await post(alice, { status: 'nobody', quote_approval_policy: 'nobody' })).body;
    expect(nobody.quote_approval).toEqual({ automatic: [], manual: [], current_user: 'automatic' });
    expect((await post(carol, { status: 'x', quoted_status_id: nobody.id })).status).toBe(404);
    const self = await post(alice, { status: 'me again', quoted_status_id: nobody.id });
    expect(self.body.quote.state).toBe('accepted');

    // The author's default (source[quote_policy]) applies when the status does not say.
    expect((await dave.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { source: { quote_policy: 'nobody' } } })).status).toBe(200);
    expect((await dave.api('/api/v1/accounts/verify_credentials')).body.source.quote_policy).toBe('nobody');
    const byDefault = (await post(dave, { status: 'default policy' })).body;
    expect(byDefault.quote_approval.automatic).toEqual([]);
    expect((await post(bob, { status: 'x', quoted_status_id: byDefault.id })).status).toBe(404);
  });

  it('private and direct posts: nobody else quotes them; a private quote stays private; a private mention must mention the quoted author', async () => {
    const priv = (await post(alice, { status: 'followers only', visibility: 'private' })).body;
    expect(priv.quote_approval).toEqual({ automatic: [], manual: [], current_user: 'automatic' });
    // carol follows alice and sees it, yet may not quote it.
    expect((await carol.api(`/api/v1/statuses/${priv.id}`)).status).toBe(200);
    expect((await post(carol, { status: 'x', quoted_status_id: priv.id })).status).toBe(404);
    expect((await post(bob, { status: 'x', quoted_status_id: priv.id })).status).toBe(404);
    const own = (await post(alice, { status: 'my own', quoted_status_id: priv.id, visibility: 'public' })).body;
    expect(own.visibility).toBe('private');
    expect(own.quote.state).toBe('accepted');

    const direct = (await post(alice, { status: '@bob secret', visibility: 'direct' })).body;
    expect((await post(alice, { status: 'x', quoted_status_id: direct.id })).status).toBe(404);

    const open = (await post(alice, { status: 'open' })).body;
    const dm = await post(bob, { status: '@carol psst', visibility: 'direct', quoted_status_id: open.id });
    expect(dm.status).toBe(422);
    expect(dm.body.details.quoted_status_id[0].error).toBe('ERR_INVALID');
    expect((await post(bob, { status: '@alice psst', visibility: 'direct', quoted_status_id: open.id })).body.quote.state).toBe('accepted');
  });

  it('a scheduled quote keeps quoted_status_id and its policy; one that may not be made is refused at scheduling', async () => {
    const s = (await post(alice, { status: 'for later' })).body;
    const at = new Date(Date.now() + 3 * 3600_000).toISOString();
    const scheduled = await post(bob, { status: 'later quote', quoted_status_id: s.id, quote_approval_policy: 'nobody', scheduled_at: at });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body.params).toMatchObject({ quoted_status_id: s.id, quote_approval_policy: 'nobody' });
    const closed = (await post(alice, { status: 'closed', quote_approval_policy: 'nobody' })).body;
    expect((await post(bob, { status: 'never', quoted_status_id: closed.id, scheduled_at: at })).status).toBe(404);
  });

  it('bad input: a missing status, one nobody may see, a bad id, a bad policy', async () => {
    expect(await post(bob, { status: 'x', quoted_status_id: '99999999999' })).toMatchObject({ status: 404, body: { error: NOT_FOUND } });
    expect(await post(bob, { status: 'x', quoted_status_id: 'abc' })).toMatchObject({ status: 404, body: { error: NOT_FOUND } });
    const bad = await post(bob, { status: 'x', quote_approval_policy: 'everyone' });
    expect(bad.status).toBe(422);
    expect(bad.body.details.quote_approval_policy[0].error).toBe('ERR_INCLUSION');
    const s = (await post(alice, { status: 'policy' })).body;
    expect((await alice.api(`/api/v1/statuses/${s.id}/interaction_policy`, { method: 'PUT', body: { quote_approval_policy: 'x' } })).status).toBe(422);
    expect((await bob.api(`/api/v1/statuses/${s.id}/interaction_policy`, { method: 'PUT', body: { quote_approval_policy: 'nobody' } })).status).toBe(404);
    expect((await bob.api(`/api/v1/statuses/${s.id}/quotes/${s.id}/revoke`, { method: 'POST' })).status).toBe(404);
    // Nothing was written by the refused posts.
    const [{ n }] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from statuses where account_id = $1 and text = 'x'`, [bob.account.id]);
    expect(n).toBe(0);
  });
});

describe('the quoted author', () => {
  it('changes the policy of a post (interaction_policy); past quotes stay', async () => {
    const s = (await post(alice, { status: 'changing' })).body;
    const before = (await post(bob, { status: 'early', quoted_status_id: s.id })).body;
    const changed = await alice.api(`/api/v1/statuses/${s.id}/interaction_policy`, { method: 'PUT', body: { quote_approval_policy: 'nobody' } });
    expect(changed.status).toBe(200);
    expect(changed.body.quote_approval.automatic).toEqual([]);
    expect((await post(carol, { status: 'late', quoted_status_id: s.id })).status).toBe(404);
    expect((await bob.api(`/api/v1/statuses/${before.id}`)).body.quote.state).toBe('accepted');
    // An edit may change it too (and a bad one changes nothing, the text included).
    const bad = await alice.api(`/api/v1/statuses/${s.id}`, { method: 'PUT', body: { status: 'edited', quote_approval_policy: 'all' } });
    expect(bad.status).toBe(422);
    expect((await alice.api(`/api/v1/statuses/${s.id}`)).body.content).toBe('<p>changing</p>');
    const edited = await alice.api(`/api/v1/statuses/${s.id}`, { method: 'PUT', body: { status: 'edited', quote_approval_policy: 'followers' } });
    expect(edited.status).toBe(200);
    expect(edited.body.quote_approval.automatic).toEqual(['followers']);
    expect(edited.body.content).toBe('<p>edited</p>');
  });

  it('edits the quoted post: the quoting authors get quoted_update about their quote', async () => {
    const s = (await post(alice, { status: 'before the edit' })).body;
    const q = (await post(bob, { status: 'quoting before', quoted_status_id: s.id })).body;
    expect((await alice.api(`/api/v1/statuses/${s.id}`, { method: 'PUT', body: { status: 'after the edit' } })).status).toBe(200);
    const n = await eventually(async () =>
      ((await bob.api('/api/v1/notifications?types[]=quoted_update')).body as { type: string; status: { id: string; quote: { quoted_status: { content: string } } }; account: { id: string } }[]).find((x) => x.status.id === q.id),
    );
    expect(n.account.id).toBe(alice.account.id);
    expect(n.status.quote.quoted_status.content).toBe('<p>after the edit</p>');
  });

  it('revokes a quote: revoked, no quoted status, uncounted; only the quoted author can', async () => {
    const s = (await post(alice, { status: 'revocable' })).body;
    const q = (await post(bob, { status: 'quoting', quoted_status_id: s.id })).body;
    expect((await bob.api(`/api/v1/statuses/${s.id}/quotes/${q.id}/revoke`, { method: 'POST' })).status).toBe(404);
    const revoked = await alice.api(`/api/v1/statuses/${s.id}/quotes/${q.id}/revoke`, { method: 'POST' });
    expect(revoked.status).toBe(200);
    expect(revoked.body.id).toBe(q.id);
    expect(revoked.body.quote).toEqual({ state: 'revoked', quoted_status: null });
    expect((await bob.api(`/api/v1/statuses/${q.id}`)).body.quote).toEqual({ state: 'revoked', quoted_status: null });
    expect((await alice.api(`/api/v1/statuses/${s.id}`)).body.quotes_count).toBe(0);
    expect((await alice.api(`/api/v1/statuses/${s.id}/quotes`)).body).toEqual([]);
  });

  it('deletes the quoted post: deleted; a viewer who blocks or mutes its author, or may not see it, sees why', async () => {
    const s = (await post(alice, { status: 'going away' })).body;
    const q = (await post(bob, { status: 'quoting it', quoted_status_id: s.id })).body;
    await dave.api(`/api/v1/accounts/${alice.account.id}/mute`, { method: 'POST' });
    const muted = (await dave.api(`/api/v1/statuses/${q.id}`)).body.quote;
    expect(muted.state).toBe('muted_account');
    expect(muted.quoted_status.id).toBe(s.id);
    await dave.api(`/api/v1/accounts/${alice.account.id}/unmute`, { method: 'POST' });
    await carol.api(`/api/v1/accounts/${alice.account.id}/block`, { method: 'POST' });
    expect((await carol.api(`/api/v1/statuses/${q.id}`)).body.quote.state).toBe('blocked_account');
    await carol.api(`/api/v1/accounts/${alice.account.id}/unblock`, { method: 'POST' });
    await alice.api(`/api/v1/accounts/${dave.account.id}/block`, { method: 'POST' });
    expect((await dave.api(`/api/v1/statuses/${q.id}`)).body.quote).toEqual({ state: 'unauthorized', quoted_status: null });
    await alice.api(`/api/v1/accounts/${dave.account.id}/unblock`, { method: 'POST' });

    expect((await alice.api(`/api/v1/statuses/${s.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await bob.api(`/api/v1/statuses/${q.id}`)).body.quote).toEqual({ state: 'deleted', quoted_status: null });
  });
});

describe('a home timeline page with quotes', () => {
  it('costs the same statements for 5 and 20 statuses', async () => {
    const reader = await createTestUser(roost, 'reader');
    const poster = await createTestUser(roost, 'poster');
    expect((await reader.api(`/api/v1/accounts/${poster.account.id}/follow`, { method: 'POST' })).status).toBe(200);
    let last: string | null = null;
    for (let i = 0; i < 22; i++) {
      const target: string = i % 2 === 0 || !last ? (await post(alice, { status: `quotable ${i}` })).body.id : last;
      const s = (await post(poster, { status: `quote ${i}`, quoted_status_id: target })).body;
      last = s.id;
    }
    await eventually(async () => ((await reader.api('/api/v1/timelines/home?limit=20')).body.length >= 20 ? true : null));
    let five: { status: number; body: { quote: { state: string; quoted_status: { quote: unknown } | null } | null }[] } | undefined;
    let twenty: typeof five;
    await reader.api('/api/v1/timelines/home?limit=1');
    const q5 = await capturedStatements(roost, async () => (five = await reader.api('/api/v1/timelines/home?limit=5')));
    const q20 = await capturedStatements(roost, async () => (twenty = await reader.api('/api/v1/timelines/home?limit=20')));
    expect([five!.status, five!.body.length, twenty!.status, twenty!.body.length]).toEqual([200, 5, 200, 20]);
    expect(twenty!.body.every((s) => s.quote?.state === 'accepted' && s.quote.quoted_status)).toBe(true);
    // Half of them quote a quote: its quote is shallow.
    expect(twenty!.body.filter((s) => (s.quote!.quoted_status!.quote as { quoted_status_id?: string } | null)?.quoted_status_id).length).toBeGreaterThanOrEqual(9);
    expect(q20).toEqual(q5);
    // As a home page without quotes (test/timelines/query-count.test.ts): the page of ids, the
    // statuses with their quotes and the posts they quote, their authors.
    expect(q5.length).toBe(3);
  });
});

describe('the quotes of a post', () => {
  it('are listed in the same statements for 2 and for 10', async () => {
    const quoter = await createTestUser(roost, 'quoter');
    const target = (await post(alice, { status: 'quote me, often' })).body.id as string;
    for (let i = 0; i < 10; i++) expect((await post(quoter, { status: `quoting ${i}`, quoted_status_id: target })).status).toBe(200);
    await alice.api(`/api/v1/statuses/${target}/quotes?limit=1`);
    let two: { status: number; body: unknown[] } | undefined;
    let ten: typeof two;
    const q2 = await capturedStatements(roost, async () => (two = await alice.api(`/api/v1/statuses/${target}/quotes?limit=2`)));
    const q10 = await capturedStatements(roost, async () => (ten = await alice.api(`/api/v1/statuses/${target}/quotes?limit=10`)));
    expect([two!.status, two!.body.length, ten!.status, ten!.body.length]).toEqual([200, 2, 200, 10]);
    expect(q10).toEqual(q2);
  });
});
