/** GET /api/v1/favourites: the viewer's favourites, as its bookmarks (./bookmarks.ts). */
import type { Router } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { savedStatusesRoute } from './bookmarks.ts';

export function favouriteRoutes(router: Router, services: Services): void {
  // GET /api/v1/favourites
  savedStatusesRoute(router, services, 'favourites', ['read', 'read:favourites']);
}
