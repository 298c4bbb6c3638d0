/**
 * Upgrade safety: statuses written before threads existed get their conversations from the
 * migration's backfill (Migration20261123193000: CONVERSATIONS_BACKFILL_SQL) — each thread root
 * starts one (with its own id), replies down the tree join it, a reply whose parent is not here
 * starts its own, reblogs get none — and a mute then covers the whole thread.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { CONVERSATIONS_BACKFILL_SQL } from '../../src/db/migrations/Migration20261123193000_status_edits_cards_conversations.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
beforeAll(async () => {
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
}, 60_000);
afterAll(async () => roost?.close());

const post = async (u: TestUser, body: Record<string, unknown>) => (await u.api('/api/v1/statuses', { method: 'POST', body })).body.id as string;

describe('the conversations backfill', () => {
  it('threads existing statuses as Mastodon would have', async () => {
    const root = await post(alice, { status: 'root' });
    const reply = await post(bob, { status: 'reply', in_reply_to_id: root });
    const deeper = await post(alice, { status: 'deeper', in_reply_to_id: reply });
    const other = await post(bob, { status: 'another root' });
    const boost = (await bob.api(`/api/v1/statuses/${root}/reblog`, { method: 'POST' })).body.id as string;
    const sql = roost.services.db.sql;
    // A reply to a status that is not here (as a remote thread's missing parent).
    const orphan = roost.services.ids.next();
    await sql.query(
      `insert into statuses (id, account_id, uri, text, content, visibility, local, in_reply_to_id, created_at, updated_at)
       values ($1, $2, $3, 'orphan', '<p>orphan</p>', 'public', true, 42, now(), now())`,
      [orphan, bob.account.id, `${bob.account.uri}/statuses/${orphan}`],
    );
    // Back to the state before the migration: no threads at all.
    await sql.transaction(async (tx) => {
      await tx.query(`update statuses set conversation_id = null`);
      await tx.query(`delete from conversations`);
      for (const statement of CONVERSATIONS_BACKFILL_SQL) await tx.query(statement);
    });
    const rows = await sql.query<{ id: string; conversation_id: string | null }>(
      `select id::text, conversation_id::text from statuses where id = any($1::bigint[])`,
      [[root, reply, deeper, other, boost, orphan]],
    );
    const conv = Object.fromEntries(rows.map((r) => [r.id, r.conversation_id]));
    expect([conv[root], conv[reply], conv[deeper], conv[other], conv[boost], conv[orphan]]).toEqual([root, root, root, other, null, orphan]);
    expect((await sql.query<{ id: string }>(`select id::text from conversations order by id`)).map((r) => r.id)).toEqual(
      [root, other, orphan].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)),
    );
    // A mute of the deepest reply covers the root; a new reply joins the backfilled thread.
    expect((await alice.api(`/api/v1/statuses/${deeper}/mute`, { method: 'POST' })).body.muted).toBe(true);
    expect((await alice.api(`/api/v1/statuses/${root}`)).body.muted).toBe(true);
    const later = await post(bob, { status: 'later', in_reply_to_id: deeper });
    expect((await alice.api(`/api/v1/statuses/${later}`)).body.muted).toBe(true);
    expect((await alice.api(`/api/v1/statuses/${other}`)).body.muted).toBe(false);
  });
});
