/** GET /api/v1/follow_requests and POST /api/v1/follow_requests/:id/authorize|reject. */
import type { Router } from '../../http/index.ts';
import { json, requireId } from '../../http/index.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { decideFollowRequest } from '../../services/follows.ts';
import { followRequestsPage } from '../../services/reads/lists.ts';
import { renderAccounts } from '../../views/accounts.ts';
import { relationshipOf } from './accounts/relationships.ts';

export function followRequestRoutes(router: Router, services: Services): void {
  router.get('/api/v1/follow_requests', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'read:follows']);
    // Paged by follow id, newest first, with Mastodon's Link header (max_id next, since_id prev).
    const p = pageParams(ctx);
    const page = await followRequestsPage(services, viewer.account.id, p);
    const link = linkHeader(ctx.url, page.cursorIds, p, 'since_id');
    return json(await renderAccounts(services, page.accountIds), { headers: link ? { link } : {} });
  });

  for (const decision of ['authorize', 'reject'] as const) {
    router.post(`/api/v1/follow_requests/:id/${decision}`, async (ctx) => {
      const viewer = await requireUser(services, ctx, ['follow', 'write:follows']);
      const id = requireId(ctx.params.id);
      await decideFollowRequest(services, viewer.account.id, id, decision === 'authorize' ? 'accept' : 'reject');
      return json(await relationshipOf(services, viewer, id));
    });
  }
}
