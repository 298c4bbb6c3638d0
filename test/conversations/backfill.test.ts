/**
 * Upgrade safety: direct statuses written before conversations were kept get theirs from the
 * migration's backfill (Migration20261126203000: ACCOUNT_CONVERSATIONS_BACKFILL_SQL), the same rows
 * the effect would have written — one per local participant, thread and participant set — read.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { ACCOUNT_CONVERSATIONS_BACKFILL_SQL } from '../../src/db/migrations/Migration20261126203000_account_conversations.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
beforeAll(async () => {
  roost = await startTestRoost();
  [alice, bob, carol] = [await createTestUser(roost, 'alice'), await createTestUser(roost, 'bob'), await createTestUser(roost, 'carol')];
}, 60_000);
afterAll(async () => roost?.close());

const dm = async (u: TestUser, status: string, inReplyToId?: string) =>
  (await u.api('/api/v1/statuses', { method: 'POST', body: { status, visibility: 'direct', in_reply_to_id: inReplyToId } })).body.id as string;

async function rows() {
  return roost.services.db.sql.query<{ account_id: string; participants: string[]; status_ids: string[]; last_status_id: string }>(
    `select account_id::text, participant_account_ids::text[] as participants, status_ids::text[], last_status_id::text
       from account_conversations order by account_id, last_status_id`,
  );
}

describe('the account conversations backfill', () => {
  it('writes the rows the effect writes, all read', async () => {
    const first = await dm(alice, '@bob hi');
    await dm(bob, '@alice hi back', first);
    await dm(alice, '@bob @carol all of us');
    await dm(carol, 'just me');
    const gone = await dm(bob, '@alice deleted later', first);
    expect((await bob.api(`/api/v1/statuses/${gone}`, { method: 'DELETE' })).status).toBe(200);
    // Not direct: none.
    await alice.api('/api/v1/statuses', { method: 'POST', body: { status: '@bob public', visibility: 'public' } });
    await settled(roost);
    const kept = await rows();
    expect(kept.length).toBe(6);
    const sql = roost.services.db.sql;
    await sql.transaction(async (tx) => {
      await tx.query(`delete from account_conversations`);
      await tx.query(ACCOUNT_CONVERSATIONS_BACKFILL_SQL);
    });
    expect(await rows()).toEqual(kept);
    expect(await sql.query(`select 1 from account_conversations where unread`)).toEqual([]);
  });
});
