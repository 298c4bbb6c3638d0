/**
 * Conversations (threads) and their mutes, as Mastodon keeps them: a status that replies to nothing
 * starts a conversation, a reply joins its parent's (statuses.conversation_id). Muting a status's
 * conversation (POST /api/v1/statuses/:id/mute) stops notifications from the whole thread for the
 * muter — the notifications issue consults `conversation_mutes` (see isConversationMuted).
 *
 * As Mastodon's Api::V1::Statuses::MutesController: any status the viewer may see can be muted
 * (its docs say "a thread in which you are a participant", its code checks only that the status is
 * visible); a status the viewer may not see is a 404. A reblog has no thread of its own here: its
 * original's thread is muted.
 */
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import { threadMutedBySql } from '../db/audience.ts';
import { notFound } from '../lib/errors.ts';
import { findVisibleStatus } from './reads/statuses.ts';

/**
 * Puts a newly written status into its thread, in the writer's transaction: the parent's
 * conversation for a reply (when the parent has one), else a new conversation. One statement.
 */
export async function joinConversation(services: Services, sql: Sql, statusId: string, parentId: string | null, now: Date): Promise<void> {
  await sql.query(
    `with p as (select conversation_id from statuses where id = $2::bigint and conversation_id is not null),
          c as (insert into conversations (id, created_at) select $3, $4 where not exists (select 1 from p) returning id)
     update statuses set conversation_id = coalesce((select conversation_id from p), (select id from c)) where id = $1`,
    [statusId, parentId, services.ids.next(), now],
  );
}

/** The conversation of a status (not a reblog), given one first if it has none (rows written before threads existed elsewhere). */
async function conversationOf(services: Services, sql: Sql, statusId: string): Promise<string> {
  const [row] = await sql.query<{ conversation_id: string | null }>(`select conversation_id::text from statuses where id = $1 for update`, [statusId]);
  if (!row) throw notFound();
  if (row.conversation_id) return row.conversation_id;
  const id = services.ids.next();
  await sql.query(`insert into conversations (id, created_at) values ($1, $2)`, [id, services.clock.now()]);
  await sql.query(`update statuses set conversation_id = $2 where id = $1`, [statusId, id]);
  return id;
}

/** Mutes (on) or unmutes (off) the thread of a status the viewer may see. Returns the status id to render. */
export async function setConversationMute(services: Services, accountId: string, id: string, on: boolean): Promise<string> {
  const s = await findVisibleStatus(services, id, accountId);
  if (!s) throw notFound();
  const threadStatusId = s.reblogOfId ?? s.id;
  await services.db.sql.transaction(async (sql) => {
    const conversationId = await conversationOf(services, sql, threadStatusId);
    if (on) {
      await sql.query(
        `insert into conversation_mutes (account_id, conversation_id, created_at) values ($1, $2, $3) on conflict do nothing`,
        [accountId, conversationId, services.clock.now()],
      );
    } else {
      await sql.query(`delete from conversation_mutes where account_id = $1 and conversation_id = $2`, [accountId, conversationId]);
    }
  });
  return s.id;
}

/** Whether the account muted the thread of the status (for notifications, later). */
export async function isConversationMuted(services: Services, accountId: string, statusId: string): Promise<boolean> {
  const [row] = await services.db.sql.query<{ muted: boolean }>(
    `select exists (select 1 from statuses s where s.id = coalesce((select reblog_of_id from statuses where id = $2), $2)
                     and ${threadMutedBySql('$1', 's.conversation_id')}) as muted`,
    [accountId, statusId],
  );
  return row?.muted ?? false;
}
