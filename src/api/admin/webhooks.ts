/**
 * /api/v1/admin/webhooks: Mastodon's admin webhooks (its Admin::WebhooksController, which Mastodon
 * serves as web pages only; the same actions as JSON): list, show, create (url, events[]), update
 * (PUT or PATCH), enable, disable, rotate_secret, delete. A Roost extension beside them:
 * GET /api/v1/admin/webhooks/:id/failures, the deliveries that did not go through (attempts, last
 * status, last error). A user's token with admin:read / admin:write and a role that may manage
 * webhooks.
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramInt, paramString, paramStrings, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requirePermission } from '../auth.ts';
import { RoostError } from '../../lib/errors.ts';
import {
  allWebhooks,
  createWebhook,
  deleteWebhook,
  disableWebhook,
  enableWebhook,
  rotateWebhookSecret,
  updateWebhook,
  findWebhook,
  webhookFailures,
  type WebhookInput,
} from '../../services/webhooks.ts';
import { serializeAdminWebhook, serializeWebhookFailure } from '../../serializers/admin-webhook.ts';

const READ = ['admin:read'];
const WRITE = ['admin:write'];

function input(ctx: RequestContext): WebhookInput {
  const p = ctx.input;
  return {
    url: p.url === undefined ? undefined : (paramString(p.url) ?? ''),
    events: p.events === undefined ? undefined : paramStrings(p.events),
  };
}

export function adminWebhookRoutes(router: Router, services: Services): void {
  router.get('/api/v1/admin/webhooks', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageWebhooks');
    return json((await allWebhooks(services)).map(serializeAdminWebhook));
  });

  router.get('/api/v1/admin/webhooks/:id', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageWebhooks');
    const row = await findWebhook(services, requireId(ctx.params.id));
    if (!row) throw new RoostError(404, 'Record not found');
    return json(serializeAdminWebhook(row));
  });

  router.get('/api/v1/admin/webhooks/:id/failures', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageWebhooks');
    const id = requireId(ctx.params.id);
    if (!(await findWebhook(services, id))) throw new RoostError(404, 'Record not found');
    const limit = paramInt(ctx.input.limit, 40, { min: 1, max: 200 });
    return json((await webhookFailures(services, id, limit)).map(serializeWebhookFailure));
  });

  router.post('/api/v1/admin/webhooks', async (ctx) => {
    const { account } = await requirePermission(services, ctx, WRITE, 'manageWebhooks');
    return json(serializeAdminWebhook(await createWebhook(services, { url: '', events: [], ...input(ctx) }, account.id)));
  });

  router.update('/api/v1/admin/webhooks/:id', async (ctx) => {
    const { account } = await requirePermission(services, ctx, WRITE, 'manageWebhooks');
    return json(serializeAdminWebhook(await updateWebhook(services, requireId(ctx.params.id), input(ctx), account.id)));
  });

  for (const [action, run] of [
    ['enable', enableWebhook],
    ['disable', disableWebhook],
    ['rotate_secret', rotateWebhookSecret],
  ] as const) {
    router.post(`/api/v1/admin/webhooks/:id/${action}`, async (ctx) => {
      const { account } = await requirePermission(services, ctx, WRITE, 'manageWebhooks');
      return json(serializeAdminWebhook(await run(services, requireId(ctx.params.id), account.id)));
    });
  }

  router.delete('/api/v1/admin/webhooks/:id', async (ctx) => {
    const { account } = await requirePermission(services, ctx, WRITE, 'manageWebhooks');
    await deleteWebhook(services, requireId(ctx.params.id), account.id);
    return json({});
  });
}
