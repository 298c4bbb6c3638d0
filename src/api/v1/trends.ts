/**
 * /api/v1/trends (Mastodon's Api::V1::TrendsController and Trends::*Controller): the tags,
 * statuses and links that trend here, best first, paged by `offset` with a Link header to the
 * next page. `GET /api/v1/trends` is the deprecated alias of `/trends/tags`. Public; a token only
 * adds the viewer's flags (and leaves out statuses of authors hidden from the viewer). With trends
 * off (`trends.enabled`) every list is empty. The scores come from services/trends.ts.
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramInt } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { authorizeIfGotToken } from '../auth.ts';
import { loadTrendLinks, trendingIds } from '../../services/reads/trends.ts';
import { serializeTrendLink } from '../../serializers/trends.ts';
import { renderStatuses } from '../../views/statuses.ts';
import { renderTags } from './tags.ts';

/** Mastodon's page sizes: tags and links 10 (at most 20), statuses 20 (at most 40). */
const SIZES = { tag: [10, 20], link: [10, 20], status: [20, 40] } as const;
/** No page starts past this many (Mastodon keeps at most a few hundred trends per kind). */
const MAX_OFFSET = 10_000;

export function trendPage(ctx: RequestContext, kind: keyof typeof SIZES): { offset: number; limit: number } {
  const [fallback, max] = SIZES[kind];
  return { offset: paramInt(ctx.query.offset, 0, { min: 0, max: MAX_OFFSET }), limit: paramInt(ctx.query.limit, fallback, { min: 1, max }) };
}

/** The Link header to the next page, when this one is full (Mastodon's offset pagination). */
export function offsetLink(ctx: RequestContext, page: { offset: number; limit: number }, count: number): Record<string, string> {
  if (count < page.limit) return {};
  const next = new URL(ctx.url);
  next.searchParams.set('offset', String(page.offset + count));
  return { link: `<${next.toString()}>; rel="next"` };
}

const READ = ['read', 'read:statuses'];

export function trendRoutes(router: Router, services: Services): void {
  const tags = async (ctx: RequestContext) => {
    const viewer = await authorizeIfGotToken(services, ctx, READ);
    const page = trendPage(ctx, 'tag');
    if (!services.config.trends.enabled) return json([]);
    const ids = await trendingIds(services, 'tag', { ...page, audience: 'public' });
    const out = await renderTags(services, ids, viewer?.account?.id ?? null);
    return json(out, { headers: offsetLink(ctx, page, ids.length) });
  };
  router.get('/api/v1/trends', tags);
  router.get('/api/v1/trends/tags', tags);

  router.get('/api/v1/trends/statuses', async (ctx) => {
    const viewer = await authorizeIfGotToken(services, ctx, READ);
    const page = trendPage(ctx, 'status');
    if (!services.config.trends.enabled) return json([]);
    const viewerId = viewer?.account?.id ?? null;
    const ids = await trendingIds(services, 'status', { ...page, audience: 'public', viewerId });
    return json(await renderStatuses(services, ids, viewerId, { filterContext: 'public' }), { headers: offsetLink(ctx, page, ids.length) });
  });

  router.get('/api/v1/trends/links', async (ctx) => {
    await authorizeIfGotToken(services, ctx, READ);
    const page = trendPage(ctx, 'link');
    if (!services.config.trends.enabled) return json([]);
    const ids = await trendingIds(services, 'link', { ...page, audience: 'public' });
    const links = await loadTrendLinks(services, ids);
    return json(
      ids.flatMap((id) => {
        const l = links.get(id);
        return l ? [serializeTrendLink(l)] : [];
      }),
      { headers: offsetLink(ctx, page, ids.length) },
    );
  });
}
