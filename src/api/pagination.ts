/**
 * Mastodon's id-cursor pagination: `max_id` (older than), `since_id` (newer than, newest first),
 * `min_id` (newer than, oldest first), `limit`; and the Link header with `next` (older) and
 * `prev` (newer) pages.
 */
import type { RequestContext } from '../http/index.ts';
import { paramId, paramInt } from '../http/index.ts';

export type { PageParams } from '../services/reads/page.ts';
export { pageSql } from '../services/reads/page.ts';
import type { PageParams } from '../services/reads/page.ts';

export function pageParams(ctx: RequestContext, defaultLimit = 40, maxLimit = 80): PageParams {
  const id = (v: unknown) => paramId(v as never) ?? null;
  return {
    maxId: id(ctx.query.max_id),
    sinceId: id(ctx.query.since_id),
    minId: id(ctx.query.min_id),
    limit: paramInt(ctx.query.limit, defaultLimit, { min: 1, max: maxLimit }),
  };
}

/**
 * The Link header for a page whose cursor ids (newest first) are `ids`. The `prev` link carries
 * `min_id` (timelines) or, as Mastodon's account lists (followers, blocks, mutes, follow requests,
 * endorsements, domain blocks) do, `since_id`.
 */
export function linkHeader(url: URL, ids: string[], p: PageParams, prevKey: 'min_id' | 'since_id' = 'min_id'): string | null {
  if (ids.length === 0) return null;
  const make = (key: 'max_id' | 'min_id' | 'since_id', value: string) => {
    const u = new URL(url);
    for (const k of ['max_id', 'min_id', 'since_id']) u.searchParams.delete(k);
    u.searchParams.set('limit', String(p.limit));
    u.searchParams.set(key, value);
    return u.toString();
  };
  const links = [];
  if (ids.length >= p.limit) links.push(`<${make('max_id', ids[ids.length - 1])}>; rel="next"`);
  links.push(`<${make(prevKey, ids[0])}>; rel="prev"`);
  return links.join(', ');
}
