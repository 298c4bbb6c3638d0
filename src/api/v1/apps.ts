/** POST /api/v1/apps and GET /api/v1/apps/verify_credentials. */
import type { Router } from '../../http/index.ts';
import { json, paramString, paramStrings } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { createApplication } from '../../services/oauth.ts';
import { requireToken } from '../auth.ts';
import { applicationById } from '../../services/reads/apps.ts';
import { serializeApplication, serializeCredentialApplication } from '../../serializers/application.ts';

export function appsRoutes(router: Router, services: Services): void {
  router.post('/api/v1/apps', async (ctx) => {
    const raw = ctx.input.redirect_uris ?? ctx.input.redirect_uri;
    // A string may carry several URIs separated by whitespace (one per line in Mastodon's form).
    const redirectUris = Array.isArray(raw) ? paramStrings(raw) : [paramString(raw) ?? ''];
    const app = await createApplication(services, {
      name: paramString(ctx.input.client_name),
      redirectUris,
      scopes: paramString(ctx.input.scopes),
      website: paramString(ctx.input.website),
    });
    return json(serializeCredentialApplication(app, services.secrets.vapidPublicKey));
  });

  router.get('/api/v1/apps/verify_credentials', async (ctx) => {
    const viewer = await requireToken(services, ctx, []);
    const app = await applicationById(services, viewer.token.applicationId ?? null);
    if (!app) return json({ error: 'The access token is invalid' }, { status: 401 });
    return json(serializeApplication(app, services.secrets.vapidPublicKey));
  });
}
