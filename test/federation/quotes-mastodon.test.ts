/**
 * Quote posts with a fake Mastodon 4.5 server (real HTTP, real signatures), both ways, with the
 * activities as Mastodon sends them (test/fixtures/activitypub/mastodon/):
 *   in:  a Note quoting a third post with a QuoteAuthorization (fetched, checked: accepted; its
 *        Delete revokes); a legacy quote (`_misskey_quote`/`quoteUri` only) keeps its link and is
 *        shown as Mastodon 4.5 shows it (no quote); a `quote` without a stamp is pending; a
 *        QuoteRequest for a local post is answered with an Accept and a stamp Roost serves, or a
 *        Reject when the policy refuses;
 *   out: a local quote of a Mastodon post sends the Note with `quote`, `quoteUri`, `_misskey_quote`
 *        and `interactionPolicy`, and a QuoteRequest; Mastodon's Accept makes it accepted and the
 *        Note goes again with `quoteAuthorization`.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { startFakeSoftware, type FakeSoftware } from '../helpers/fake-software.ts';
import type { Placeholders } from '../fixtures/activitypub/load.ts';

let roost: TestRoost;
let alice: TestUser;
let peer: FakeSoftware;
let values: Placeholders;
let mona: string;

const AP = { accept: 'application/activity+json' };

beforeAll(async () => {
  [roost, peer] = await Promise.all([startTestRoost(), startFakeSoftware('mastodon')]);
  alice = await createTestUser(roost, 'alice');
  values = {
    local: roost.url,
    local_host: new URL(roost.url).host,
    local_actor: roost.at('/users/alice'),
    local_actor_id: alice.account.id,
    local_note: roost.at('/nothing'),
    local_poll: roost.at('/nothing'),
    now: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    later: new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z'),
  };
  mona = peer.fixture('actor', values).id as string;
  // mona follows alice: alice's posts go to the peer, and mona's concern this server.
  expect((await peer.deliver(roost.at('/users/alice/inbox'), 'follow', values)).status).toBe(202);
  await eventually(async () => (await roost.services.db.sql.query(`select 1 from follows f join accounts a on a.id = f.account_id where a.uri = $1 and f.state = 'accepted'`, [mona])).length > 0, 20_000, 'the follow');
  // The third account and its post, as the peer serves them.
  peer.serve('quoted-actor', values);
  peer.serve('note-quoted', values);
  peer.serve('quote-authorization', values);
}, 120_000);
afterAll(async () => {
  await Promise.all([roost?.close(), peer?.close()]);
});

async function deliver(activity: Record<string, unknown>) {
  const res = await peer.deliverText(roost.at('/users/alice/inbox'), JSON.stringify(activity));
  expect(res.status, await res.clone().text()).toBe(202);
}
const statusIdOf = (uri: string) =>
  eventually(async () => (await roost.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [uri]))[0]?.id, 20_000, `${uri} to arrive`);
const quoteRow = async (uri: string) =>
  (await roost.services.db.sql.query<{ state: string; legacy: boolean; approval_uri: string | null; quoted: string | null }>(
    `select q.state, q.legacy, q.approval_uri, o.uri as quoted from quotes q join statuses s on s.id = q.status_id left join statuses o on o.id = q.quoted_status_id where s.uri = $1`,
    [uri],
  ))[0];
/** The activity of `type` the peer received that `match` picks (waits for it). */
async function received(type: string, match: (b: Record<string, any>) => boolean): Promise<Record<string, any>> {
  const find = () => peer.posts.map((p) => p.body as Record<string, any>).find((b) => b.type === type && match(b));
  return eventually(async () => find() ?? null, 20_000, type);
}
/** Mastodon's create-note fixture (it quotes the third account's post with a stamp), under another id, `edit` applied to its Note. */
function createNote(id: string, edit: (note: Record<string, any>) => void = () => {}): Record<string, any> {
  const c = peer.fixture('create-note', values);
  const uri = `${mona}/statuses/${id}`;
  c.id = `${uri}/activity`;
  c.object.id = uri;
  c.object.url = uri;
  c.object.atomUri = uri;
  delete c.object.replies;
  delete c.object.attachment;
  edit(c.object);
  return c;
}

describe('quotes from Mastodon', () => {
  it('a quote of a third post with a QuoteAuthorization: fetched and checked, accepted; the Delete of the stamp revokes it', async () => {
    const activity = createNote('113000000000000001');
    await deliver(activity);
    const id = await statusIdOf(activity.object.id);
    const row = await eventually(async () => ((await quoteRow(activity.object.id))?.state === 'accepted' ? quoteRow(activity.object.id) : null));
    expect(row).toEqual({ state: 'accepted', legacy: false, approval_uri: `${peer.base}/users/quoted/quote_authorizations/1`, quoted: `${peer.base}/users/quoted/statuses/112000000000000001` });
    const s = (await alice.api(`/api/v1/statuses/${id}`)).body;
    expect(s.quote.state).toBe('accepted');
    expect(s.quote.quoted_status.content).toBe('<p>the post being quoted</p>');
    expect(s.quote.quoted_status.account.acct).toBe(`quoted@${peer.values.remote_hostname}:${new URL(peer.base).port}`);
    expect(s.quote_approval).toEqual({ automatic: ['public'], manual: [], current_user: 'automatic' });
    // Its RE: link stays once in the content (apps without quotes show it).
    expect(s.content.split(`href="${peer.base}/users/quoted/statuses/112000000000000001"`)).toHaveLength(2);
    expect((await alice.api(`/api/v1/statuses/${s.quote.quoted_status.id}`)).body.quotes_count).toBe(1);

    expect((await peer.deliverText(roost.at('/inbox'), JSON.stringify(peer.fixture('delete-quote-authorization', values)))).status).toBe(202);
    await eventually(async () => ((await quoteRow(activity.object.id))?.state === 'revoked' ? true : null));
    expect((await alice.api(`/api/v1/statuses/${id}`)).body.quote).toEqual({ state: 'revoked', quoted_status: null });
    await settled(roost);
  });

  it('a stamp that does not name this post leaves the quote pending; a legacy quote keeps its link and shows no quote, as Mastodon 4.5', async () => {
    // The stamp served names 113…001, not this one.
    const pending = createNote('113000000000000002');
    await deliver(pending);
    const pendingId = await statusIdOf(pending.object.id);
    expect(await quoteRow(pending.object.id)).toMatchObject({ state: 'pending', legacy: false, quoted: `${peer.base}/users/quoted/statuses/112000000000000001` });
    expect((await alice.api(`/api/v1/statuses/${pendingId}`)).body.quote).toEqual({ state: 'pending', quoted_status: null });

    const legacy = createNote('113000000000000003', (n) => {
      delete n.quote;
      delete n.quoteAuthorization;
    });
    await deliver(legacy);
    const legacyId = await statusIdOf(legacy.object.id);
    expect(await quoteRow(legacy.object.id)).toMatchObject({ state: 'pending', legacy: true, quoted: `${peer.base}/users/quoted/statuses/112000000000000001` });
    const shown = (await alice.api(`/api/v1/statuses/${legacyId}`)).body;
    expect(shown.quote).toBeNull();
    expect(shown.content).toContain(`RE: <a href="${peer.base}/users/quoted/statuses/112000000000000001"`);
    await settled(roost);
  });

  it('a QuoteRequest for a local post: stored, accepted with a stamp Roost serves (Accept with `result`); the quoted author is notified', async () => {
    const original = (await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'quote me, Mastodon' } })).body;
    const v = { ...values, local_note: original.uri, remote_request_id: '1' };
    expect((await peer.deliver(roost.at('/users/alice/inbox'), 'quote-request', v)).status).toBe(202);
    const request = peer.fixture('quote-request', v);
    const accept = await received('Accept', (b) => (b.object?.id ?? b.object) === request.id);
    expect(accept.actor).toBe(roost.at('/users/alice'));
    expect(accept.object).toMatchObject({ id: request.id, type: 'QuoteRequest', actor: mona, object: original.uri, instrument: request.instrument.id });
    expect(accept.result).toMatch(new RegExp(`^${roost.at('/users/alice/quote_authorizations/')}\\d+$`));
    const stamp = (await (await fetch(accept.result, { headers: AP })).json()) as Record<string, unknown>;
    expect(stamp).toMatchObject({ id: accept.result, type: 'QuoteAuthorization', attributedTo: roost.at('/users/alice'), interactingObject: request.instrument.id, interactionTarget: original.uri });

    const quotingId = await statusIdOf(request.instrument.id);
    const s = (await alice.api(`/api/v1/statuses/${quotingId}`)).body;
    expect(s.quote.state).toBe('accepted');
    expect(s.quote.quoted_status.id).toBe(original.id);
    const n = await eventually(async () => ((await alice.api('/api/v1/notifications?types[]=quote')).body as { status: { id: string } }[]).find((x) => x.status.id === quotingId));
    expect(n).toBeTruthy();
    await settled(roost);
  });

  it('a quote (no stamp, no request) of a local post that mentions the quoter: accepted, as FEP-044f lets it be', async () => {
    const host = new URL(peer.base).host;
    const original = (await alice.api('/api/v1/statuses', { method: 'POST', body: { status: `@mona@${host} what do you think?`, quote_approval_policy: 'nobody' } })).body;
    expect(original.mentions.map((m: { url: string }) => m.url)).toEqual([`${peer.base}/@mona`]);
    const note = peer.fixture('quote-request', { ...values, local_note: original.uri, remote_request_id: '3' }).instrument;
    note.id = `${mona}/statuses/115000000000000003`;
    note.url = note.id;
    delete note._misskey_quote;
    delete note.quoteUri;
    const create = { '@context': peer.fixture('quote-request', { ...values, local_note: original.uri, remote_request_id: '3' })['@context'], id: `${note.id}/activity`, type: 'Create', actor: mona, to: note.to, cc: note.cc, object: note };
    await deliver(create);
    const id = await statusIdOf(note.id);
    expect(await quoteRow(note.id)).toMatchObject({ state: 'accepted', legacy: false, quoted: original.uri });
    expect((await alice.api(`/api/v1/statuses/${id}`)).body.quote.quoted_status.id).toBe(original.id);
    await settled(roost);
  });

  it('a QuoteRequest the policy refuses: Reject, and nothing accepted', async () => {
    const original = (await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'not for quoting', quote_approval_policy: 'nobody' } })).body;
    const v = { ...values, local_note: original.uri, remote_request_id: '2' };
    // Another status id for the quoting post (the first request's is stored already).
    const request = peer.fixture('quote-request', v);
    request.instrument.id = `${mona}/statuses/115000000000000002`;
    request.instrument.url = request.instrument.id;
    expect((await peer.deliverText(roost.at('/users/alice/inbox'), JSON.stringify(request))).status).toBe(202);
    const reject = await received('Reject', (b) => (b.object?.id ?? b.object) === request.id);
    expect(reject.actor).toBe(roost.at('/users/alice'));
    expect(reject.object).toMatchObject({ type: 'QuoteRequest', actor: mona, object: original.uri });
    expect((await quoteRow(request.instrument.id))?.state).toBe('rejected');
    expect((await alice.api(`/api/v1/statuses/${original.id}`)).body.quotes_count).toBe(0);
    await settled(roost);
  });
});

describe('quotes to Mastodon', () => {
  it('a local quote of a Mastodon post: the Note with quote, quoteUri, _misskey_quote and interactionPolicy, a QuoteRequest; the Accept makes it accepted and the Note goes again with the stamp', async () => {
    expect((await peer.deliver(roost.at('/users/alice/inbox'), 'create-quotable', values)).status).toBe(202);
    const quotable = peer.fixture('create-quotable', values).object.id as string;
    const quotableId = await statusIdOf(quotable);
    expect((await alice.api(`/api/v1/statuses/${quotableId}`)).body.quote_approval.current_user).toBe('automatic');

    const quoting = (await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'Roost quotes Mastodon', quoted_status_id: quotableId } })).body;
    expect(quoting.quote.state).toBe('pending');
    const create = await received('Create', (b) => b.object?.id === quoting.uri);
    expect([create.object.quote, create.object.quoteUri, create.object._misskey_quote]).toEqual([quotable, quotable, quotable]);
    expect(create.object.quoteAuthorization).toBeUndefined();
    expect(create.object.interactionPolicy).toEqual({ canQuote: { automaticApproval: 'as:Public' } });
    // Mastodon's context terms, as the peer reads plain JSON.
    const context = JSON.stringify(create['@context']);
    expect(context).toContain('"quote":{"@id":"https://w3id.org/fep/044f#quote","@type":"@id"}');
    expect(context).toContain('"_misskey_quote":"misskey:_misskey_quote"');
    const request = await received('QuoteRequest', (b) => b.object === quotable);
    expect(request.actor).toBe(roost.at('/users/alice'));
    expect(request.instrument.id).toBe(quoting.uri);
    expect(request.instrument.quote).toBe(quotable);
    expect(peer.posts.find((p) => (p.body as { type: string }).type === 'QuoteRequest')!.path).toBe('/users/mona/inbox');

    const v = { ...values, local_note: quoting.uri, local_quote_request: request.id as string };
    expect((await peer.deliver(roost.at('/users/alice/inbox'), 'accept-quote-request', v)).status).toBe(202);
    const stamp = `${mona}/quote_authorizations/7`;
    await eventually(async () => ((await quoteRow(quoting.uri))?.state === 'accepted' ? true : null));
    expect((await alice.api(`/api/v1/statuses/${quoting.id}`)).body.quote.quoted_status.uri).toBe(quotable);
    const update = await received('Update', (b) => b.object?.id === quoting.uri);
    expect(update.object.quoteAuthorization).toBe(stamp);
    expect(update.object.quote).toBe(quotable);
    // The Note at its URI says the same.
    const served = (await (await fetch(quoting.uri, { headers: AP })).json()) as Record<string, unknown>;
    expect(served.quoteAuthorization).toBe(stamp);
    await settled(roost);
  });
});
