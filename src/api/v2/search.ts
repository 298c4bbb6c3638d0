/**
 * GET /api/v2/search (Mastodon's Api::V2::SearchController and SearchService): accounts, statuses
 * and hashtags for `q`. Public, but `resolve` and `offset` need a user's token (401 without, in
 * Mastodon's words), and statuses are searched only for a signed-in account (full text is not for
 * anonymous callers, as in Mastodon). `resolve=true` with a URL answers the one account or status
 * it names (fetched when not known here); with `user@domain` it fetches that account first. Both
 * within `federation.resolveTimeoutSeconds`. `type` limits the search to one kind; `offset` applies
 * only with a type; `limit` is per kind (default 20, at most 40). GET /api/v1/search stays 404.
 * The search itself: services/reads/search.ts.
 */
import type { Router } from '../../http/index.ts';
import { HttpError, json, paramBool, paramId, paramInt, paramString } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import type { RoostFederation } from '../../federation/index.ts';
import { authorizeIfGotToken } from '../auth.ts';
import { RoostError } from '../../lib/errors.ts';
import { parseSearch, SearchSyntaxError } from '../../lib/search-query.ts';
import { knownByUrl, searchAccountIds, searchStatusIds, searchTagIds } from '../../services/reads/search.ts';
import { visibleStatusIds } from '../../services/reads/statuses.ts';
import { renderAccounts } from '../../views/accounts.ts';
import { renderStatuses } from '../../views/statuses.ts';
import { renderTags } from '../v1/tags.ts';
import { resolveRemoteHandle, resolveRemoteUrl } from '../../federation/search-resolve.ts';

const RESULTS_LIMIT = 20;
const TYPES = new Set(['accounts', 'hashtags', 'statuses']);

export function searchV2Routes(router: Router, services: Services, federation?: RoostFederation): void {
  router.get('/api/v2/search', async (ctx) => {
    const viewer = await authorizeIfGotToken(services, ctx, ['read', 'read:search']);
    const q = (paramString(ctx.query.q) ?? '').trim();
    if (!q) throw new HttpError(400, 'param is missing or the value is empty: q');
    const me = viewer?.user && viewer.account ? viewer.account.id : null;
    const resolve = paramBool(ctx.query.resolve, false);
    if (me === null && ctx.query.offset !== undefined && ctx.query.offset !== '') {
      throw new RoostError(401, 'Search queries pagination is not supported without authentication');
    }
    if (me === null && resolve) throw new RoostError(401, 'Search queries that resolve remote resources are not supported without authentication');

    const typeParam = paramString(ctx.query.type);
    const type = typeParam === undefined || typeParam === '' ? null : typeParam;
    const wants = (t: string) => type === null || (type === t && TYPES.has(t));
    const limit = paramInt(ctx.query.limit, RESULTS_LIMIT, { min: 1, max: RESULTS_LIMIT * 2 });
    const offset = type === null ? 0 : paramInt(ctx.query.offset, 0, { min: 0, max: 10_000 });

    let accountIds: string[] = [];
    let statusIds: string[] = [];
    let tagIds: string[] = [];

    // A URL with resolve: the one thing it names, known here or fetched (ResolveURLService).
    if (resolve && me !== null && /^https?:\/\//i.test(q)) {
      if (URL.canParse(q)) {
        const known = await knownByUrl(services, q);
        let statusId = known.statusId;
        let accountId = known.accountId;
        if (statusId === null && accountId === null && federation) {
          const found = await resolveRemoteUrl(services, federation, new URL(q));
          if (found?.kind === 'status') statusId = found.id;
          if (found?.kind === 'account') accountId = found.id;
        }
        if (statusId !== null && wants('statuses')) statusIds = await visibleStatusIds(services, [statusId], me);
        if (accountId !== null && wants('accounts')) accountIds = [accountId];
      }
      return json(await render(services, me, accountIds, statusIds, tagIds));
    }

    const handleQuery = q.includes('@') && !q.includes(' ');
    if (wants('accounts') && !q.startsWith('#') && !(q.includes('@') && q.includes(' '))) {
      let resolvedId: string | null = null;
      const handle = /^@?([^@\s]+)@([^@\s]+)$/.exec(q);
      if (resolve && me !== null && federation && handle && handle[2]!.toLowerCase() !== services.config.domain.toLowerCase()) {
        resolvedId = await resolveRemoteHandle(services, federation, q);
      }
      accountIds = await searchAccountIds(services, { viewerId: me, q, following: paramBool(ctx.query.following, false), limit, offset });
      if (resolvedId !== null && offset === 0) accountIds = [resolvedId, ...accountIds.filter((id) => id !== resolvedId)].slice(0, limit);
    }
    if (wants('hashtags') && !q.includes('@')) {
      tagIds = await searchTagIds(services, q, limit, offset, paramBool(ctx.query.exclude_unreviewed, false));
    }
    if (wants('statuses') && me !== null && !handleQuery) {
      let query;
      try {
        query = parseSearch(q);
      } catch (e) {
        if (e instanceof SearchSyntaxError) throw new RoostError(422, e.message);
        throw e;
      }
      const accountIdParam = ctx.query.account_id;
      const accountId = accountIdParam === undefined || accountIdParam === '' ? null : paramId(accountIdParam) ?? '0';
      const id = (v: unknown) => paramId(v as never) ?? null;
      if (query.tsquery !== '' || query.filters.length > 0) {
        statusIds = await searchStatusIds(services, {
          viewerId: me,
          query,
          accountId,
          maxId: id(ctx.query.max_id),
          minId: id(ctx.query.min_id),
          limit,
          offset,
        });
      }
    }
    return json(await render(services, me, accountIds, statusIds, tagIds));
  });
}

async function render(services: Services, viewerId: string | null, accountIds: string[], statusIds: string[], tagIds: string[]) {
  const [accounts, statuses, hashtags] = await Promise.all([
    accountIds.length ? renderAccounts(services, accountIds, { visibleOnly: true }) : [],
    statusIds.length ? renderStatuses(services, statusIds, viewerId) : [],
    tagIds.length ? renderTags(services, tagIds, viewerId) : [],
  ]);
  return { accounts, statuses, hashtags };
}
