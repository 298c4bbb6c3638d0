/**
 * The viewer's direct-message conversations (table `account_conversations`, kept by
 * effects/conversations.ts), newest last status first, paged by that status's id as Mastodon's
 * AccountConversation.to_a_paginated_by_id. One statement per page: each row comes with the newest
 * of its statuses the viewer may still see (the row's own last status, unless it was deleted or
 * hidden since), rendered afterwards by the batched status view.
 */
import type { Services } from '../../context.ts';
import { visibleSql } from './statuses.ts';
import { isId, newestFirst, pageSql, type PageParams } from './page.ts';

export interface ConversationRow {
  id: string;
  unread: boolean;
  /** The other participants (empty: the viewer alone). */
  participantIds: string[];
  /** The newest status of the conversation the viewer may see (null: none left). */
  lastStatusId: string | null;
  /** The pagination cursor: the row's last status id. */
  cursor: string;
}

const columns = (viewer: string) => `ac.id::text, ac.unread, ac.participant_account_ids::text[] as participants,
  coalesce(ac.last_status_id, 0)::text as cursor,
  (select max(s.id)::text from statuses s where s.id = any(ac.status_ids) and ${visibleSql('s', viewer)}) as last_status_id`;

type Raw = { id: string; unread: boolean; participants: string[] | null; cursor: string; last_status_id: string | null };

function fromRaw(r: Raw): ConversationRow {
  return { id: r.id, unread: r.unread, participantIds: r.participants ?? [], lastStatusId: r.last_status_id, cursor: r.cursor };
}

/** A page of the viewer's conversations, newest first. */
export async function conversationsPage(services: Services, viewerId: string, p: PageParams): Promise<ConversationRow[]> {
  const page = pageSql('ac.last_status_id', p, 2);
  const rows = await services.db.sql.query<Raw>(
    `select ${columns('$1::bigint')} from account_conversations ac
      where ac.account_id = $1${page.where} order by ${page.order} limit ${p.limit}`,
    [viewerId, ...page.params],
  );
  return newestFirst(rows, p).map(fromRaw);
}

/** One of the viewer's conversations (null: not the viewer's, or none). */
export async function findConversation(services: Services, viewerId: string, id: string): Promise<ConversationRow | null> {
  if (!isId(id)) return null;
  const [row] = await services.db.sql.query<Raw>(
    `select ${columns('$1::bigint')} from account_conversations ac where ac.account_id = $1 and ac.id = $2`,
    [viewerId, id],
  );
  return row ? fromRaw(row) : null;
}
