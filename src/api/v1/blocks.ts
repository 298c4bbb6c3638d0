/**
 * The viewer's lists: GET /api/v1/blocks, /api/v1/mutes (with mute_expires_at),
 * /api/v1/endorsements, and /api/v1/domain_blocks (with POST and DELETE). Newest first, paged
 * by row id with Mastodon's Link header (max_id next, since_id prev).
 */
import type { RequestContext, Router } from '../../http/index.ts';
import { json, paramString } from '../../http/index.ts';
import { linkHeader, pageParams, pageSql } from '../pagination.ts';
import type { Services } from '../../context.ts';
import { optionalViewer, requireUser } from '../auth.ts';
import { AccountSchema } from '../../db/entities/index.ts';
import { serializeAccount } from '../../serializers/account.ts';
import { accountView } from '../../services/account-views.ts';
import { blockDomain, unblockDomain } from '../../services/relationships.ts';
import { RoostError } from '../../lib/errors.ts';

/** Accounts by id, in the given order, serialized with one view for the page. */
async function accountsInOrder(services: Services, ids: string[]) {
  const accounts = await services.db.em().find(AccountSchema, { id: { $in: ids } });
  const view = await accountView(services, accounts);
  const byId = new Map(accounts.map((a) => [a.id, a]));
  return ids.map((id) => byId.get(id)).filter((a) => a !== undefined).map((a) => serializeAccount(a, view));
}

/** One page of the viewer's rows of `table` (newest first by row id), with Mastodon's Link header. */
async function pageOf<T extends { id: string }>(
  services: Services,
  ctx: RequestContext,
  select: string,
  table: string,
  viewerId: string,
  opts: { extraWhere?: string; extraParams?: unknown[]; defaultLimit?: number; maxLimit?: number } = {},
): Promise<{ rows: T[]; link: string | null }> {
  const p = pageParams(ctx, opts.defaultLimit ?? 40, opts.maxLimit ?? 80);
  const extra = opts.extraParams ?? [];
  const page = pageSql('t.id', p, 2 + extra.length);
  const rows = await services.db.sql.query<T>(
    `select t.id::text as id, ${select} from ${table} t where t.account_id = $1${opts.extraWhere ?? ''}${page.where}
      order by ${page.order} limit ${p.limit}`,
    [viewerId, ...extra, ...page.params],
  );
  if (p.minId) rows.reverse();
  return { rows, link: linkHeader(ctx.url, rows.map((r) => r.id), p, 'since_id') };
}

export function blocksRoutes(router: Router, services: Services): void {
  const lists = [
    { path: '/api/v1/blocks', scopes: ['follow', 'read:blocks'], table: 'blocks' },
    { path: '/api/v1/endorsements', scopes: ['read', 'read:accounts'], table: 'account_pins' },
  ] as const;
  for (const list of lists) {
    router.get(list.path, async (ctx) => {
      const viewer = await requireUser(services, ctx, list.scopes);
      const { rows, link } = await pageOf<{ id: string; target_account_id: string }>(
        services,
        ctx,
        't.target_account_id::text as target_account_id',
        list.table,
        viewer.account.id,
      );
      return json(await accountsInOrder(services, rows.map((r) => r.target_account_id)), { headers: link ? { link } : {} });
    });
  }

  // The accounts an account features on its profile (Mastodon 4.4), public: the same account_pins
  // rows /api/v1/endorsements pages for the viewer, read for the account in the path. Nothing for
  // a suspended account or for a viewer it blocks.
  router.get('/api/v1/accounts/:id/endorsements', async (ctx) => {
    const viewer = await optionalViewer(services, ctx);
    const id = ctx.params.id;
    const account = /^\d{1,20}$/.test(id) ? await services.db.em().findOne(AccountSchema, { id }) : null;
    if (!account) throw new RoostError(404, 'Record not found');
    if (account.suspendedAt) return json([]);
    if (viewer?.account) {
      const [blocked] = await services.db.sql.query(`select 1 from blocks where account_id = $1 and target_account_id = $2`, [account.id, viewer.account.id]);
      if (blocked) return json([]);
    }
    const { rows, link } = await pageOf<{ id: string; target_account_id: string }>(
      services,
      ctx,
      't.target_account_id::text as target_account_id',
      'account_pins',
      account.id,
    );
    return json(await accountsInOrder(services, rows.map((r) => r.target_account_id)), { headers: link ? { link } : {} });
  });

  router.get('/api/v1/mutes', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'read:mutes']);
    const { rows, link } = await pageOf<{ id: string; target_account_id: string; expires_at: Date | null }>(
      services,
      ctx,
      't.target_account_id::text as target_account_id, t.expires_at',
      'mutes',
      viewer.account.id,
      { extraWhere: ' and (t.expires_at is null or t.expires_at > $2)', extraParams: [services.clock.now()] },
    );
    const accounts = await accountsInOrder(services, rows.map((r) => r.target_account_id));
    return json(
      accounts.map((a) => {
        const expires = rows.find((r) => r.target_account_id === a.id)?.expires_at;
        return { ...a, mute_expires_at: expires ? new Date(expires).toISOString() : null };
      }),
      { headers: link ? { link } : {} },
    );
  });

  router.get('/api/v1/domain_blocks', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'read:blocks']);
    const { rows, link } = await pageOf<{ id: string; domain: string }>(services, ctx, 't.domain', 'account_domain_blocks', viewer.account.id, {
      defaultLimit: 100,
      maxLimit: 200,
    });
    return json(rows.map((r) => r.domain), { headers: link ? { link } : {} });
  });
  router.post('/api/v1/domain_blocks', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'write:blocks']);
    const domain = paramString(ctx.input.domain);
    if (!domain) throw new RoostError(422, 'Validation failed: Domain can\'t be blank', { details: { domain: [{ error: 'ERR_BLANK', description: "can't be blank" }] } });
    await blockDomain(services, viewer.account.id, domain);
    return json({});
  });
  router.delete('/api/v1/domain_blocks', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'write:blocks']);
    await unblockDomain(services, viewer.account.id, paramString(ctx.input.domain) ?? '');
    return json({});
  });
}
