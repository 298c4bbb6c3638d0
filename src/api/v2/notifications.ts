/**
 * /api/v2/notifications (methods/grouped_notifications.md): the viewer's notifications in groups
 * (favourites and reblogs of one status, follows, sign-ups: `grouped_types[]` narrows which), as
 * GroupedNotificationsResults with Link headers; one group; its accounts; dismissing a group; the
 * unread count in groups after the `notifications` marker.
 */
import type { Router } from '../../http/index.ts';
import { json, paramInt, paramString, paramStrings } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { pageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import {
  notificationGroup,
  notificationGroupAccountIds,
  notificationGroupsPage,
  unreadGroupsCount,
} from '../../services/reads/notifications.ts';
import { dismissNotificationGroup } from '../../services/notifications.ts';
import { GROUPABLE_TYPES } from '../../serializers/notification.ts';
import { renderNotificationGroups } from '../../views/notifications.ts';
import { renderAccounts } from '../../views/accounts.ts';
import { notificationFilter, READ_NOTIFICATIONS, WRITE_NOTIFICATIONS } from '../v1/notifications.ts';

/** grouped_types[] (absent: every groupable type; unknown ones ignored). */
function groupedTypes(value: unknown): string[] {
  if (value === undefined) return [...GROUPABLE_TYPES];
  return paramStrings(value as never).filter((t) => GROUPABLE_TYPES.includes(t));
}

/** A group key from the path: opaque, but short and printable (else no group has it). */
function groupKeyOf(raw: unknown): string {
  const key = paramString(raw as never) ?? '';
  if (key.length === 0 || key.length > 200 || /[\u0000-\u001f]/.test(key)) throw new RoostError(404, 'Record not found');
  return key;
}

export function notificationV2Routes(router: Router, services: Services): void {
  router.get('/api/v2/notifications', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_NOTIFICATIONS);
    const p = pageParams(ctx, 40, 80);
    const groups = await notificationGroupsPage(services, viewer.account.id, p, notificationFilter(ctx), groupedTypes(ctx.query.grouped_types));
    const partialAvatars = paramString(ctx.query.expand_accounts) === 'partial_avatars';
    const body = await renderNotificationGroups(services, viewer.account.id, groups, { paged: true, partialAvatars });
    const headers: Record<string, string> = {};
    if (groups.length) {
      const make = (key: 'max_id' | 'min_id', value: string) => {
        const u = new URL(ctx.url);
        for (const k of ['max_id', 'min_id', 'since_id']) u.searchParams.delete(k);
        u.searchParams.set('limit', String(p.limit));
        u.searchParams.set(key, value);
        return u.toString();
      };
      const min = groups.reduce((m, g) => (BigInt(g.pageMinId) < BigInt(m) ? g.pageMinId : m), groups[0]!.pageMinId);
      const max = groups.reduce((m, g) => (BigInt(g.pageMaxId) > BigInt(m) ? g.pageMaxId : m), groups[0]!.pageMaxId);
      const links = [];
      if (groups.length >= p.limit) links.push(`<${make('max_id', min)}>; rel="next"`);
      links.push(`<${make('min_id', max)}>; rel="prev"`);
      headers.link = links.join(', ');
    }
    return json(body, { headers });
  });

  router.get('/api/v2/notifications/unread_count', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_NOTIFICATIONS);
    const limit = paramInt(ctx.query.limit, 100, { min: 1, max: 1000 });
    const count = await unreadGroupsCount(services, viewer.account.id, limit, notificationFilter(ctx), groupedTypes(ctx.query.grouped_types));
    return json({ count });
  });

  router.get('/api/v2/notifications/:group_key', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_NOTIFICATIONS);
    const group = await notificationGroup(services, viewer.account.id, groupKeyOf(ctx.params.group_key));
    const body = group ? await renderNotificationGroups(services, viewer.account.id, [group], { paged: false }) : null;
    if (!body || body.notification_groups.length === 0) throw new RoostError(404, 'Record not found');
    return json(body);
  });

  router.post('/api/v2/notifications/:group_key/dismiss', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_NOTIFICATIONS);
    await dismissNotificationGroup(services, viewer.account.id, groupKeyOf(ctx.params.group_key));
    return json({});
  });

  router.get('/api/v2/notifications/:group_key/accounts', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_NOTIFICATIONS);
    const ids = await notificationGroupAccountIds(services, viewer.account.id, groupKeyOf(ctx.params.group_key));
    if (ids.length === 0) throw new RoostError(404, 'Record not found');
    return json(await renderAccounts(services, ids));
  });
}
