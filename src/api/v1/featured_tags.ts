/**
 * /api/v1/featured_tags (Mastodon's Api::V1::FeaturedTagsController and its suggestions), and
 * /api/v1/accounts/:id/featured_tags (public): the hashtags an account shows on its profile, at
 * most `accounts.max_featured_tags` of them.
 */
import type { Router } from '../../http/index.ts';
import { json, paramString, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { authorizeIfGotToken, requireUser } from '../auth.ts';
import { featureTag, removeFeaturedTag } from '../../services/tags.ts';
import { accountFeaturedTags, featuredTagsOf, featuredTagSuggestions } from '../../services/reads/tags.ts';
import { serializeFeaturedTag } from '../../serializers/featured-tag.ts';
import { RoostError } from '../../lib/errors.ts';
import { renderTags } from './tags.ts';

const READ_ACCOUNTS = ['read', 'read:accounts'];
const WRITE_ACCOUNTS = ['write', 'write:accounts'];

export function featuredTagRoutes(router: Router, services: Services): void {
  const base = services.config.publicUrl;

  router.get('/api/v1/featured_tags', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_ACCOUNTS);
    return json((await featuredTagsOf(services, viewer.account.id)).map((r) => serializeFeaturedTag(r, base)));
  });

  router.post('/api/v1/featured_tags', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_ACCOUNTS);
    const { id } = await featureTag(services, viewer.account.id, paramString(ctx.input.name));
    const row = (await featuredTagsOf(services, viewer.account.id)).find((r) => r.id === id);
    if (!row) throw new RoostError(404, 'Record not found');
    return json(serializeFeaturedTag(row, base));
  });

  router.delete('/api/v1/featured_tags/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_ACCOUNTS);
    await removeFeaturedTag(services, viewer.account.id, requireId(ctx.params.id));
    return json({});
  });

  router.get('/api/v1/featured_tags/suggestions', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_ACCOUNTS);
    return json(await renderTags(services, await featuredTagSuggestions(services, viewer.account.id), viewer.account.id));
  });

  router.get('/api/v1/accounts/:id/featured_tags', async (ctx) => {
    await authorizeIfGotToken(services, ctx, READ_ACCOUNTS);
    const rows = await accountFeaturedTags(services, requireId(ctx.params.id));
    if (!rows) throw new RoostError(404, 'Record not found');
    return json(rows.map((r) => serializeFeaturedTag(r, base)));
  });
}
