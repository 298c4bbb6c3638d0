/** GET /api/v1/preferences: the user's posting and reading defaults. */
import type { Router } from '../../http/index.ts';
import { json } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { serializePreferences } from '../../serializers/preferences.ts';
import { loadCredentialAccount } from '../../services/reads/credentials.ts';

export function preferencesRoutes(router: Router, services: Services): void {
  router.get('/api/v1/preferences', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['read', 'read:accounts']);
    // Read fresh: the viewer's rows may come from the authentication cache (a few seconds old).
    const own = await loadCredentialAccount(services, viewer.account.id);
    return json(serializePreferences(own.account, own.user));
  });
}
