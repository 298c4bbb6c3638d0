/**
 * What a user does with a direct-message conversation (Mastodon's Api::V1::ConversationsController):
 * mark it read, or remove it from the list — for that user only; the statuses stay, and a later
 * direct status in the thread brings the conversation back (effects/conversations.ts writes the
 * rows). Each is one statement; another user's conversation is a 404, as one that does not exist.
 */
import type { Services } from '../context.ts';
import { notFound } from '../lib/errors.ts';
import { isId } from './reads/page.ts';

export async function markConversationRead(services: Services, accountId: string, id: string): Promise<void> {
  if (!isId(id)) throw notFound();
  const rows = await services.db.sql.query(`update account_conversations set unread = false where id = $1 and account_id = $2 returning id`, [id, accountId]);
  if (rows.length === 0) throw notFound();
}

export async function removeConversation(services: Services, accountId: string, id: string): Promise<void> {
  if (!isId(id)) throw notFound();
  const rows = await services.db.sql.query(`delete from account_conversations where id = $1 and account_id = $2 returning id`, [id, accountId]);
  if (rows.length === 0) throw notFound();
}
