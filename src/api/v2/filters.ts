/**
 * /api/v2/filters (Mastodon's methods/filters.md, server-side filters): the viewer's filters with
 * their keywords and statuses; keyword sub-resources where shipped Mastodon serves them
 * (/api/v2/filters/:filter_id/keywords, /api/v2/filters/keywords/:id) and where the mission spec
 * puts them (POST /api/v2/filters/:filter_id/keywords/:id, /api/v1/filters/keywords/:id); status
 * filters (/api/v2/filters/:filter_id/statuses, /api/v2/filters/statuses/:id). Another's filter,
 * keyword or status filter is a 404, as a missing one.
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramString, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { notFound } from '../../lib/errors.ts';
import { serializeFilter, serializeFilterKeyword, serializeFilterStatus } from '../../serializers/filter.ts';
import { filterKeywordOf, filterOf, filterStatusOf, filtersOf } from '../../services/reads/filters.ts';
import {
  addFilterKeyword,
  addFilterStatus,
  createFilter,
  deleteFilter,
  deleteFilterKeyword,
  deleteFilterStatus,
  updateFilter,
  updateFilterKeyword,
} from '../../services/filters.ts';
import { READ_FILTERS, WRITE_FILTERS, filterInput, keywordInput } from '../filter-params.ts';

async function ownFilter(services: Services, accountId: string, rawId: string | undefined) {
  const filter = await filterOf(services, accountId, requireId(rawId));
  if (!filter) throw notFound();
  return filter;
}

/** The keyword routes' handlers, served at both path families. */
function keywordHandlers(services: Services) {
  return {
    async show(ctx: RequestContext) {
      const viewer = await requireUser(services, ctx, READ_FILTERS);
      const found = await filterKeywordOf(services, viewer.account.id, requireId(ctx.params.id));
      if (!found) throw notFound();
      return json(serializeFilterKeyword(found.keyword));
    },
    async update(ctx: RequestContext) {
      const viewer = await requireUser(services, ctx, WRITE_FILTERS);
      return json(serializeFilterKeyword(await updateFilterKeyword(services, viewer.account.id, requireId(ctx.params.id), keywordInput(ctx.input))));
    },
    async destroy(ctx: RequestContext) {
      const viewer = await requireUser(services, ctx, WRITE_FILTERS);
      await deleteFilterKeyword(services, viewer.account.id, requireId(ctx.params.id));
      return json({});
    },
    async create(ctx: RequestContext) {
      const viewer = await requireUser(services, ctx, WRITE_FILTERS);
      return json(serializeFilterKeyword(await addFilterKeyword(services, viewer.account.id, requireId(ctx.params.filter_id), keywordInput(ctx.input))));
    },
  };
}

export function filterV2Routes(router: Router, services: Services): void {
  router.get('/api/v2/filters', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_FILTERS);
    return json((await filtersOf(services, viewer.account.id)).map((f) => serializeFilter(f)));
  });

  router.post('/api/v2/filters', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_FILTERS);
    return json(serializeFilter(await createFilter(services, viewer.account.id, filterInput(ctx.input))));
  });

  router.get('/api/v2/filters/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_FILTERS);
    return json(serializeFilter(await ownFilter(services, viewer.account.id, ctx.params.id)));
  });

  // PUT, and PATCH as Rails' `resources` routes it too.
  router.update('/api/v2/filters/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_FILTERS);
    return json(serializeFilter(await updateFilter(services, viewer.account.id, requireId(ctx.params.id), filterInput(ctx.input))));
  });

  router.delete('/api/v2/filters/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_FILTERS);
    await deleteFilter(services, viewer.account.id, requireId(ctx.params.id));
    return json({});
  });

  // Keywords
  const kw = keywordHandlers(services);
  router.get('/api/v2/filters/:filter_id/keywords', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_FILTERS);
    return json((await ownFilter(services, viewer.account.id, ctx.params.filter_id)).keywords.map(serializeFilterKeyword));
  });
  router.post('/api/v2/filters/:filter_id/keywords', kw.create);
  router.get('/api/v2/filters/keywords/:id', kw.show);
  router.update('/api/v2/filters/keywords/:id', kw.update);
  router.delete('/api/v2/filters/keywords/:id', kw.destroy);
  // Where the mission spec puts them: a keyword added at /api/v2/filters/:filter_id/keywords/:id
  // (the :id names no row yet: it must only be an id), one keyword under /api/v1/filters/keywords.
  router.post('/api/v2/filters/:filter_id/keywords/:id', async (ctx) => {
    requireId(ctx.params.id);
    return kw.create(ctx);
  });
  router.get('/api/v1/filters/keywords/:id', kw.show);
  router.update('/api/v1/filters/keywords/:id', kw.update);
  router.delete('/api/v1/filters/keywords/:id', kw.destroy);

  // Status filters
  router.get('/api/v2/filters/:filter_id/statuses', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_FILTERS);
    return json((await ownFilter(services, viewer.account.id, ctx.params.filter_id)).statuses.map(serializeFilterStatus));
  });
  router.post('/api/v2/filters/:filter_id/statuses', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_FILTERS);
    return json(serializeFilterStatus(await addFilterStatus(services, viewer.account.id, requireId(ctx.params.filter_id), paramString(ctx.input.status_id))));
  });
  router.get('/api/v2/filters/statuses/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_FILTERS);
    const row = await filterStatusOf(services, viewer.account.id, requireId(ctx.params.id));
    if (!row) throw notFound();
    return json(serializeFilterStatus(row));
  });
  router.delete('/api/v2/filters/statuses/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_FILTERS);
    await deleteFilterStatus(services, viewer.account.id, requireId(ctx.params.id));
    return json({});
  });
}
