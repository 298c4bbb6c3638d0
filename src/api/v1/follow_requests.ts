/** GET /api/v1/follow_requests and POST /api/v1/follow_requests/:id/authorize|reject. */
import type { Router } from '../../http/index.ts';
import { json, requireId } from '../../http/index.ts';
import { linkHeader, pageParams, pageSql } from '../pagination.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { decideFollowRequest } from '../../services/follows.ts';
import { AccountSchema } from '../../db/entities/index.ts';
import { serializeAccount } from '../../serializers/account.ts';
import { accountView } from '../../services/account-views.ts';
import { relationshipOf } from './accounts/relationships.ts';

export function followRequestRoutes(router: Router, services: Services): void {
  router.get('/api/v1/follow_requests', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'read:follows']);
    // Paged by follow id, newest first, with Mastodon's Link header (max_id next, since_id prev).
    const p = pageParams(ctx);
    const page = pageSql('f.id', p, 2);
    const pending = await services.db.sql.query<{ id: string; account_id: string }>(
      `select f.id::text as id, f.account_id::text as account_id from follows f
        where f.target_account_id = $1 and f.state = 'requested'${page.where} order by ${page.order} limit ${p.limit}`,
      [viewer.account.id, ...page.params],
    );
    if (p.minId) pending.reverse();
    const accounts = await services.db.em().find(AccountSchema, { id: { $in: pending.map((f) => f.account_id) } });
    const byId = new Map(accounts.map((a) => [a.id, a]));
    const view = await accountView(services, accounts);
    const link = linkHeader(ctx.url, pending.map((f) => f.id), p, 'since_id');
    return json(
      pending.map((f) => byId.get(f.account_id)).filter((a) => a !== undefined).map((a) => serializeAccount(a, view)),
      { headers: link ? { link } : {} },
    );
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
