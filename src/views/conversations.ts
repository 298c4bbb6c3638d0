/**
 * Direct-message conversations rendered, for GET /api/v1/conversations and the `conversation`
 * streaming event alike: one account view for every participant of the page (one statement), one
 * batched status view for their last statuses (reads/statuses.ts loadStatusPage: a fixed number of
 * statements), then the pure serializer per conversation.
 */
import type { Services } from '../context.ts';
import { loadAccountPage } from '../services/reads/accounts.ts';
import { loadStatusPage } from '../services/reads/statuses.ts';
import type { ConversationRow } from '../services/reads/account-conversations.ts';
import { serializeConversation, type MastodonConversation } from '../serializers/conversation.ts';

/** `viewerId`'s conversations `rows`, in order. */
export async function renderConversations(
  services: Services,
  rows: readonly Omit<ConversationRow, 'cursor'>[],
  viewerId: string,
): Promise<MastodonConversation[]> {
  if (rows.length === 0) return [];
  const accountIds = [...new Set([viewerId, ...rows.flatMap((r) => r.participantIds)])];
  const { accounts, view: accountView } = await loadAccountPage(services, accountIds);
  const { statuses, view: statusView } = await loadStatusPage(services, rows.flatMap((r) => (r.lastStatusId ? [r.lastStatusId] : [])), viewerId);
  return rows.map((r) =>
    serializeConversation(
      { id: r.id, unread: r.unread, participantIds: r.participantIds, viewerId, lastStatusId: r.lastStatusId },
      { accounts, accountView, statuses, statusView },
    ),
  );
}
