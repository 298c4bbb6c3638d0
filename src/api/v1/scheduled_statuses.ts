/**
 * /api/v1/scheduled_statuses (methods/scheduled_statuses.md): the viewer's pending scheduled
 * statuses (Link-header pagination, 20 by default, 40 at most), one of them, a new time for one,
 * and cancelling one. Another account's, or one already published or cancelled, is a 404. Scopes
 * read:statuses and write:statuses, as Mastodon. Scheduling itself is POST /api/v1/statuses with
 * `scheduled_at` (v1/statuses.ts).
 */
import type { Router } from '../../http/index.ts';
import { json, paramString, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import { mediaStorage } from '../../services/media-storage.ts';
import { findScheduledStatus, loadScheduledStatusMedia, scheduledStatusesPage } from '../../services/reads/scheduled-statuses.ts';
import { cancelScheduledStatus, rescheduleStatus } from '../../services/scheduled-statuses.ts';
import { serializeScheduledStatus, type MastodonScheduledStatus, type ScheduledStatusRow } from '../../serializers/scheduled-status.ts';

const READ = ['read', 'read:statuses'];
const WRITE = ['write', 'write:statuses'];

/** A page of scheduled statuses with their attachments: one more statement whatever its size. */
export async function renderScheduledStatuses(services: Services, rows: readonly ScheduledStatusRow[]): Promise<MastodonScheduledStatus[]> {
  const media = await loadScheduledStatusMedia(services, rows.map((r) => r.id));
  const base = mediaStorage(services).baseUrl;
  return rows.map((r) => serializeScheduledStatus(r, media.get(r.id) ?? [], base));
}

/** The account's pending scheduled status rendered, or 404. */
export async function renderScheduledStatus(services: Services, accountId: string, id: string): Promise<MastodonScheduledStatus> {
  const row = await findScheduledStatus(services, accountId, id);
  if (!row) throw new RoostError(404, 'Record not found');
  return (await renderScheduledStatuses(services, [row]))[0]!;
}

export function scheduledStatusRoutes(router: Router, services: Services): void {
  router.get('/api/v1/scheduled_statuses', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ);
    const p = pageParams(ctx, 20, 40);
    const rows = await scheduledStatusesPage(services, viewer.account.id, p);
    const link = linkHeader(ctx.url, rows.map((r) => r.id), p);
    return json(await renderScheduledStatuses(services, rows), { headers: link ? { link } : {} });
  });

  router.get('/api/v1/scheduled_statuses/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ);
    return json(await renderScheduledStatus(services, viewer.account.id, requireId(ctx.params.id)));
  });

  router.put('/api/v1/scheduled_statuses/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE);
    const id = requireId(ctx.params.id);
    await rescheduleStatus(services, viewer.account.id, id, paramString(ctx.input.scheduled_at));
    return json(await renderScheduledStatus(services, viewer.account.id, id));
  });

  router.delete('/api/v1/scheduled_statuses/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE);
    await cancelScheduledStatus(services, viewer.account.id, requireId(ctx.params.id));
    return json({});
  });
}
