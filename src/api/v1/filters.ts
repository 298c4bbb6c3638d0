/**
 * /api/v1/filters (Mastodon's methods/filters.md, client-side v1 methods, deprecated since 4.0):
 * each keyword of the viewer's filters is one legacy filter (its id the keyword's), rendered by
 * the legacy serializer (serializeV1Filter). Creating one makes a filter of one keyword; deleting
 * one removes only the keyword. The single-keyword routes under /api/v1/filters/keywords are in
 * api/v2/filters.ts with the other keyword routes.
 */
import type { Router } from '../../http/index.ts';
import { json, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { notFound } from '../../lib/errors.ts';
import { serializeV1Filter } from '../../serializers/filter.ts';
import { filterKeywordOf, v1FiltersOf } from '../../services/reads/filters.ts';
import { createV1Filter, deleteFilterKeyword, updateV1Filter } from '../../services/filters.ts';
import { READ_FILTERS, WRITE_FILTERS, v1FilterInput } from '../filter-params.ts';

export function filterV1Routes(router: Router, services: Services): void {
  router.get('/api/v1/filters', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_FILTERS);
    return json((await v1FiltersOf(services, viewer.account.id)).map(({ filter, keyword }) => serializeV1Filter(filter, keyword)));
  });

  router.post('/api/v1/filters', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_FILTERS);
    const { filter, keyword } = await createV1Filter(services, viewer.account.id, v1FilterInput(ctx.input));
    return json(serializeV1Filter(filter, keyword));
  });

  router.get('/api/v1/filters/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_FILTERS);
    const found = await filterKeywordOf(services, viewer.account.id, requireId(ctx.params.id));
    if (!found) throw notFound();
    return json(serializeV1Filter(found.filter, found.keyword));
  });

  router.update('/api/v1/filters/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_FILTERS);
    const { filter, keyword } = await updateV1Filter(services, viewer.account.id, requireId(ctx.params.id), v1FilterInput(ctx.input));
    return json(serializeV1Filter(filter, keyword));
  });

  router.delete('/api/v1/filters/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_FILTERS);
    await deleteFilterKeyword(services, viewer.account.id, requireId(ctx.params.id));
    return json({});
  });
}
