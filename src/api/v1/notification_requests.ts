/**
 * Mastodon 4.3's notification policy and requests (methods/notifications.md):
 *
 *   GET/PATCH /api/v2/notifications/policy   the policy (accept / filter / drop per category)
 *   GET/PUT/PATCH /api/v1/notifications/policy  the same in 4.2's form (`filter_*` booleans)
 *   GET  /api/v1/notifications/requests      the requests, newest first (40, 80 at most; Link)
 *   GET  /api/v1/notifications/requests/:id  one
 *   POST /api/v1/notifications/requests/:id/accept, /:id/dismiss   one
 *   POST /api/v1/notifications/requests/accept, /dismiss   several (`id[]`, unknown ones ignored)
 *   GET  /api/v1/notifications/requests/merged   `{ merged: true }`: Roost merges an accepted
 *        request's notifications in the accepting request, so it is never pending
 *
 * Registered before the notification routes whose `:id` / `:group_key` would otherwise be asked
 * first by a reader of the table (the router tries static segments first either way).
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramBool, paramIds, paramString, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import { notificationPolicy, notificationRequest, notificationRequestsPage, POLICY_FIELDS } from '../../services/reads/notification-requests.ts';
import { acceptNotificationRequests, dismissNotificationRequests, updateNotificationPolicy } from '../../services/notification-requests.ts';
import { serializeNotificationPolicy, serializeNotificationPolicyV1, type PolicyField } from '../../serializers/notification-request.ts';
import { renderNotificationRequests } from '../../views/notification-requests.ts';
import { READ_NOTIFICATIONS, WRITE_NOTIFICATIONS } from './notifications.ts';

/** Requests a batch takes at most (Mastodon's batch accept/dismiss limit). */
const MAX_BATCH = 100;

/** v2 form: each field a string, only scalars (an array or a hash is as if not sent, as Rails' permit). */
function v2Changes(ctx: RequestContext): Partial<Record<PolicyField, string>> {
  const out: Partial<Record<PolicyField, string>> = {};
  for (const f of POLICY_FIELDS) {
    const v = paramString(ctx.input[f]);
    if (v !== undefined) out[f] = v;
  }
  return out;
}

/** v1 form: `filter_<category>` booleans, true → filter, false → accept (4.2 had no limited accounts field). */
function v1Changes(ctx: RequestContext): Partial<Record<PolicyField, string>> {
  const out: Partial<Record<PolicyField, string>> = {};
  for (const f of ['for_not_following', 'for_not_followers', 'for_new_accounts', 'for_private_mentions'] as const) {
    const raw = ctx.input[`filter_${f.slice(4)}`];
    if (paramString(raw) === undefined) continue;
    out[f] = paramBool(raw) ? 'filter' : 'accept';
  }
  return out;
}

export function notificationRequestRoutes(router: Router, services: Services): void {
  router.get('/api/v2/notifications/policy', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_NOTIFICATIONS);
    return json(serializeNotificationPolicy(await notificationPolicy(services, viewer.account.id)));
  });
  router.patch('/api/v2/notifications/policy', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_NOTIFICATIONS);
    await updateNotificationPolicy(services, viewer.account.id, v2Changes(ctx));
    return json(serializeNotificationPolicy(await notificationPolicy(services, viewer.account.id)));
  });
  router.get('/api/v1/notifications/policy', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_NOTIFICATIONS);
    return json(serializeNotificationPolicyV1(await notificationPolicy(services, viewer.account.id)));
  });
  router.update('/api/v1/notifications/policy', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_NOTIFICATIONS);
    await updateNotificationPolicy(services, viewer.account.id, v1Changes(ctx));
    return json(serializeNotificationPolicyV1(await notificationPolicy(services, viewer.account.id)));
  });

  router.get('/api/v1/notifications/requests', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_NOTIFICATIONS);
    const p = pageParams(ctx, 40, 80);
    const rows = await notificationRequestsPage(services, viewer.account.id, p);
    const link = linkHeader(ctx.url, rows.map((r) => r.id), p);
    return json(await renderNotificationRequests(services, viewer.account.id, rows), { headers: link ? { link } : {} });
  });
  router.get('/api/v1/notifications/requests/merged', async (ctx) => {
    await requireUser(services, ctx, READ_NOTIFICATIONS);
    return json({ merged: true });
  });
  router.post('/api/v1/notifications/requests/accept', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_NOTIFICATIONS);
    await acceptNotificationRequests(services, viewer.account.id, paramIds(ctx.input.id, MAX_BATCH));
    return json({});
  });
  router.post('/api/v1/notifications/requests/dismiss', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_NOTIFICATIONS);
    await dismissNotificationRequests(services, viewer.account.id, paramIds(ctx.input.id, MAX_BATCH));
    return json({});
  });
  router.get('/api/v1/notifications/requests/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_NOTIFICATIONS);
    const row = await notificationRequest(services, viewer.account.id, requireId(ctx.params.id));
    const [body] = row ? await renderNotificationRequests(services, viewer.account.id, [row]) : [];
    if (!body) throw new RoostError(404, 'Record not found');
    return json(body);
  });
  router.post('/api/v1/notifications/requests/:id/accept', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_NOTIFICATIONS);
    await acceptNotificationRequests(services, viewer.account.id, [requireId(ctx.params.id)], true);
    return json({});
  });
  router.post('/api/v1/notifications/requests/:id/dismiss', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_NOTIFICATIONS);
    await dismissNotificationRequests(services, viewer.account.id, [requireId(ctx.params.id)], true);
    return json({});
  });
}
