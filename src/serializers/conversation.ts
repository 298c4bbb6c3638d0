/**
 * Mastodon's Conversation entity (entities/Conversation.md; REST::ConversationSerializer), pure:
 * the id as a string, `unread`, the other participants as `accounts` (the viewer alone when there
 * are none: a note to oneself, as AccountConversation#participant_accounts), and `last_status` with
 * the viewer's flags (null when none is left for the viewer to see).
 */
import type { Account } from '../db/entities/index.ts';
import { serializeAccount, type AccountView, type MastodonAccount } from './account.ts';
import { serializeStatus, type MastodonStatus, type StatusRow, type StatusView } from './status.ts';

export interface ConversationEntry {
  id: string;
  unread: boolean;
  /** The other participants' account ids, in order. */
  participantIds: readonly string[];
  /** The viewer's own account id (the participant shown when there is no other). */
  viewerId: string;
  lastStatusId: string | null;
}

export interface ConversationView {
  accounts: ReadonlyMap<string, Account>;
  accountView: AccountView;
  statuses: ReadonlyMap<string, StatusRow>;
  statusView: StatusView;
}

export interface MastodonConversation {
  id: string;
  unread: boolean;
  accounts: MastodonAccount[];
  last_status: MastodonStatus | null;
}

export function serializeConversation(c: ConversationEntry, view: ConversationView): MastodonConversation {
  const others = c.participantIds.flatMap((id) => {
    const a = view.accounts.get(id);
    return a ? [serializeAccount(a, view.accountView)] : [];
  });
  const self = view.accounts.get(c.viewerId);
  const accounts = others.length > 0 || !self ? others : [serializeAccount(self, view.accountView)];
  const status = c.lastStatusId ? view.statuses.get(c.lastStatusId) : undefined;
  return {
    id: c.id,
    unread: c.unread,
    accounts,
    last_status: status ? serializeStatus(status, view.statuses, view.statusView) : null,
  };
}
