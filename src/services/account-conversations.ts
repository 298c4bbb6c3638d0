/**
 * What a user does with a direct-message conversation (Mastodon's Api::V1::ConversationsController):
 * mark it read or unread, or remove it from the list — for that user only; the statuses stay, and a later
 * direct status in the thread brings the conversation back (effects/conversations.ts writes the
 * rows). Each is one statement; another user's conversation is a 404, as one that does not exist.
 */
import type { Services } from '../context.ts';
import { notFound } from '../lib/errors.ts';
import { isId } from './reads/page.ts';

export async function markConversationRead(services: Services, accountId: string, id: string): Promise<void> {
  await setConversationUnread(services, accountId, id, false);
}

/** POST /api/v1/conversations/:id/unread (Mastodon 4.2): the conversation shows unread again. */
export async function markConversationUnread(services: Services, accountId: string, id: string): Promise<void> {
  await setConversationUnread(services, accountId, id, true);
}

async function setConversationUnread(services: Services, accountId: string, id: string, unread: boolean): Promise<void> {
  if (!isId(id)) throw notFound();
  const rows = await services.db.sql.query(`update account_conversations set unread = $3 where id = $1 and account_id = $2 returning id`, [id, accountId, unread]);
  if (rows.length === 0) throw notFound();
}

export async function removeConversation(services: Services, accountId: string, id: string): Promise<void> {
  if (!isId(id)) throw notFound();
  const rows = await services.db.sql.query(`delete from account_conversations where id = $1 and account_id = $2 returning id`, [id, accountId]);
  if (rows.length === 0) throw notFound();
}
