/**
 * /api/v1_alpha/async_refreshes/:id (Mastodon 4.4's experimental methods/async_refreshes.md): how
 * a background refresh a response announced (`Mastodon-Async-Refresh: id="…"`) is doing:
 * `{"async_refresh": {"id", "status": "running"|"finished", "result_count"}}`. Today the one kind
 * is a thread's fetch of its missing replies (services/threads.ts). User token + `read`.
 */
import type { Router } from '../../http/index.ts';
import { json } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { RoostError } from '../../lib/errors.ts';
import { asyncRefresh } from '../../services/threads.ts';

export function asyncRefreshRoutes(router: Router, services: Services): void {
  router.get('/api/v1_alpha/async_refreshes/:id', async (ctx) => {
    await requireUser(services, ctx, ['read']);
    const id = String(ctx.params.id ?? '');
    const refresh = /^[A-Za-z0-9_-]{1,64}$/.test(id) ? await asyncRefresh(services, id) : null;
    if (!refresh) throw new RoostError(404, 'Not Found');
    return json({ async_refresh: refresh });
  });
}
