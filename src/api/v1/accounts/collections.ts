/**
 * GET /api/v1/accounts/:id/followers and /following (paginated by follow id, Link headers),
 * /statuses (statuses are a later issue: an empty page) and /identity_proofs (retired: always
 * empty). Hiding collections (hide_collections) is not built yet.
 */
import type { Router } from '../../../http/index.ts';
import { json } from '../../../http/index.ts';
import type { Services } from '../../../context.ts';
import { optionalViewer } from '../../auth.ts';
import { accountShown, collectionOwner, followCollectionPage } from '../../../services/reads/lists.ts';
import { renderAccounts } from '../../render.ts';
import { RoostError } from '../../../lib/errors.ts';
import { linkHeader, pageParams } from '../../pagination.ts';

export function accountCollectionRoutes(router: Router, services: Services): void {
  for (const which of ['followers', 'following'] as const) {
    router.get(`/api/v1/accounts/:id/${which}`, async (ctx) => {
      if (!/^\d{1,20}$/.test(ctx.params.id)) throw new RoostError(404, 'Record not found');
      const viewer = await optionalViewer(services, ctx);
      const owner = await collectionOwner(services, ctx.params.id, viewer?.account?.id ?? null);
      if (owner === 'missing') throw new RoostError(404, 'Record not found');
      // As Mastodon: an account's lists are not shown to someone it blocks.
      if (owner === 'blocks-viewer') return json([]);
      const p = pageParams(ctx);
      const page = await followCollectionPage(services, ctx.params.id, which, p);
      const link = linkHeader(ctx.url, page.cursorIds, p, 'since_id');
      return json(await renderAccounts(services, page.accountIds), { headers: link ? { link } : {} });
    });
  }
  router.get('/api/v1/accounts/:id/statuses', async (ctx) => {
    if (!/^\d{1,20}$/.test(ctx.params.id) || !(await accountShown(services, ctx.params.id))) throw new RoostError(404, 'Record not found');
    return json([]);
  });
  router.get('/api/v1/accounts/:id/identity_proofs', () => json([]));
}
