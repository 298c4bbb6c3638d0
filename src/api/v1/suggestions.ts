/**
 * GET /api/v1/accounts/familiar_followers?id[]= — for each account, the accounts the viewer
 * follows that also follow it; GET /api/v2/suggestions (and v1) — accounts followed by those the
 * viewer follows, then recently active local accounts; DELETE /api/v1/suggestions/:account_id.
 */
import type { Router } from '../../http/index.ts';
import { json, paramId, paramIds, paramInt } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { AccountSchema } from '../../db/entities/index.ts';
import { serializeAccount } from '../../serializers/account.ts';
import { accountView } from '../../services/account-views.ts';
import { dismissSuggestion, suggestAccounts } from '../../services/suggestions.ts';

export function suggestionRoutes(router: Router, services: Services): void {
  router.get('/api/v1/accounts/familiar_followers', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['read', 'read:follows']);
    const ids = paramIds(ctx.query.id, 40);
    const rows = await services.db.sql.query<{ target: string; follower: string }>(
      `select theirs.target_account_id::text as target, theirs.account_id::text as follower
         from follows theirs
         join follows mine on mine.target_account_id = theirs.account_id and mine.account_id = $1 and mine.state = 'accepted'
        where theirs.state = 'accepted' and theirs.target_account_id = any($2::bigint[]) and theirs.account_id <> $1
        order by theirs.id desc`,
      [viewer.account.id, ids],
    );
    const accounts = await services.db.em().find(AccountSchema, { id: { $in: rows.map((r) => r.follower) } });
    const view = await accountView(services, accounts);
    const byId = new Map(accounts.map((a) => [a.id, a]));
    return json(
      ids.map((id) => ({
        id,
        accounts: rows.filter((r) => r.target === id).map((r) => byId.get(r.follower)).filter((a) => a !== undefined).map((a) => serializeAccount(a, view)),
      })),
    );
  });

  const list = async (viewerId: string, limit: number) => {
    const suggestions = await suggestAccounts(services, viewerId, limit);
    const accounts = await services.db.em().find(AccountSchema, { id: { $in: suggestions.map((s) => s.id) } });
    const view = await accountView(services, accounts);
    const byId = new Map(accounts.map((a) => [a.id, a]));
    return suggestions.filter((s) => byId.has(s.id)).map((s) => ({ source: s.source, sources: [s.reason], account: serializeAccount(byId.get(s.id)!, view) }));
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
