/**
 * Quotes on the read side (Mastodon 4.5's GET /api/v1/statuses/:id/quotes): the accepted quotes of
 * a status that the viewer may see, newest first, paged by the quote's id. One statement.
 */
import type { Services } from '../../context.ts';
import { newestFirst, pageSql, type PageParams } from './page.ts';
import { visibleSql } from './statuses.ts';

export async function statusQuotesPage(
  services: Services,
  statusId: string,
  viewerId: string,
  p: PageParams,
): Promise<{ statusIds: string[]; cursorIds: string[] }> {
  const page = pageSql('q.id', p, 3);
  const rows = await services.db.sql.query<{ id: string; status_id: string }>(
    `select q.id::text, q.status_id::text from quotes q join statuses s on s.id = q.status_id
      where q.quoted_status_id = $1 and q.state = 'accepted' and ${visibleSql('s', '$2::bigint')}${page.where}
      order by ${page.order} limit ${p.limit}`,
    [statusId, viewerId, ...page.params],
  );
  const ordered = newestFirst(rows, p);
  return { statusIds: ordered.map((r) => r.status_id), cursorIds: ordered.map((r) => r.id) };
}
