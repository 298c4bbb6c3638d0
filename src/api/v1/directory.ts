/**
 * GET /api/v1/directory (Mastodon's Api::V1::DirectoriesController): the profile directory of
 * discoverable accounts, `order` active (default) or new, `local`, `offset`, `limit` (40, at most
 * 80). Public; a token that comes along must carry read:accounts. Read module:
 * services/reads/directory.ts.
 */
import type { Router } from '../../http/index.ts';
import { json, paramBool, paramInt, paramString } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { authorizeIfGotToken } from '../auth.ts';
import { directoryPage } from '../../services/reads/directory.ts';
import { renderAccounts } from '../../views/accounts.ts';

export function directoryRoutes(router: Router, services: Services): void {
  router.get('/api/v1/directory', async (ctx) => {
    const viewer = await authorizeIfGotToken(services, ctx, ['read', 'read:accounts']);
    const ids = await directoryPage(services, {
      viewerId: viewer?.account?.id ?? null,
      order: paramString(ctx.query.order) === 'new' ? 'new' : 'active',
      local: paramBool(ctx.query.local, false),
      offset: paramInt(ctx.query.offset, 0, { min: 0, max: 100_000 }),
      limit: paramInt(ctx.query.limit, 40, { min: 1, max: 80 }),
    });
    return json(await renderAccounts(services, ids, { visibleOnly: true }));
  });
}
