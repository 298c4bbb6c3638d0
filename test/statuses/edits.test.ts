/**
 * Editing statuses through the real server (PUT /api/v1/statuses/:id, /history, /source): the text
 * re-rendered as on create, mentions (new ones added, dropped ones kept silently), hashtags
 * replaced, the history stored as Mastodon stores it (the original first), `status.updated` in the
 * outbox, no write for an edit that changes nothing; and the refusals, each Mastodon's error with
 * every row left as it was. Then conversation mutes (POST /api/v1/statuses/:id/mute, /unmute).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dave: TestUser;
beforeAll(async () => {
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
  carol = await createTestUser(roost, 'carol');
  dave = await createTestUser(roost, 'dave');
}, 60_000);
afterAll(async () => roost?.close());

const post = (u: TestUser, body: Record<string, unknown>) => u.api('/api/v1/statuses', { method: 'POST', body });
const edit = (u: TestUser, id: string, body: Record<string, unknown>) => u.api(`/api/v1/statuses/${id}`, { method: 'PUT', body });
const sql = () => roost.services.db.sql;

/** Everything an edit writes about a status, to check that a refused one wrote nothing. */
async function rowsOf(id: string) {
  const q = (text: string) => sql().query(text, [id]);
  return {
    status: await q(`select text, content, spoiler_text, sensitive, language, edited_at, updated_at from statuses where id = $1`),
    edits: await q(`select id::text, text, content, created_at from status_edits where status_id = $1 order by id`),
    mentions: await q(`select account_id::text, silent from mentions where status_id = $1 order by account_id`),
    tags: await q(`select t.name from statuses_tags st join tags t on t.id = st.tag_id where st.status_id = $1 order by t.name`),
    events: await q(`select id::text, type from outbox_events where actor_kind = 'status' and actor_id = $1 order by id`),
    cards: await q(`select preview_card_id::text from preview_cards_statuses where status_id = $1`),
  };
}

describe('editing a status', () => {
  it('re-renders, re-extracts mentions and tags, stores the history and records status.updated', async () => {
    const s = (await post(alice, { status: 'Hello @bob #One', spoiler_text: 'cw', language: 'en' })).body;
    // Never edited: one version, the status as it is.
    const first = await apiRequest(roost, `/api/v1/statuses/${s.id}/history`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual([
      { content: s.content, spoiler_text: 'cw', sensitive: true, created_at: s.created_at, account: s.account, media_attachments: [], emojis: [] },
    ]);

    const edited = await edit(alice, s.id, { status: 'Hi @carol #two', language: 'fr' });
    expect(edited.status).toBe(200);
    // Rendered exactly as a new status with that text would be.
    const same = (await post(alice, { status: 'Hi @carol #two' })).body;
    expect(edited.body).toMatchObject({
      id: s.id,
      created_at: s.created_at,
      content: same.content,
      spoiler_text: '',
      sensitive: false,
      language: 'fr',
      mentions: [{ id: carol.account.id, username: 'carol', acct: 'carol', url: same.mentions[0].url }],
      tags: [{ name: 'two', url: `${roost.services.config.publicUrl}/tags/two` }],
    });
    expect(edited.body.edited_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(new Date(edited.body.edited_at) >= new Date(s.created_at)).toBe(true);
    expect((await apiRequest(roost, `/api/v1/statuses/${s.id}`)).body.edited_at).toBe(edited.body.edited_at);

    // The original first (at its creation time), then the edit.
    const history = (await apiRequest(roost, `/api/v1/statuses/${s.id}/history`)).body;
    expect(history).toEqual([
      // (the account as it is now: two statuses since `same`)
      { content: s.content, spoiler_text: 'cw', sensitive: true, created_at: s.created_at, account: same.account, media_attachments: [], emojis: [] },
      { content: same.content, spoiler_text: '', sensitive: false, created_at: edited.body.edited_at, account: same.account, media_attachments: [], emojis: [] },
    ]);
    const rows = await rowsOf(s.id);
    // bob is no longer named: his mention stays, silent (he keeps his access, no new notification).
    expect(rows.mentions).toEqual([
      { account_id: bob.account.id, silent: true },
      { account_id: carol.account.id, silent: false },
    ].sort((a, b) => (BigInt(a.account_id) < BigInt(b.account_id) ? -1 : 1)));
    expect(rows.tags).toEqual([{ name: 'two' }]);
    expect(rows.edits.map((e) => e.text)).toEqual(['Hello @bob #One', 'Hi @carol #two']);
    const [event] = await sql().query<{ type: string; origin: string; payload: Record<string, unknown> }>(
      `select type, origin, payload from outbox_events where actor_kind = 'status' and actor_id = $1 and type = 'status.updated'`,
      [s.id],
    );
    expect(event).toEqual({
      type: 'status.updated',
      origin: 'client',
      payload: {
        type: 'status.updated',
        statusId: s.id,
        accountId: alice.account.id,
        local: true,
        visibility: 'public',
        editedAt: edited.body.edited_at,
        addedMentionAccountIds: [carol.account.id],
      },
    });

    // The same again changes nothing and writes nothing (Mastodon's NoChangesSubmittedError).
    const unchanged = await edit(alice, s.id, { status: 'Hi @carol #two' });
    expect([unchanged.status, unchanged.body.edited_at, unchanged.body.language]).toEqual([200, edited.body.edited_at, 'fr']);
    expect(await rowsOf(s.id)).toEqual(rows);

    // Naming bob again brings his mention back; a third version.
    const third = await edit(alice, s.id, { status: 'Hi @carol and @bob #two', sensitive: true });
    expect(third.body).toMatchObject({ sensitive: true, language: 'fr' });
    expect(third.body.mentions.map((m: { id: string }) => m.id).sort()).toEqual([bob.account.id, carol.account.id].sort());
    expect((await rowsOf(s.id)).mentions.every((m) => m.silent === false)).toBe(true);
    const versions = (await apiRequest(roost, `/api/v1/statuses/${s.id}/history`)).body;
    expect(versions.map((v: { sensitive: boolean; created_at: string }) => [v.sensitive, v.created_at])).toEqual([
      [true, s.created_at],
      [false, edited.body.edited_at],
      [true, third.body.edited_at],
    ]);
    const updates = await sql().query<{ payload: { addedMentionAccountIds: string[] } }>(
      `select payload from outbox_events where actor_id = $1 and type = 'status.updated' order by id`,
      [s.id],
    );
    expect(updates.map((u) => u.payload.addedMentionAccountIds)).toEqual([[carol.account.id], [bob.account.id]]);
    expect((await alice.api(`/api/v1/statuses/${s.id}/source`)).body).toEqual({ id: s.id, text: 'Hi @carol and @bob #two', spoiler_text: '' });
  });

  it('keeps a dropped mention able to see a direct status', async () => {
    const s = (await post(alice, { status: '@bob a secret', visibility: 'direct' })).body;
    const e = await edit(alice, s.id, { status: '@carol a secret' });
    expect([e.status, e.body.visibility, e.body.mentions.map((m: { acct: string }) => m.acct)]).toEqual([200, 'direct', ['carol']]);
    expect((await bob.api(`/api/v1/statuses/${s.id}`)).status).toBe(200);
    expect((await carol.api(`/api/v1/statuses/${s.id}`)).status).toBe(200);
    expect((await dave.api(`/api/v1/statuses/${s.id}`)).status).toBe(404);
    // The history follows the status's visibility.
    expect((await dave.api(`/api/v1/statuses/${s.id}/history`)).status).toBe(404);
    expect((await apiRequest(roost, `/api/v1/statuses/${s.id}/history`)).status).toBe(404);
    expect((await bob.api(`/api/v1/statuses/${s.id}/history`)).body.length).toBe(2);
  });

  it("refuses others' statuses, reblogs, bad text, unknown media and bad polls, writing nothing", async () => {
    const s = (await post(alice, { status: 'Original @bob #keep', spoiler_text: 'w' })).body;
    const reblog = (await alice.api(`/api/v1/statuses/${(await post(bob, { status: 'by bob' })).body.id}/reblog`, { method: 'POST' })).body;
    const gone = (await post(alice, { status: 'soon gone' })).body;
    await alice.api(`/api/v1/statuses/${gone.id}`, { method: 'DELETE' });
    const before = await rowsOf(s.id);
    const notFound = { error: 'Record not found' };
    const cases: [TestUser, string, Record<string, unknown>, number, unknown][] = [
      [bob, s.id, { status: 'mine now' }, 404, notFound],
      [bob, s.id, { status: '' }, 404, notFound],
      [alice, '123456789', { status: 'x' }, 404, notFound],
      [alice, 'abc', { status: 'x' }, 404, notFound],
      [alice, reblog.id, { status: 'x' }, 404, notFound],
      [alice, gone.id, { status: 'x' }, 404, notFound],
      [
        alice, s.id, { status: 'x'.repeat(501) }, 422,
        { error: 'Validation failed: Text character limit of 500 exceeded', details: { text: [{ error: 'ERR_TOO_LONG', description: 'character limit of 500 exceeded' }] } },
      ],
      [
        alice, s.id, { status: 'x'.repeat(498), spoiler_text: 'abc' }, 422,
        { error: 'Validation failed: Text character limit of 500 exceeded', details: { text: [{ error: 'ERR_TOO_LONG', description: 'character limit of 500 exceeded' }] } },
      ],
      [alice, s.id, { status: '' }, 422, { error: "Validation failed: Text can't be blank", details: { text: [{ error: 'ERR_BLANK', description: "can't be blank" }] } }],
      [alice, s.id, { spoiler_text: 'only a warning' }, 422, { error: "Validation failed: Text can't be blank", details: { text: [{ error: 'ERR_BLANK', description: "can't be blank" }] } }],
      [alice, s.id, { status: '   \n ' }, 422, { error: "Validation failed: Text can't be blank", details: { text: [{ error: 'ERR_BLANK', description: "can't be blank" }] } }],
      [
        alice, s.id, { status: 'with media', media_ids: ['1'] }, 422,
        { error: 'Media 1 not found or already attached to another post' },
      ],
      [
        alice, s.id, { status: 'with a poll', poll: { options: ['a'], expires_in: 300 } }, 422,
        { error: 'Validation failed: Poll options must have more than one item', details: { 'poll.options': [{ error: 'ERR_TOO_SHORT', description: 'must have more than one item' }] } },
      ],
      [
        alice, s.id, { status: 'ok', language: 'not a language!' }, 422,
        { error: 'Validation failed: Language is not a valid language code', details: { language: [{ error: 'ERR_INVALID', description: 'is not a valid language code' }] } },
      ],
    ];
    for (const [who, id, body, status, answer] of cases) {
      const res = await edit(who, id, body);
      expect([who.account.username, id === s.id ? 'status' : id, body, res.status, res.body]).toEqual([who.account.username, id === s.id ? 'status' : id, body, status, answer]);
    }
    expect(await rowsOf(s.id)).toEqual(before);
    expect(before.edits).toEqual([]);
    // Without a token, or with a read-only one.
    expect((await apiRequest(roost, `/api/v1/statuses/${s.id}`, { method: 'PUT', body: { status: 'x' } })).status).toBe(401);
    const reader = await createTestUser(roost, 'reader', { scopes: ['read'] });
    const readOnly = await reader.api(`/api/v1/statuses/${s.id}`, { method: 'PUT', body: { status: 'x' } });
    expect(readOnly.status).toBe(403);
    expect(await rowsOf(s.id)).toEqual(before);
    // A form-encoded edit works as JSON does (media_ids[] empty: nothing to refuse).
    const form = new URLSearchParams({ status: 'Edited by form #keep', spoiler_text: 'w' });
    const byForm = await alice.api(`/api/v1/statuses/${s.id}`, { method: 'PUT', body: form });
    expect([byForm.status, byForm.body.spoiler_text, byForm.body.sensitive, byForm.body.tags]).toEqual([
      200, 'w', true, [{ name: 'keep', url: `${roost.services.config.publicUrl}/tags/keep` }],
    ]);
  });
});

describe('muting a conversation', () => {
  it('mutes the whole thread for the muter, and shows it as `muted`', async () => {
    const root = (await post(alice, { status: 'A thread' })).body;
    const reply = (await post(bob, { status: '@alice a reply', in_reply_to_id: root.id })).body;
    const other = (await post(alice, { status: 'Another thread' })).body;
    const conv = await sql().query<{ id: string; conversation_id: string }>(
      `select id::text, conversation_id::text from statuses where id = any($1::bigint[]) order by id`,
      [[root.id, reply.id, other.id]],
    );
    expect(conv[0]!.conversation_id).toBe(conv[1]!.conversation_id);
    expect(conv[2]!.conversation_id).not.toBe(conv[0]!.conversation_id);
    expect(conv.every((c) => c.conversation_id !== null)).toBe(true);

    const muted = await bob.api(`/api/v1/statuses/${root.id}/mute`, { method: 'POST' });
    expect([muted.status, muted.body.id, muted.body.muted]).toEqual([200, root.id, true]);
    expect((await bob.api(`/api/v1/statuses/${root.id}/mute`, { method: 'POST' })).body.muted).toBe(true);
    expect((await bob.api(`/api/v1/statuses/${reply.id}`)).body.muted).toBe(true);
    expect((await bob.api(`/api/v1/statuses/${other.id}`)).body.muted).toBe(false);
    expect((await alice.api(`/api/v1/statuses/${root.id}`)).body.muted).toBe(false);
    expect('muted' in (await apiRequest(roost, `/api/v1/statuses/${root.id}`)).body).toBe(false);
    expect(await sql().query(`select account_id::text, conversation_id::text from conversation_mutes`)).toEqual([
      { account_id: bob.account.id, conversation_id: conv[0]!.conversation_id },
    ]);

    // Through a reblog: the original's thread.
    const boost = (await dave.api(`/api/v1/statuses/${reply.id}/reblog`, { method: 'POST' })).body;
    const viaBoost = await dave.api(`/api/v1/statuses/${boost.id}/mute`, { method: 'POST' });
    expect([viaBoost.status, viaBoost.body.id, viaBoost.body.muted, viaBoost.body.reblog.muted]).toEqual([200, boost.id, true, true]);
    expect((await dave.api(`/api/v1/statuses/${root.id}`)).body.muted).toBe(true);

    const unmuted = await bob.api(`/api/v1/statuses/${reply.id}/unmute`, { method: 'POST' });
    expect([unmuted.status, unmuted.body.muted]).toEqual([200, false]);
    expect((await bob.api(`/api/v1/statuses/${root.id}`)).body.muted).toBe(false);
    expect((await bob.api(`/api/v1/statuses/${root.id}/unmute`, { method: 'POST' })).body.muted).toBe(false);
    expect((await dave.api(`/api/v1/statuses/${root.id}`)).body.muted).toBe(true);
  });

  it('answers 404 for a status the viewer cannot see or that does not exist, writing nothing', async () => {
    const secret = (await post(alice, { status: '@bob just us', visibility: 'direct' })).body;
    const count = async () => (await sql().query<{ n: number }>(`select count(*)::int as n from conversation_mutes`))[0]!.n;
    const before = await count();
    for (const [who, id] of [[carol, secret.id], [carol, '123456789'], [carol, 'nope']] as const) {
      for (const action of ['mute', 'unmute']) {
        const res = await who.api(`/api/v1/statuses/${id}/${action}`, { method: 'POST' });
        expect([action, id, res.status, res.body]).toEqual([action, id, 404, { error: 'Record not found' }]);
      }
    }
    expect(await count()).toBe(before);
    // A participant may; so may anybody who sees the status, as on Mastodon (it checks visibility only).
    expect((await bob.api(`/api/v1/statuses/${secret.id}/mute`, { method: 'POST' })).body.muted).toBe(true);
    const open = (await post(alice, { status: 'public' })).body;
    expect((await carol.api(`/api/v1/statuses/${open.id}/mute`, { method: 'POST' })).body.muted).toBe(true);
    expect((await apiRequest(roost, `/api/v1/statuses/${open.id}/mute`, { method: 'POST' })).status).toBe(401);
  });

  it('gives a thread to a status written without one (rows from before threads existed)', async () => {
    const s = (await post(alice, { status: 'old style' })).body;
    await sql().query(`update statuses set conversation_id = null where id = $1`, [s.id]);
    expect((await carol.api(`/api/v1/statuses/${s.id}/mute`, { method: 'POST' })).body.muted).toBe(true);
    const [row] = await sql().query<{ conversation_id: string | null }>(`select conversation_id::text from statuses where id = $1`, [s.id]);
    expect(row!.conversation_id).not.toBeNull();
    const reply = (await post(bob, { status: 'a reply to it', in_reply_to_id: s.id })).body;
    expect((await carol.api(`/api/v1/statuses/${reply.id}`)).body.muted).toBe(true);
  });
});
