/**
 * The versions of a status for GET /api/v1/statuses/:id/history (Mastodon's HistoriesController):
 * its `status_edits` rows, oldest first, or — for a status never edited — one version made from the
 * status as it is (at its edit or creation time). Two statements: the versions, their accounts.
 */
import type { Services } from '../../context.ts';
import type { Account } from '../../db/entities/index.ts';
import type { StatusEditRow, StatusEditView } from '../../serializers/status-edit.ts';
import { loadAccountPage } from './accounts.ts';

export async function loadStatusHistory(services: Services, statusId: string): Promise<{ edits: StatusEditRow[]; view: StatusEditView }> {
  const rows = await services.db.sql.query<{
    account_id: string;
    content: string;
    spoiler_text: string;
    sensitive: boolean;
    created_at: string;
    media_ids: string[] | null;
    media_descriptions: string[] | null;
    poll_options: string[] | null;
  }>(
    `select coalesce(e.account_id, s.account_id)::text as account_id, e.content, e.spoiler_text, e.sensitive, e.created_at,
            e.ordered_media_attachment_ids::text[] as media_ids, e.media_descriptions, e.poll_options, e.id as seq
       from status_edits e join statuses s on s.id = e.status_id
      where e.status_id = $1
     union all
     select s.account_id::text, s.content, s.spoiler_text, s.sensitive, coalesce(s.edited_at, s.created_at), null, null, null, 0::bigint
       from statuses s
      where s.id = $1 and not exists (select 1 from status_edits e where e.status_id = s.id)
     order by created_at, seq`,
    [statusId],
  );
  const edits: StatusEditRow[] = rows.map((r) => ({
    accountId: r.account_id,
    content: r.content,
    spoilerText: r.spoiler_text,
    sensitive: r.sensitive,
    createdAt: new Date(r.created_at),
    orderedMediaAttachmentIds: r.media_ids,
    mediaDescriptions: r.media_descriptions,
    pollOptions: r.poll_options,
  }));
  const page = await loadAccountPage(services, [...new Set(edits.map((e) => e.accountId))]);
  return { edits, view: { accounts: page.accounts as Map<string, Account>, accountView: page.view } };
}
