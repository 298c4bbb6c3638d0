/**
 * /api/v1/notifications (methods/notifications.md): the viewer's notifications, newest first (40 by
 * default, 80 at most; `types[]`, `exclude_types[]`, `account_id`; Link headers), one of them,
 * dismissing one or all, and the unread count after the `notifications` marker (100 by default,
 * 1000 at most). Written by effects/notifications.ts.
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramBool, paramId, paramInt, paramString, paramStrings, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import { notificationsPage, unreadNotificationsCount, type NotificationFilter } from '../../services/reads/notifications.ts';
import { clearNotifications, dismissNotification } from '../../services/notifications.ts';
import { renderNotificationRows, renderNotifications } from '../../views/notifications.ts';

export const READ_NOTIFICATIONS = ['read', 'read:notifications'];
export const WRITE_NOTIFICATIONS = ['write', 'write:notifications'];

/**
 * types[] / exclude_types[] / account_id / include_filtered of a request (an account_id that is no
 * id matches nothing).
 */
export function notificationFilter(ctx: RequestContext): NotificationFilter {
  const raw = ctx.query.account_id;
  const accountId = raw === undefined || raw === '' ? null : (paramId(raw) ?? '0');
  const strings = (v: unknown) => paramStrings(v as never).filter((s) => s.length > 0 && s.length <= 64).slice(0, 32);
  const includeFiltered = paramBool(paramString(ctx.query.include_filtered), false);
  return { types: strings(ctx.query.types), excludeTypes: strings(ctx.query.exclude_types), accountId, includeFiltered };
}

export function notificationRoutes(router: Router, services: Services): void {
  router.get('/api/v1/notifications', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_NOTIFICATIONS);
    const p = pageParams(ctx, 40, 80);
    const rows = await notificationsPage(services, viewer.account.id, p, notificationFilter(ctx));
    const link = linkHeader(ctx.url, rows.map((r) => r.id), p);
    return json(await renderNotificationRows(services, viewer.account.id, rows), { headers: link ? { link } : {} });
  });

  router.get('/api/v1/notifications/unread_count', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_NOTIFICATIONS);
    const limit = paramInt(ctx.query.limit, 100, { min: 1, max: 1000 });
    return json({ count: await unreadNotificationsCount(services, viewer.account.id, limit, notificationFilter(ctx)) });
  });

  router.post('/api/v1/notifications/clear', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_NOTIFICATIONS);
    await clearNotifications(services, viewer.account.id);
    return json({});
  });

  router.get('/api/v1/notifications/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_NOTIFICATIONS);
    const [n] = await renderNotifications(services, viewer.account.id, [requireId(ctx.params.id)]);
    if (!n) throw new RoostError(404, 'Record not found');
    return json(n);
  });

  router.post('/api/v1/notifications/:id/dismiss', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_NOTIFICATIONS);
    await dismissNotification(services, viewer.account.id, requireId(ctx.params.id));
    return json({});
  });
}
