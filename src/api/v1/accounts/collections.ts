/**
 * GET /api/v1/accounts/:id/followers and /following (paginated by follow id, Link headers),
 * /statuses (statuses are a later issue: an empty page) and /identity_proofs (retired: always
 * empty). Hiding collections (hide_collections) is not built yet.
 */
import type { Router } from '../../../http/index.ts';
import { json, requireId } from '../../../http/index.ts';
import type { Services } from '../../../context.ts';
import { authorizeIfGotToken } from '../../auth.ts';
import { AccountSchema } from '../../../db/entities/index.ts';
import { serializeAccount } from '../../../serializers/account.ts';
import { accountView } from '../../../services/account-views.ts';
import { RoostError } from '../../../lib/errors.ts';
import { linkHeader, pageParams, pageSql } from '../../pagination.ts';

const READ_ACCOUNTS = ['read', 'read:accounts'];

export function accountCollectionRoutes(router: Router, services: Services): void {
  for (const which of ['followers', 'following'] as const) {
    router.get(`/api/v1/accounts/:id/${which}`, async (ctx) => {
      const id = requireId(ctx.params.id);
      // Public, but a token that comes along needs read:accounts (Mastodon's authorize_if_got_token!).
      const viewer = await authorizeIfGotToken(services, ctx, READ_ACCOUNTS);
      const account = await services.db.em().findOne(AccountSchema, { id });
      if (!account || account.suspendedAt) throw new RoostError(404, 'Record not found');
      // As Mastodon: an account's lists are not shown to someone it blocks.
      if (viewer?.account && viewer.account.id !== account.id) {
        const blocked = await services.db.sql.query(`select 1 from blocks where account_id = $1 and target_account_id = $2`, [account.id, viewer.account.id]);
        if (blocked.length > 0) return json([]);
      }
      const p = pageParams(ctx);
      const page = pageSql('f.id', p, 2);
      const [mine, other] = which === 'followers' ? ['target_account_id', 'account_id'] : ['account_id', 'target_account_id'];
      const rows = await services.db.sql.query<{ follow_id: string; other_id: string }>(
        `select f.id::text as follow_id, f.${other}::text as other_id from follows f
          where f.${mine} = $1 and f.state = 'accepted'${page.where} order by ${page.order} limit ${p.limit}`,
        [account.id, ...page.params],
      );
      if (p.minId) rows.reverse();
      const accounts = await services.db.em().find(AccountSchema, { id: { $in: rows.map((r) => r.other_id) } });
      const view = await accountView(services, accounts);
      const byId = new Map(accounts.map((a) => [a.id, a]));
      const body = rows.map((r) => byId.get(r.other_id)).filter((a) => a !== undefined).map((a) => serializeAccount(a, view));
      const link = linkHeader(ctx.url, rows.map((r) => r.follow_id), p, 'since_id');
      return json(body, { headers: link ? { link } : {} });
    });
  }
  router.get('/api/v1/accounts/:id/statuses', async (ctx) => {
    const id = requireId(ctx.params.id);
    await authorizeIfGotToken(services, ctx, ['read', 'read:statuses']);
    const account = await services.db.em().findOne(AccountSchema, { id });
    if (!account || account.suspendedAt) throw new RoostError(404, 'Record not found');
    return json([]);
  });
  router.get('/api/v1/accounts/:id/identity_proofs', async (ctx) => {
    const account = await services.db.em().findOne(AccountSchema, { id: requireId(ctx.params.id) });
    if (!account || account.suspendedAt) throw new RoostError(404, 'Record not found');
    return json([]);
  });
}
