/**
 * Media attachments on the read side: one attachment of its owner, the row mapper (a page of
 * statuses reads its attachments in its one statement: reads/statuses.ts loadStatusPage), and the
 * SQL predicate "this status has media" for `only_media` filters.
 */
import type { Services } from '../../context.ts';
import type { Sql } from '../../db/sql.ts';
import type { MediaAttachmentRow, MediaMeta, MediaProcessing, MediaType } from '../../serializers/media-attachment.ts';
import { isId } from './page.ts';

/** The columns mediaRowFrom reads, for a table aliased `alias`. */
export function mediaColumns(alias: string): string {
  return `${alias}.id::text, ${alias}.account_id::text, ${alias}.status_id::text, ${alias}.type, ${alias}.processing,
          ${alias}.file_key, ${alias}.small_key, ${alias}.description, ${alias}.focus_x, ${alias}.focus_y, ${alias}.meta,
          ${alias}.blurhash, ${alias}.remote_url`;
}

export function mediaRowFrom(r: Record<string, unknown>): MediaAttachmentRow {
  const meta = (typeof r.meta === 'string' ? JSON.parse(r.meta) : r.meta) as MediaMeta | null;
  return {
    id: String(r.id),
    accountId: String(r.account_id),
    statusId: r.status_id === null || r.status_id === undefined ? null : String(r.status_id),
    type: r.type as MediaType,
    processing: r.processing as MediaProcessing,
    fileKey: (r.file_key as string | null) ?? null,
    smallKey: (r.small_key as string | null) ?? null,
    description: (r.description as string | null) ?? null,
    focus: r.focus_x === null || r.focus_x === undefined ? null : { x: Number(r.focus_x), y: Number(r.focus_y) },
    meta: meta ?? null,
    blurhash: (r.blurhash as string | null) ?? null,
    remoteUrl: (r.remote_url as string | null) ?? null,
  };
}

/**
 * SQL: the status `s` has at least one media attachment (for `only_media` on timelines and
 * account statuses). Uses media_attachments_status_idx.
 */
export function hasMediaSql(s: string): string {
  return `exists (select 1 from media_attachments hm where hm.status_id = ${s}.id)`;
}

/** An attachment of the account's (any state, attached or not), or null. */
export async function findOwnMedia(sql: Sql, accountId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<MediaAttachmentRow | null> {
  if (!isId(id)) return null;
  const [row] = await sql.query<Record<string, unknown>>(
    `select ${mediaColumns('m')} from media_attachments m where m.id = $1 and m.account_id = $2${opts.forUpdate ? ' for update' : ''}`,
    [id, accountId],
  );
  return row ? mediaRowFrom(row) : null;
}

/** One attachment as its owner may read it: theirs and not attached to a status (Mastodon), else null. */
export async function findUnattachedMedia(services: Services, accountId: string, id: string): Promise<MediaAttachmentRow | null> {
  const m = await findOwnMedia(services.db.sql, accountId, id);
  return m && m.statusId === null ? m : null;
}
