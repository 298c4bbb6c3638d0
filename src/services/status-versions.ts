/**
 * The stored versions of a status (`status_edits`), shared by local edits (status-edits.ts) and
 * remote ones (an inbound Update(Note), remote-statuses.ts), as Mastodon's Status#snapshot!:
 *
 * - a version keeps the text, its HTML, the content warning and sensitivity, and what the status
 *   carried then: its media in order (ids) with each description as it was, and its poll's options;
 * - the first edit of a status stores the original first (at its creation time), then the new
 *   version (at its edit time), so /history lists every version;
 * - the attachments a version names stay rows after an edit removed them (they are only let go of
 *   their status), so an old version still renders them with the description it had.
 */
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';

/** Stores one version of the status as it is now in `sql` (its row, media and poll), at `at`. */
export async function recordStatusVersion(services: Services, sql: Sql, statusId: string, accountId: string | null, at: Date): Promise<void> {
  await sql.query(
    `insert into status_edits (id, status_id, account_id, text, content, spoiler_text, sensitive,
                               ordered_media_attachment_ids, media_descriptions, poll_options, created_at, updated_at)
     select $1, s.id, $2, s.text, s.content, s.spoiler_text, s.sensitive,
            array(select m.id from media_attachments m where m.status_id = s.id order by m.position, m.id),
            array(select m.description from media_attachments m where m.status_id = s.id order by m.position, m.id),
            (select p.options from polls p where p.status_id = s.id),
            $4, $4
       from statuses s where s.id = $3`,
    [services.ids.next(), accountId, statusId, at],
  );
}

/**
 * Before the first change of a status: stores the original as its first version (at its creation
 * time) when it has none yet (Mastodon's create_previous_edit!). Call it before changing anything.
 */
export async function recordOriginalVersion(services: Services, sql: Sql, statusId: string, accountId: string | null, createdAt: Date): Promise<void> {
  const [{ n }] = (await sql.query<{ n: number }>(`select count(*)::int as n from status_edits where status_id = $1`, [statusId])) as [{ n: number }];
  if (n === 0) await recordStatusVersion(services, sql, statusId, accountId, createdAt);
}
