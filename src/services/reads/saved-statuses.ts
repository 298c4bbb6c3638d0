/**
 * The viewer's bookmarks and favourites (GET /api/v1/bookmarks, /api/v1/favourites): newest made
 * first, paged by the bookmark's or favourite's own id (not the status's), as Mastodon. Statuses
 * the viewer may no longer see (deleted, their author suspended or now blocking, a private status
 * after an unfollow) are left out in the statement, so a page is still full. One statement.
 */
import type { Services } from '../../context.ts';
import { originalVisibleSql, visibleSql } from './statuses.ts';
import { newestFirst, pageSql, type PageParams } from './page.ts';

export async function savedStatusesPage(
  services: Services,
  which: 'bookmarks' | 'favourites',
  viewerId: string,
  p: PageParams,
): Promise<{ statusIds: string[]; cursorIds: string[] }> {
  const table = which === 'bookmarks' ? 'bookmarks' : 'favourites';
  const page = pageSql('x.id', p, 2);
  const rows = await services.db.sql.query<{ id: string; status_id: string }>(
    `select x.id::text, x.status_id::text from ${table} x join statuses s on s.id = x.status_id
      where x.account_id = $1${page.where} and ${visibleSql('s', '$1::bigint')} and ${originalVisibleSql('s', '$1::bigint')}
      order by ${page.order} limit ${p.limit}`,
    [viewerId, ...page.params],
  );
  const ordered = newestFirst(rows, p);
  return { statusIds: ordered.map((r) => r.status_id), cursorIds: ordered.map((r) => r.id) };
}
