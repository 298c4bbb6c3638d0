/** OAuth applications → Mastodon's Application and CredentialApplication entities. */
import type { OAuthApplication } from '../db/entities/index.ts';
import { parseScopes } from '../lib/scopes.ts';

export interface MastodonApplication {
  id: string;
  name: string;
  website: string | null;
  scopes: string[];
  redirect_uri: string;
  redirect_uris: string[];
  vapid_key: string;
}

export interface MastodonCredentialApplication extends MastodonApplication {
  client_id: string;
  client_secret: string;
  client_secret_expires_at: number;
}

export function serializeApplication(app: OAuthApplication, vapidKey: string): MastodonApplication {
  return {
    id: app.id,
    name: app.name,
    website: app.website || null,
    scopes: parseScopes(app.scopes),
    redirect_uri: app.redirectUris.join('\n'),
    redirect_uris: [...app.redirectUris],
    vapid_key: vapidKey,
  };
}

export function serializeCredentialApplication(app: OAuthApplication, vapidKey: string): MastodonCredentialApplication {
  return { ...serializeApplication(app, vapidKey), client_id: app.clientId, client_secret: app.clientSecret, client_secret_expires_at: 0 };
}

/** What a status shows of the app that posted it (author only): name and website. */
export function serializeStatusApplication(app: OAuthApplication): { name: string; website: string | null } {
  return { name: app.name, website: app.website || null };
}
