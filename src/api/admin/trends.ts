/**
 * /api/v1/admin/trends (Mastodon's Api::V1::Admin::Trends::*Controller): every tag, status and link
 * that scores, reviewed or not, with its review (`requires_review`; tags as Admin::Tag with
 * `trendable`), and approve / reject for each (services/trends.ts reviewTrend: the review, the
 * `trend.reviewed` fact and the audit entry together). Permission: manage taxonomies.
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requirePermission } from '../auth.ts';
import { reviewTrend, type TrendKind } from '../../services/trends.ts';
import { loadTrendLinks, trendReviews, trendingIds } from '../../services/reads/trends.ts';
import { reviewFields, serializeAdminTag, serializeTrendLink } from '../../serializers/trends.ts';
import { renderStatuses } from '../../views/statuses.ts';
import { RoostError } from '../../lib/errors.ts';
import { renderTags } from '../v1/tags.ts';
import { offsetLink, trendPage } from '../v1/trends.ts';

const READ = ['admin:read'];
const WRITE = ['admin:write'];

async function renderAdmin(services: Services, kind: TrendKind, ids: string[], viewerId: string): Promise<unknown[]> {
  const reviews = await trendReviews(services, kind, ids);
  if (kind === 'tag') {
    const tags = await renderTags(services, ids, viewerId);
    return tags.map((t) => serializeAdminTag(t, reviews.get(t.id) ?? null));
  }
  if (kind === 'status') {
    const statuses = await renderStatuses(services, ids, viewerId);
    return statuses.map((s) => ({ ...s, ...reviewFields(reviews.get(s.id) ?? null) }));
  }
  const links = await loadTrendLinks(services, ids);
  return ids.flatMap((id) => {
    const l = links.get(id);
    return l ? [{ id, ...serializeTrendLink(l), ...reviewFields(reviews.get(id) ?? null) }] : [];
  });
}

const SEGMENTS: [string, TrendKind][] = [
  ['tags', 'tag'],
  ['statuses', 'status'],
  ['links', 'link'],
];

export function adminTrendsRoutes(router: Router, services: Services): void {
  for (const [segment, kind] of SEGMENTS) {
    router.get(`/api/v1/admin/trends/${segment}`, async (ctx) => {
      const admin = await requirePermission(services, ctx, READ, 'manageTaxonomies');
      const page = trendPage(ctx, kind);
      const ids = await trendingIds(services, kind, { ...page, audience: 'admin' });
      return json(await renderAdmin(services, kind, ids, admin.account.id), { headers: offsetLink(ctx, page, ids.length) });
    });
    for (const verdict of ['approve', 'reject'] as const) {
      router.post(`/api/v1/admin/trends/${segment}/:id/${verdict}`, async (ctx: RequestContext) => {
        const admin = await requirePermission(services, ctx, WRITE, 'manageTaxonomies');
        const id = requireId(ctx.params.id);
        await reviewTrend(services, kind, id, verdict === 'approve', admin.account.id);
        const [out] = await renderAdmin(services, kind, [id], admin.account.id);
        if (!out) throw new RoostError(404, 'Record not found');
        return json(out);
      });
    }
  }
}
