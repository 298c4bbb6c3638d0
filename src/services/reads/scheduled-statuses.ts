/**
 * Scheduled statuses on the read side: an account's pending ones by id cursor, one of them, and
 * the attachments they reserved (one statement for a page).
 */
import type { Services } from '../../context.ts';
import type { MediaAttachmentRow } from '../../serializers/media-attachment.ts';
import type { ScheduledStatusParams, ScheduledStatusRow } from '../../serializers/scheduled-status.ts';
import { mediaColumns, mediaRowFrom } from './media.ts';
import { isId, newestFirst, pageSql, type PageParams } from './page.ts';

function rowFrom(r: { id: string; scheduled_at: Date | string; params: unknown }): ScheduledStatusRow {
  const params = (typeof r.params === 'string' ? JSON.parse(r.params) : r.params) as ScheduledStatusParams;
  return { id: r.id, scheduledAt: new Date(r.scheduled_at), params };
}

/** A page of the account's pending scheduled statuses, newest id first (Mastodon's to_a_paginated_by_id). */
export async function scheduledStatusesPage(services: Services, accountId: string, p: PageParams): Promise<ScheduledStatusRow[]> {
  const page = pageSql('s.id', p, 2);
  const rows = await services.db.sql.query<{ id: string; scheduled_at: Date; params: unknown }>(
    `select s.id::text, s.scheduled_at, s.params from scheduled_statuses s
      where s.account_id = $1 and s.state = 'scheduled'${page.where}
      order by ${page.order} limit ${p.limit}`,
    [accountId, ...page.params],
  );
  return newestFirst(rows.map(rowFrom), p);
}

/** One pending scheduled status of the account's, or null (another's, ended, or none). */
export async function findScheduledStatus(services: Services, accountId: string, id: string): Promise<ScheduledStatusRow | null> {
  if (!isId(id)) return null;
  const [row] = await services.db.sql.query<{ id: string; scheduled_at: Date; params: unknown }>(
    `select s.id::text, s.scheduled_at, s.params from scheduled_statuses s where s.id = $1 and s.account_id = $2 and s.state = 'scheduled'`,
    [id, accountId],
  );
  return row ? rowFrom(row) : null;
}

/** The attachments each scheduled status reserved, in their order (one statement). */
export async function loadScheduledStatusMedia(services: Services, ids: readonly string[]): Promise<Map<string, MediaAttachmentRow[]>> {
  const out = new Map<string, MediaAttachmentRow[]>();
  if (ids.length === 0) return out;
  const rows = await services.db.sql.query<Record<string, unknown>>(
    `select ${mediaColumns('m')}, m.scheduled_status_id::text as reserved_by from media_attachments m
      where m.scheduled_status_id = any($1::bigint[]) order by m.scheduled_status_id, m.position, m.id`,
    [ids],
  );
  for (const r of rows) {
    const list = out.get(String(r.reserved_by)) ?? [];
    list.push(mediaRowFrom(r));
    out.set(String(r.reserved_by), list);
  }
  return out;
}
