/**
 * GET /api/v1/accounts/familiar_followers?id[]= — for each account, the accounts the viewer
 * follows that also follow it; GET /api/v2/suggestions (and v1) — friends of friends, staff picks,
 * popular accounts (services/suggestions.ts); DELETE /api/v1/suggestions/:account_id.
 */
import type { Router } from '../../http/index.ts';
import { json, paramId, paramIds, paramInt } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { loadAccountPage } from '../../services/reads/accounts.ts';
import { renderAccounts } from '../../views/accounts.ts';
import { familiarFollowers } from '../../services/reads/lists.ts';
import { serializeAccount } from '../../serializers/account.ts';
import { dismissSuggestion, suggestAccounts } from '../../services/suggestions.ts';

export function suggestionRoutes(router: Router, services: Services): void {
  router.get('/api/v1/accounts/familiar_followers', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['read', 'read:follows']);
    const ids = paramIds(ctx.input.id, 40);
    const familiar = await familiarFollowers(services, viewer.account.id, ids);
    const rendered = new Map((await renderAccounts(services, [...new Set([...familiar.values()].flat())])).map((a) => [a.id, a]));
    return json(ids.map((id) => ({ id, accounts: (familiar.get(id) ?? []).map((f) => rendered.get(f)).filter((a) => a !== undefined) })));
  });

  const list = async (viewerId: string, limit: number) => {
    const suggestions = await suggestAccounts(services, viewerId, limit);
    const { accounts, view } = await loadAccountPage(services, suggestions.map((s) => s.id));
    return suggestions
      .filter((s) => accounts.has(s.id))
      .map((s) => ({ source: s.source, sources: s.sources, account: serializeAccount(accounts.get(s.id)!, view) }));
  };
  router.get('/api/v2/suggestions', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['read', 'read:accounts']);
    return json(await list(viewer.account.id, paramInt(ctx.query.limit, 40, { min: 1, max: 80 })));
  });
  router.get('/api/v1/suggestions', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['read', 'read:accounts']);
    return json((await list(viewer.account.id, paramInt(ctx.query.limit, 40, { min: 1, max: 80 }))).map((s) => s.account));
  });
  router.delete('/api/v1/suggestions/:account_id', async (ctx) => {
    // Mastodon: dismissing needs write:accounts, and an unknown account is dismissed silently.
    const viewer = await requireUser(services, ctx, ['write', 'write:accounts']);
    const id = paramId(ctx.params.account_id);
    if (id !== undefined) await dismissSuggestion(services, viewer.account.id, id);
    return json({});
  });
}
