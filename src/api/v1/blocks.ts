/**
 * The viewer's lists: GET /api/v1/blocks, /api/v1/mutes (with mute_expires_at),
 * /api/v1/endorsements, and /api/v1/domain_blocks (with POST and DELETE). Newest first, paged
 * by row id with Mastodon's Link header (max_id next, since_id prev).
 */
import type { Router } from '../../http/index.ts';
import { json, paramString, requireId } from '../../http/index.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import type { Services } from '../../context.ts';
import { authorizeIfGotToken, requireUser } from '../auth.ts';
import { renderAccounts } from '../../views/accounts.ts';
import { collectionOwner, viewerAccountListPage, viewerDomainBlocksPage, viewerMutesPage } from '../../services/reads/lists.ts';
import { blockDomain, unblockDomain } from '../../services/relationships.ts';
import { RoostError } from '../../lib/errors.ts';

export function blocksRoutes(router: Router, services: Services): void {
  const lists = [
    { path: '/api/v1/blocks', scopes: ['follow', 'read:blocks'], table: 'blocks' },
    { path: '/api/v1/endorsements', scopes: ['read', 'read:accounts'], table: 'account_pins' },
  ] as const;
  for (const list of lists) {
    router.get(list.path, async (ctx) => {
      const viewer = await requireUser(services, ctx, list.scopes);
      const p = pageParams(ctx);
      const page = await viewerAccountListPage(services, list.table, viewer.account.id, p);
      const link = linkHeader(ctx.url, page.cursorIds, p, 'since_id');
      return json(await renderAccounts(services, page.accountIds), { headers: link ? { link } : {} });
    });
  }

  // The accounts an account features on its profile (Mastodon 4.4), public: the same account_pins
  // rows /api/v1/endorsements pages for the viewer, read for the account in the path. Nothing for
  // a viewer it blocks; a suspended account is not found.
  router.get('/api/v1/accounts/:id/endorsements', async (ctx) => {
    // Public, but a token that comes along needs read:accounts (Mastodon's authorize_if_got_token!).
    const viewer = await authorizeIfGotToken(services, ctx, ['read', 'read:accounts']);
    const id = requireId(ctx.params.id);
    const owner = await collectionOwner(services, id, viewer?.account?.id ?? null);
    if (owner === 'missing') throw new RoostError(404, 'Record not found');
    if (owner === 'blocks-viewer') return json([]);
    const p = pageParams(ctx);
    const page = await viewerAccountListPage(services, 'account_pins', id, p);
    const link = linkHeader(ctx.url, page.cursorIds, p, 'since_id');
    return json(await renderAccounts(services, page.accountIds), { headers: link ? { link } : {} });
  });

  router.get('/api/v1/mutes', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'read:mutes']);
    const p = pageParams(ctx);
    const page = await viewerMutesPage(services, viewer.account.id, p);
    const link = linkHeader(ctx.url, page.cursorIds, p, 'since_id');
    const accounts = await renderAccounts(services, page.accountIds);
    return json(
      accounts.map((a) => {
        const expires = page.expiresAt.get(a.id);
        return { ...a, mute_expires_at: expires ? expires.toISOString() : null };
      }),
      { headers: link ? { link } : {} },
    );
  });

  router.get('/api/v1/domain_blocks', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['follow', 'read:blocks']);
    const p = pageParams(ctx, 100, 200);
    const page = await viewerDomainBlocksPage(services, viewer.account.id, p);
    const link = linkHeader(ctx.url, page.cursorIds, p, 'since_id');
    return json(page.domains, { headers: link ? { link } : {} });
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
