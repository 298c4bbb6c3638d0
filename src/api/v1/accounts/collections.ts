/**
 * GET /api/v1/accounts/:id/followers and /following (paginated by follow id, Link headers),
 * /statuses (an account's statuses the viewer may see: pinned, exclude_replies, exclude_reblogs,
 * tagged; only_media is empty until media come) and /identity_proofs (retired: always
 * empty). Hiding collections (hide_collections) is not built yet.
 */
import type { Router } from '../../../http/index.ts';
import { json, paramBool, paramString, requireId } from '../../../http/index.ts';
import { accountStatusesPage } from '../../../services/reads/statuses.ts';
import type { Services } from '../../../context.ts';
import { authorizeIfGotToken } from '../../auth.ts';
import { accountShown, collectionOwner, followCollectionPage } from '../../../services/reads/lists.ts';
import { renderAccounts } from '../../../views/accounts.ts';
import { renderStatuses } from '../../../views/statuses.ts';
import { RoostError } from '../../../lib/errors.ts';
import { linkHeader, pageParams } from '../../pagination.ts';

const READ_ACCOUNTS = ['read', 'read:accounts'];

export function accountCollectionRoutes(router: Router, services: Services): void {
  for (const which of ['followers', 'following'] as const) {
    router.get(`/api/v1/accounts/:id/${which}`, async (ctx) => {
      const id = requireId(ctx.params.id);
      // Public, but a token that comes along needs read:accounts (Mastodon's authorize_if_got_token!).
      const viewer = await authorizeIfGotToken(services, ctx, READ_ACCOUNTS);
      const owner = await collectionOwner(services, id, viewer?.account?.id ?? null);
      if (owner === 'missing') throw new RoostError(404, 'Record not found');
      // As Mastodon: an account's lists are not shown to someone it blocks.
      if (owner === 'blocks-viewer') return json([]);
      const p = pageParams(ctx);
      const page = await followCollectionPage(services, id, which, p);
      const link = linkHeader(ctx.url, page.cursorIds, p, 'since_id');
      return json(await renderAccounts(services, page.accountIds), { headers: link ? { link } : {} });
    });
  }
  router.get('/api/v1/accounts/:id/statuses', async (ctx) => {
    const id = requireId(ctx.params.id);
    const viewer = await authorizeIfGotToken(services, ctx, ['read', 'read:statuses']);
    if (!(await accountShown(services, id))) throw new RoostError(404, 'Record not found');
    const viewerId = viewer?.account?.id ?? null;
    const p = pageParams(ctx, 20, 40);
    const q = ctx.query;
    const page = await accountStatusesPage(services, id, viewerId, p, {
      excludeReplies: paramBool(q.exclude_replies, false),
      excludeReblogs: paramBool(q.exclude_reblogs, false),
      onlyMedia: paramBool(q.only_media, false),
      pinned: paramBool(q.pinned, false),
      tagged: paramString(q.tagged) || null,
    });
    const link = linkHeader(ctx.url, page.cursorIds, p);
    return json(await renderStatuses(services, page.statusIds, viewerId, { filterContext: 'account' }), { headers: link ? { link } : {} });
  });
  router.get('/api/v1/accounts/:id/identity_proofs', async (ctx) => {
    if (!(await accountShown(services, requireId(ctx.params.id)))) throw new RoostError(404, 'Record not found');
    return json([]);
  });
}
