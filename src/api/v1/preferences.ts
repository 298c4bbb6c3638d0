/** GET /api/v1/preferences: the user's posting and reading defaults. */
import type { Router } from '../../http/index.ts';
import { json } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { serializePreferences } from '../../serializers/preferences.ts';

export function preferencesRoutes(router: Router, services: Services): void {
  router.get('/api/v1/preferences', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['read', 'read:accounts']);
    return json(serializePreferences(viewer.account, viewer.user));
  });
}
