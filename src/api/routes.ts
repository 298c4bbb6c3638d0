/** Every REST route, registered on one router per Roost instance. */
import { Router } from '../http/index.ts';
import type { Services } from '../context.ts';
import type { RoostFederation } from '../federation/index.ts';
import { instanceV1Routes } from './v1/instance.ts';
import { instanceV2Routes } from './v2/instance.ts';
import { wellKnownRoutes } from './well-known.ts';
import { appsRoutes } from './v1/apps.ts';
import { oauthRoutes } from './oauth.ts';
import { accountRoutes } from './v1/accounts.ts';
import { accountRelationshipRoutes } from './v1/accounts/relationships.ts';
import { followRequestRoutes } from './v1/follow_requests.ts';
import { blocksRoutes } from './v1/blocks.ts';
import { statusRoutes } from './v1/statuses.ts';
import { pollRoutes } from './v1/polls.ts';
import { timelineRoutes } from './v1/timelines.ts';
import { accountCollectionRoutes } from './v1/accounts/collections.ts';
import { mediaFileRoutes } from './media-files.ts';
import { mediaRoutes } from './v1/media.ts';
import { mediaV2Routes } from './v2/media.ts';
import { suggestionRoutes } from './v1/suggestions.ts';
import { profileRoutes } from './v1/profile.ts';
import { preferencesRoutes } from './v1/preferences.ts';
import { webPageRoutes } from './web-pages.ts';
import { rateLimitGuard } from './rate-limits.ts';
import { tokenBeforeBody } from './body-token.ts';
import { adminDomainBlocksRoutes } from './admin/domain_blocks.ts';
import { adminDomainAllowsRoutes } from './admin/domain_allows.ts';

/** The federation is there for routes that fetch remote things (search with resolve). */
export function buildRouter(services: Services, federation?: RoostFederation): Router {
  const router = new Router();
  const limit = rateLimitGuard(services);
  if (limit !== null) router.beforeBody(limit);
  router.beforeBody(tokenBeforeBody(services));
  instanceV1Routes(router, services);
  instanceV2Routes(router, services);
  wellKnownRoutes(router, services, federation);
  appsRoutes(router, services);
  oauthRoutes(router, services);
  accountRelationshipRoutes(router, services);
  accountRoutes(router, services, federation);
  followRequestRoutes(router, services);
  blocksRoutes(router, services);
  accountCollectionRoutes(router, services);
  statusRoutes(router, services);
  pollRoutes(router, services);
  timelineRoutes(router, services);
  mediaFileRoutes(router, services);
  mediaRoutes(router, services);
  mediaV2Routes(router, services);
  suggestionRoutes(router, services);
  profileRoutes(router, services);
  preferencesRoutes(router, services);
  adminDomainBlocksRoutes(router, services);
  adminDomainAllowsRoutes(router, services);
  webPageRoutes(router, services);
  return router;
}
