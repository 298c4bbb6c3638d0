/**
 * /api/v1/timelines: home (a user's feed), public (local, remote, only_media) and tag/:hashtag
 * (any[], all[], none[], local, remote, only_media), as Mastodon's methods/timelines.md. Pages of
 * ids come from reads/timelines.ts (one statement), statuses are rendered by one batched view;
 * Link headers carry max_id (next) and min_id (prev). Who may read the public and hashtag feeds
 * signed out follows the instance's `timelines_access` (Mastodon 4.5; everyone by default).
 * list/:list_id is the viewer's list (reads/user-lists.ts; another's list is a 404).
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramBool, paramString, paramStrings, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { authorizeIfGotToken, requireUser } from '../auth.ts';
import { renderStatuses } from '../../views/statuses.ts';
import { linkHeader, pageParams, type PageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import { DEFAULT_TIMELINES_ACCESS, type FeedAccess } from '../../lib/instance-policy.ts';
import { homeTimelinePage, publicTimelinePage, tagTimelinePage, type PublicFilter } from '../../services/reads/timelines.ts';
import { listOf, listTimelinePage } from '../../services/reads/user-lists.ts';
import type { FilterContext } from '../../serializers/filter.ts';

const READ = ['read', 'read:statuses'];

/** Mastodon's timelines: 20 statuses by default, 40 at most. */
const pageOf = (ctx: RequestContext): PageParams => pageParams(ctx, 20, 40);

function publicFilter(ctx: RequestContext): PublicFilter {
  return {
    local: paramBool(ctx.query.local, false),
    remote: paramBool(ctx.query.remote, false),
    onlyMedia: paramBool(ctx.query.only_media, false),
  };
}

/** The feed's access rule: the strictest of the local and remote feeds the page draws on. */
function accessOf(access: { local: FeedAccess; remote: FeedAccess }, f: PublicFilter): FeedAccess {
  const wanted = f.local && !f.remote ? [access.local] : f.remote && !f.local ? [access.remote] : [access.local, access.remote];
  return wanted.includes('disabled') ? 'disabled' : wanted.includes('authenticated') ? 'authenticated' : 'public';
}

/**
 * The page rendered with the viewer's filters of `filterContext` (home and lists: `home`; public
 * and hashtag feeds: `public`): a hidden status leaves the page, the Link header still pages by
 * the ids read, so nothing is skipped.
 */
async function page(services: Services, ctx: RequestContext, viewerId: string | null, p: PageParams, ids: string[], filterContext: FilterContext) {
  const link = linkHeader(ctx.url, ids, p);
  return json(await renderStatuses(services, ids, viewerId, { filterContext }), { headers: link ? { link } : {} });
}

export function timelineRoutes(router: Router, services: Services): void {
  router.get('/api/v1/timelines/home', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ);
    const p = pageOf(ctx);
    const { statusIds } = await homeTimelinePage(services, viewer.account.id, p);
    return page(services, ctx, viewer.account.id, p, statusIds, 'home');
  });

  router.get('/api/v1/timelines/list/:list_id', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['read', 'read:lists']);
    const list = await listOf(services, viewer.account.id, requireId(ctx.params.list_id));
    if (!list) throw new RoostError(404, 'Record not found');
    const p = pageOf(ctx);
    const { statusIds } = await listTimelinePage(services, viewer.account.id, list.id, p);
    return page(services, ctx, viewer.account.id, p, statusIds, 'home');
  });

  router.get('/api/v1/timelines/public', async (ctx) => {
    const viewer = await authorizeIfGotToken(services, ctx, READ);
    const viewerId = viewer?.account?.id ?? null;
    const f = publicFilter(ctx);
    const p = pageOf(ctx);
    const access = accessOf(DEFAULT_TIMELINES_ACCESS.liveFeeds, f);
    if (access === 'disabled') return json([]);
    if (access === 'authenticated' && !viewerId) throw new RoostError(422, 'This method requires an authenticated user');
    const { statusIds } = await publicTimelinePage(services, viewerId, p, f);
    return page(services, ctx, viewerId, p, statusIds, 'public');
  });

  router.get('/api/v1/timelines/tag/:hashtag', async (ctx) => {
    const viewer = await authorizeIfGotToken(services, ctx, READ);
    const viewerId = viewer?.account?.id ?? null;
    const f = publicFilter(ctx);
    const p = pageOf(ctx);
    const access = accessOf(DEFAULT_TIMELINES_ACCESS.hashtagFeeds, f);
    if (access === 'disabled') return json([]);
    if (access === 'authenticated' && !viewerId) throw new RoostError(422, 'This method requires an authenticated user');
    const { statusIds } = await tagTimelinePage(services, viewerId, p, {
      ...f,
      tag: paramString(ctx.params.hashtag) ?? '',
      any: paramStrings(ctx.query.any),
      all: paramStrings(ctx.query.all),
      none: paramStrings(ctx.query.none),
    });
    return page(services, ctx, viewerId, p, statusIds, 'public');
  });
}
