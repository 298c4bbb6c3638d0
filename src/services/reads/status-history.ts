/**
 * The versions of a status for GET /api/v1/statuses/:id/history (Mastodon's HistoriesController):
 * its `status_edits` rows, oldest first, or — for a status never edited — one version made from the
 * status as it is (at its edit or creation time, with its media and poll). Three statements: the
 * versions, the attachments they name (also those an edit removed since), their accounts.
 */
import type { Services } from '../../context.ts';
import type { Account } from '../../db/entities/index.ts';
import type { StatusEditRow, StatusEditView } from '../../serializers/status-edit.ts';
import type { MediaAttachmentRow } from '../../serializers/media-attachment.ts';
import { mediaStorage } from '../media-storage.ts';
import { loadAccountPage } from './accounts.ts';
import { mediaColumns, mediaRowFrom } from './media.ts';

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
     select s.account_id::text, s.content, s.spoiler_text, s.sensitive, coalesce(s.edited_at, s.created_at),
            array(select m.id::text from media_attachments m where m.status_id = s.id order by m.position, m.id),
            array(select m.description from media_attachments m where m.status_id = s.id order by m.position, m.id),
            (select p.options from polls p where p.status_id = s.id), 0::bigint
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
  const mediaIds = [...new Set(edits.flatMap((e) => e.orderedMediaAttachmentIds ?? []))];
  const media = new Map<string, MediaAttachmentRow>();
  if (mediaIds.length) {
    const rows = await services.db.sql.query<Record<string, unknown>>(`select ${mediaColumns('m')} from media_attachments m where m.id = any($1::bigint[])`, [mediaIds]);
    for (const r of rows) {
      const m = mediaRowFrom(r);
      media.set(m.id, m);
    }
  }
  const page = await loadAccountPage(services, [...new Set(edits.map((e) => e.accountId))]);
  return {
    edits,
    view: { accounts: page.accounts as Map<string, Account>, accountView: page.view, media, mediaBaseUrl: mediaStorage(services).baseUrl },
  };
}
