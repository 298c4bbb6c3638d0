/**
 * /api/v1/lists (Mastodon's methods/lists.md): the viewer's lists, CRUD, and their members
 * (/api/v1/lists/:id/accounts, paged by account id with Link headers, `limit=0` for all), and
 * GET /api/v1/accounts/:id/lists (the viewer's lists holding that account). The list timeline is
 * in timelines.ts. Another user's list is a 404, as a missing one.
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramBool, paramString, paramStrings, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { renderAccounts } from '../../views/accounts.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { notFound } from '../../lib/errors.ts';
import { serializeList } from '../../serializers/list.ts';
import { listMembersPage, listOf, listsContaining, listsOf } from '../../services/reads/user-lists.ts';
import { addListAccounts, createList, deleteList, removeListAccounts, updateList, type ListInput } from '../../services/lists.ts';

export const READ_LISTS = ['read', 'read:lists'];
const WRITE_LISTS = ['write', 'write:lists'];

function listInput(ctx: RequestContext): ListInput {
  const p = ctx.input;
  // Scalars only, as Rails' permit: an array or a hash is as if not sent.
  const exclusive = paramString(p.exclusive) === undefined ? undefined : paramBool(p.exclusive);
  return { title: paramString(p.title), repliesPolicy: paramString(p.replies_policy), exclusive };
}

async function ownList(services: Services, ownerId: string, rawId: string | undefined) {
  const list = await listOf(services, ownerId, requireId(rawId));
  if (!list) throw notFound();
  return list;
}

export function listRoutes(router: Router, services: Services): void {
  router.get('/api/v1/lists', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_LISTS);
    return json((await listsOf(services, viewer.account.id)).map(serializeList));
  });

  router.post('/api/v1/lists', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_LISTS);
    return json(serializeList(await createList(services, viewer.account.id, listInput(ctx))));
  });

  router.get('/api/v1/lists/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_LISTS);
    return json(serializeList(await ownList(services, viewer.account.id, ctx.params.id)));
  });

  // PUT, and PATCH as Rails' `resources` routes it too.
  router.update('/api/v1/lists/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_LISTS);
    return json(serializeList(await updateList(services, viewer.account.id, requireId(ctx.params.id), listInput(ctx))));
  });

  router.delete('/api/v1/lists/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_LISTS);
    await deleteList(services, viewer.account.id, requireId(ctx.params.id));
    return json({});
  });

  router.get('/api/v1/lists/:id/accounts', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_LISTS);
    const list = await ownList(services, viewer.account.id, ctx.params.id);
    // `limit=0`: every member, unpaged (Mastodon's `unlimited?`), without a Link header.
    if (paramString(ctx.query.limit) === '0') return json(await renderAccounts(services, await listMembersPage(services, list.id, null)));
    const p = pageParams(ctx, 40, 80);
    const ids = await listMembersPage(services, list.id, p);
    const link = linkHeader(ctx.url, ids, p, 'since_id');
    return json(await renderAccounts(services, ids), { headers: link ? { link } : {} });
  });

  router.post('/api/v1/lists/:id/accounts', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_LISTS);
    await addListAccounts(services, viewer.account.id, requireId(ctx.params.id), paramStrings(ctx.input.account_ids));
    return json({});
  });

  router.delete('/api/v1/lists/:id/accounts', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_LISTS);
    await removeListAccounts(services, viewer.account.id, requireId(ctx.params.id), paramStrings(ctx.input.account_ids));
    return json({});
  });

  router.get('/api/v1/accounts/:id/lists', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_LISTS);
    const lists = await listsContaining(services, viewer.account.id, requireId(ctx.params.id));
    if (!lists) throw notFound();
    return json(lists.map(serializeList));
  });
}
