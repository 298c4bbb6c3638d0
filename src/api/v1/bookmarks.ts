/**
 * GET /api/v1/bookmarks (and, through ./favourites.ts, GET /api/v1/favourites): the viewer's, newest made first (20 by
 * default, 40 at most). The Link header pages by the bookmark's or favourite's id, as Mastodon
 * (its docs: "Bookmark IDs are generally not exposed"); statuses the viewer may no longer see
 * are left out (reads/saved-statuses.ts).
 */
import type { Router } from '../../http/index.ts';
import { json } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { renderStatuses } from '../../views/statuses.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { savedStatusesPage } from '../../services/reads/saved-statuses.ts';

/** The viewer's bookmarks or favourites as a route handler (./favourites.ts registers the other). */
export function savedStatusesRoute(router: Router, services: Services, which: 'bookmarks' | 'favourites', scopes: readonly string[]): void {
  router.get(`/api/v1/${which}`, async (ctx) => {
    const viewer = await requireUser(services, ctx, scopes);
    const p = pageParams(ctx, 20, 40);
    const page = await savedStatusesPage(services, which, viewer.account.id, p);
    const link = linkHeader(ctx.url, page.cursorIds, p);
    return json(await renderStatuses(services, page.statusIds, viewer.account.id), { headers: link ? { link } : {} });
  });
}

export function bookmarkRoutes(router: Router, services: Services): void {
  // GET /api/v1/bookmarks
  savedStatusesRoute(router, services, 'bookmarks', ['read', 'read:bookmarks']);
}
