/**
 * Statuses through the real server: post → get → context → favourite/reblog counts → delete
 * (answering the source text); Idempotency-Key; limits; the account's statuses counters; the
 * application shown to the author only; bookmarks and pins.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';
import { unknownKeys, validate } from '../serializers/openapi-check.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
beforeAll(async () => {
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
}, 60_000);
afterAll(async () => roost?.close());

const post = (u: TestUser, body: Record<string, unknown>, headers: Record<string, string> = {}) => u.api('/api/v1/statuses', { method: 'POST', body, headers });

describe('a status from post to delete', () => {
  it('posts, reads, threads, counts and deletes', async () => {
    const created = await post(alice, { status: 'Hello @bob, see https://example.com/a/very/long/path/indeed #Roost', spoiler_text: 'cw', language: 'en' });
    expect(created.status).toBe(200);
    const s = created.body;
    expect(s).toMatchObject({
      visibility: 'public',
      sensitive: true,
      spoiler_text: 'cw',
      language: 'en',
      media_attachments: [],
      emojis: [],
      card: null,
      poll: null,
      reblog: null,
      in_reply_to_id: null,
      in_reply_to_account_id: null,
      edited_at: null,
      replies_count: 0,
      reblogs_count: 0,
      favourites_count: 0,
      favourited: false,
      reblogged: false,
      bookmarked: false,
      muted: false,
      pinned: false,
      filtered: [],
      tags: [{ name: 'roost', url: `${roost.services.config.publicUrl}/tags/roost` }],
      mentions: [{ id: bob.account.id, username: 'bob', acct: 'bob', url: expect.stringContaining('bob') }],
    });
    expect(typeof s.id).toBe('string');
    expect(s.account.id).toBe(alice.account.id);
    expect(s.uri).toBe(`${alice.account.uri}/statuses/${s.id}`);
    expect(s.url).toBe(`${roost.services.config.publicUrl}/@alice/${s.id}`);
    expect(s.content).toMatch(/^<p>Hello <span class="h-card" translate="no"><a href="[^"]+" class="u-url mention">@<span>bob<\/span><\/a><\/span>, see <a href="https:\/\/example.com\/a\/very\/long\/path\/indeed"/);
    expect(s.content).toContain('class="mention hashtag" rel="tag">#<span>Roost</span></a></p>');
    expect('text' in s).toBe(false);
    expect('application' in s).toBe(false); // this token has no application

    // Read by anybody, signed in or not.
    const anon = await apiRequest(roost, `/api/v1/statuses/${s.id}`);
    expect(anon.status).toBe(200);
    expect(anon.body.content).toBe(s.content);
    expect('favourited' in anon.body).toBe(false);
    const many = await bob.api(`/api/v1/statuses?id[]=${s.id}&id[]=999999&id[]=${s.id}`);
    expect(many.body.map((x: { id: string }) => x.id)).toEqual([s.id]);

    // A reply, and a reply to the reply: the thread around the middle one.
    const reply = (await post(bob, { status: '@alice thanks', in_reply_to_id: s.id })).body;
    expect(reply).toMatchObject({ in_reply_to_id: s.id, in_reply_to_account_id: alice.account.id });
    const reply2 = (await post(alice, { status: 'you are welcome', in_reply_to_id: reply.id })).body;
    const ctx = await apiRequest(roost, `/api/v1/statuses/${reply.id}/context`);
    expect(ctx.status).toBe(200);
    expect(ctx.body.ancestors.map((x: { id: string }) => x.id)).toEqual([s.id]);
    expect(ctx.body.descendants.map((x: { id: string }) => x.id)).toEqual([reply2.id]);
    expect((await apiRequest(roost, `/api/v1/statuses/${s.id}`)).body.replies_count).toBe(1);

    // Favourite and reblog move the counters and the viewer's flags; twice counts once.
    for (let i = 0; i < 2; i++) expect((await bob.api(`/api/v1/statuses/${s.id}/favourite`, { method: 'POST' })).body).toMatchObject({ favourited: true, favourites_count: 1 });
    const boost = await bob.api(`/api/v1/statuses/${s.id}/reblog`, { method: 'POST', body: { visibility: 'unlisted' } });
    expect(boost.status).toBe(200);
    expect(boost.body).toMatchObject({ visibility: 'unlisted', reblogged: true, content: '', reblog: { id: s.id, reblogs_count: 1, reblogged: true, favourited: true } });
    expect((await bob.api(`/api/v1/statuses/${s.id}/reblog`, { method: 'POST' })).body.id).toBe(boost.body.id);
    const fav = await apiRequest(roost, `/api/v1/statuses/${s.id}/favourited_by`);
    expect(fav.body.map((a: { id: string }) => a.id)).toEqual([bob.account.id]);
    const reb = await apiRequest(roost, `/api/v1/statuses/${s.id}/reblogged_by`);
    expect(reb.body.map((a: { id: string }) => a.id)).toEqual([bob.account.id]);
    const bobView = (await bob.api(`/api/v1/statuses/${s.id}`)).body;
    expect(bobView).toMatchObject({ favourited: true, reblogged: true, favourites_count: 1, reblogs_count: 1 });
    expect('pinned' in bobView).toBe(false); // not bob's to pin

    const unfav = await bob.api(`/api/v1/statuses/${s.id}/unfavourite`, { method: 'POST' });
    expect(unfav.body).toMatchObject({ favourited: false, favourites_count: 0 });
    const unreb = await bob.api(`/api/v1/statuses/${s.id}/unreblog`, { method: 'POST' });
    expect(unreb.body).toMatchObject({ id: s.id, reblogged: false, reblogs_count: 0 });
    expect((await bob.api(`/api/v1/statuses/${boost.body.id}`)).status).toBe(404);
    // A reblog can also go by DELETE, as on Mastodon.
    const again = (await bob.api(`/api/v1/statuses/${s.id}/reblog`, { method: 'POST' })).body;
    const undone = await bob.api(`/api/v1/statuses/${again.id}`, { method: 'DELETE' });
    expect([undone.status, undone.body.reblog.id]).toEqual([200, s.id]);
    expect((await apiRequest(roost, `/api/v1/statuses/${s.id}`)).body.reblogs_count).toBe(0);

    // Source, then delete: the answer carries the source text, not the HTML.
    const source = await alice.api(`/api/v1/statuses/${s.id}/source`);
    expect(source.body).toEqual({ id: s.id, text: 'Hello @bob, see https://example.com/a/very/long/path/indeed #Roost', spoiler_text: 'cw' });
    expect((await bob.api(`/api/v1/statuses/${s.id}`, { method: 'DELETE' })).status).toBe(404);
    const deleted = await alice.api(`/api/v1/statuses/${s.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.text).toBe('Hello @bob, see https://example.com/a/very/long/path/indeed #Roost');
    expect('content' in deleted.body).toBe(false);
    expect((await apiRequest(roost, `/api/v1/statuses/${s.id}`)).status).toBe(404);
    expect((await alice.api(`/api/v1/statuses/${s.id}`, { method: 'DELETE' })).status).toBe(404);

    // Every fact went to the outbox, from the client.
    const events = await roost.services.db.sql.query<{ type: string; origin: string }>(
      `select type, origin from outbox_events where actor_kind = 'status' order by id`,
    );
    expect(events.map((e) => e.type)).toEqual([
      'status.created', 'status.created', 'status.created', 'status.favourited', 'status.reblogged', 'status.unfavourited', 'status.unreblogged',
      'status.reblogged', 'status.unreblogged', 'status.deleted',
    ]);
    expect(new Set(events.map((e) => e.origin))).toEqual(new Set(['client']));
    // A local status's own facts say so (the federation effect skips only `local: false` ones).
    const flags = await roost.services.db.sql.query<{ type: string; local: string | null }>(
      `select type, payload->>'local' as local from outbox_events where actor_kind = 'status' and type in ('status.created', 'status.deleted') order by id`,
    );
    expect(flags.map((f) => `${f.type} ${f.local}`)).toEqual(['status.created true', 'status.created true', 'status.created true', 'status.deleted true']);
  });

  it('moves statuses_count and last_status_at of the account', async () => {
    const carol = await createTestUser(roost, 'carol');
    const before = (await apiRequest(roost, `/api/v1/accounts/${carol.account.id}`)).body;
    expect([before.statuses_count, before.last_status_at]).toEqual([0, null]);
    const a = (await post(carol, { status: 'one' })).body;
    await post(carol, { status: 'two' });
    const mid = (await apiRequest(roost, `/api/v1/accounts/${carol.account.id}`)).body;
    expect(mid.statuses_count).toBe(2);
    expect(mid.last_status_at).toBe(roost.services.clock.now().toISOString().slice(0, 10));
    await carol.api(`/api/v1/statuses/${a.id}`, { method: 'DELETE' });
    expect((await apiRequest(roost, `/api/v1/accounts/${carol.account.id}`)).body.statuses_count).toBe(1);
  });
});

describe('the Status entity', () => {
  it("matches Mastodon's OpenAPI Status schema: own, someone else's, a reblog, signed out", async () => {
    const app = await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Schema', website: 'https://app.example', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' } });
    const [row] = await roost.services.db.sql.query<{ id: string }>(`select id::text from oauth_applications where client_id = $1`, [app.body.client_id]);
    const { token } = await issueAccessToken(roost.services, { applicationId: row!.id, userId: alice.user.id, scopes: ['read', 'write'] });
    const own = await apiRequest(roost, '/api/v1/statuses', { token, body: { status: 'schema @bob #check https://example.com', spoiler_text: 'cw', language: 'en' } });
    expect(own.body.application).toEqual({ name: 'Schema', website: 'https://app.example' });
    const reply = (await post(bob, { status: '@alice ok', in_reply_to_id: own.body.id })).body;
    const boost = (await bob.api(`/api/v1/statuses/${own.body.id}/reblog`, { method: 'POST' })).body;
    const anon = (await apiRequest(roost, `/api/v1/statuses/${reply.id}`)).body;
    for (const s of [own.body, reply, boost, anon]) {
      expect(validate('Status', s)).toEqual([]);
      expect(unknownKeys('Status', s)).toEqual([]);
    }
  });
});

describe('posting rules', () => {
  it('counts characters as Mastodon: 500 pass, 501 fail, a URL counts 23', async () => {
    expect((await post(alice, { status: 'a'.repeat(500) })).status).toBe(200);
    const tooLong = await post(alice, { status: 'a'.repeat(501) });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.error).toBe('Validation failed: Text character limit of 500 exceeded');
    expect(tooLong.body.details.text[0].error).toBe('ERR_TOO_LONG');
    // 476 + 1 space + a 100-character URL counted as 23 = 500.
    const url = `https://example.com/${'x'.repeat(80)}`;
    expect((await post(alice, { status: `${'a'.repeat(476)} ${url}` })).status).toBe(200);
    expect((await post(alice, { status: `${'a'.repeat(477)} ${url}` })).status).toBe(422);
    const blank = await post(alice, { status: '   ' });
    expect([blank.status, blank.body.error]).toEqual([422, "Validation failed: Text can't be blank"]);
    expect((await post(alice, { status: 'x', visibility: 'everyone' })).status).toBe(422);
    const orphan = await post(alice, { status: 'x', in_reply_to_id: '12345' });
    expect([orphan.status, orphan.body.error]).toEqual([404, 'The post you are trying to reply to does not appear to exist.']);
  });

  it('takes the default visibility from the posting:default setting', async () => {
    const dora = await createTestUser(roost, 'dora');
    await dora.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { source: { privacy: 'unlisted' } } });
    expect((await post(dora, { status: 'quiet' })).body.visibility).toBe('unlisted');
    expect((await post(dora, { status: 'loud', visibility: 'public' })).body.visibility).toBe('public');
  });

  it('takes the author\'s default posting language when none is given (Mastodon), else their locale\'s', async () => {
    const erin = await createTestUser(roost, 'erin');
    expect((await post(erin, { status: 'no language anywhere' })).body.language).toBe(null);
    // The locale chosen at sign-up (pt-BR): its language.
    await roost.services.db.sql.query(`update users set locale = 'pt-BR' where id = $1`, [erin.user.id]);
    expect((await post(erin, { status: 'olá' })).body.language).toBe('pt');
    const set = await erin.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { source: { language: 'fr' } } });
    expect(set.body.source.language).toBe('fr');
    const plain = await post(erin, { status: 'bonjour' });
    expect(plain.body.language).toBe('fr');
    expect((await erin.api(`/api/v1/statuses/${plain.body.id}`)).body.language).toBe('fr');
    expect((await post(erin, { status: 'hallo', language: 'de' })).body.language).toBe('de');
    expect((await post(erin, { status: 'blank', language: '' })).body.language).toBe('fr');
  });

  it('translate answers Mastodon\'s 503 without a translation backend (403 private, 404 unseen)', async () => {
    const pub = (await post(alice, { status: 'hola mundo', language: 'es' })).body;
    const res = await bob.api(`/api/v1/statuses/${pub.id}/translate`, { method: 'POST', body: { lang: 'en' } });
    expect([res.status, res.body]).toEqual([503, { error: 'Service Unavailable' }]);
    const mine = await bob.api(`/api/v1/statuses/${(await post(bob, { status: 'private', visibility: 'private' })).body.id}/translate`, { method: 'POST' });
    expect([mine.status, mine.body]).toEqual([403, { error: 'This action is not allowed' }]);
    const hidden = (await post(alice, { status: 'followers only', visibility: 'private' })).body;
    expect((await bob.api(`/api/v1/statuses/${hidden.id}/translate`, { method: 'POST' })).body).toEqual({ error: 'Record not found' });
    expect((await apiRequest(roost, `/api/v1/statuses/${pub.id}/translate`, { method: 'POST' })).status).toBe(401);
  });

  it('gives the same status for the same Idempotency-Key within an hour', async () => {
    const a = await post(alice, { status: 'once' }, { 'idempotency-key': 'k1' });
    const b = await post(alice, { status: 'once' }, { 'idempotency-key': 'k1' });
    const c = await post(bob, { status: 'once' }, { 'idempotency-key': 'k1' });
    expect(b.body.id).toBe(a.body.id);
    expect(c.body.id).not.toBe(a.body.id);
    const [{ n }] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from statuses where text = 'once'`);
    expect(n).toBe(2);
    // Sent at once, several requests with one key still make one status.
    const racing = await Promise.all([1, 2, 3].map(() => post(alice, { status: 'racing' }, { 'idempotency-key': 'k2' })));
    expect(racing.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(racing.map((r) => r.body.id)).size).toBe(1);
    const [{ m }] = await roost.services.db.sql.query<{ m: number }>(`select count(*)::int as m from statuses where text = 'racing'`);
    expect(m).toBe(1);
    // An hour later the key is free again.
    await roost.services.db.sql.query(`update status_idempotency_keys set created_at = created_at - interval '61 minutes'`);
    const d = await post(alice, { status: 'once' }, { 'idempotency-key': 'k1' });
    expect(d.body.id).not.toBe(a.body.id);
  });

  it('shows the application to the author only, website null when none', async () => {
    const app = await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Tooter', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' } });
    const [row] = await roost.services.db.sql.query<{ id: string }>(`select id::text from oauth_applications where client_id = $1`, [app.body.client_id]);
    const { token } = await issueAccessToken(roost.services, { applicationId: row!.id, userId: alice.user.id, scopes: ['read', 'write'] });
    const s = await apiRequest(roost, '/api/v1/statuses', { token, body: { status: 'from an app' } });
    expect(s.body.application).toEqual({ name: 'Tooter', website: null });
    expect('application' in (await bob.api(`/api/v1/statuses/${s.body.id}`)).body).toBe(false);
    expect((await alice.api(`/api/v1/statuses/${s.body.id}`)).body.application).toEqual({ name: 'Tooter', website: null });
  });

  it('reblogged_by lists public and unlisted reblogs, not followers-only ones (Mastodon)', async () => {
    const s = (await post(alice, { status: 'boost me' })).body;
    const [pub, unl, priv] = await Promise.all(['rb_pub', 'rb_unl', 'rb_priv'].map((n) => createTestUser(roost, n)));
    for (const [u, visibility] of [[pub!, 'public'], [unl!, 'unlisted'], [priv!, 'private']] as const) {
      const r = await u.api(`/api/v1/statuses/${s.id}/reblog`, { method: 'POST', body: { visibility } });
      expect([r.status, r.body.visibility]).toEqual([200, visibility]);
    }
    const expected = [unl!.account.id, pub!.account.id];
    for (const who of [null, alice, priv!]) {
      const r = who ? await who.api(`/api/v1/statuses/${s.id}/reblogged_by`) : await apiRequest(roost, `/api/v1/statuses/${s.id}/reblogged_by`);
      expect(r.body.map((a: { id: string }) => a.id)).toEqual(expected);
    }
  });

  it('bookmarks, and pins own statuses (not direct ones) up to the limit', async () => {
    const mine = (await post(bob, { status: 'pin me' })).body;
    const theirs = (await post(alice, { status: 'not yours' })).body;
    expect((await bob.api(`/api/v1/statuses/${theirs.id}/bookmark`, { method: 'POST' })).body.bookmarked).toBe(true);
    expect((await bob.api(`/api/v1/statuses/${theirs.id}/unbookmark`, { method: 'POST' })).body.bookmarked).toBe(false);
    expect((await bob.api(`/api/v1/statuses/${mine.id}/pin`, { method: 'POST' })).body.pinned).toBe(true);
    const other = await bob.api(`/api/v1/statuses/${theirs.id}/pin`, { method: 'POST' });
    expect(other.status).toBe(422);
    // Followers-only: pinned (Mastodon 4.0+), listed for who may see it; direct: refused.
    const secret = (await post(bob, { status: 'private', visibility: 'private' })).body;
    const pinnedSecret = await bob.api(`/api/v1/statuses/${secret.id}/pin`, { method: 'POST' });
    expect([pinnedSecret.status, pinnedSecret.body.pinned, pinnedSecret.body.visibility]).toEqual([200, true, 'private']);
    const seen = async (u: TestUser | null) =>
      (await (u ? u.api(`/api/v1/accounts/${bob.account.id}/statuses?pinned=true`) : apiRequest(roost, `/api/v1/accounts/${bob.account.id}/statuses?pinned=true`))).body.map((x: { id: string }) => x.id);
    expect(await seen(bob)).toEqual([secret.id, mine.id]);
    expect(await seen(null)).toEqual([mine.id]);
    expect(await seen(alice)).toEqual([mine.id]);
    expect((await bob.api(`/api/v1/statuses/${secret.id}/unpin`, { method: 'POST' })).body.pinned).toBe(false);
    const dm = (await post(bob, { status: '@alice just us', visibility: 'direct' })).body;
    expect('pinned' in dm).toBe(false); // not pinnable: no flag, as Mastodon's serializer
    const refused = await bob.api(`/api/v1/statuses/${dm.id}/pin`, { method: 'POST' });
    expect([refused.status, refused.body]).toEqual([422, {
      error: 'Validation failed: Posts that are only visible to mentioned users cannot be pinned',
      details: { status: [{ error: 'ERR_INVALID', description: 'Posts that are only visible to mentioned users cannot be pinned' }] },
    }]);
    const max = roost.services.config.limits.accounts.maxPinnedStatuses;
    for (let i = 1; i < max; i++) {
      const s = (await post(bob, { status: `pin ${i}` })).body;
      expect((await bob.api(`/api/v1/statuses/${s.id}/pin`, { method: 'POST' })).status).toBe(200);
    }
    const extra = (await post(bob, { status: 'one too many' })).body;
    const over = await bob.api(`/api/v1/statuses/${extra.id}/pin`, { method: 'POST' });
    expect([over.status, over.body.error]).toEqual([422, 'Validation failed: You have already pinned the maximum number of posts']);
    const pinned = await apiRequest(roost, `/api/v1/accounts/${bob.account.id}/statuses?pinned=true`);
    expect(pinned.body.length).toBe(max);
    expect(pinned.body.map((s: { id: string }) => s.id)).toContain(mine.id);
    expect((await bob.api(`/api/v1/statuses/${mine.id}/unpin`, { method: 'POST' })).body.pinned).toBe(false);
  });
});
