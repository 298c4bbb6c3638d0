/**
 * Access tokens: random 256-bit bearer strings handed to the client once and stored only as their
 * SHA-256 (a leaked database holds no usable token).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Services } from '../context.ts';
import { OAuthAccessTokenSchema, type OAuthAccessToken } from '../db/entities/index.ts';
import { forgetViewer, rememberValidToken } from './reads/viewer.ts';

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export async function issueAccessToken(
  services: Services,
  input: { applicationId: string | null; userId: string | null; scopes: readonly string[] },
): Promise<{ token: string; row: OAuthAccessToken }> {
  const token = randomToken();
  const em = services.db.em();
  const row = em.create(OAuthAccessTokenSchema, {
    id: services.ids.next(),
    applicationId: input.applicationId,
    userId: input.userId,
    tokenHash: hashSecret(token),
    scopes: input.scopes.join(' '),
    createdAt: services.clock.now(),
  });
  await em.flush();
  rememberValidToken(services, row.tokenHash);
  return { token, row };
}

/** Authentication is a read: one statement, briefly cached (reads/viewer.ts). */
export { viewerForToken, type Viewer } from './reads/viewer.ts';

/** Revokes a token for the app that owns it: 'revoked' (also when already revoked), 'unknown', or 'other-application'. */
export async function revokeToken(
  services: Services,
  token: string,
  applicationId: string,
): Promise<'revoked' | 'unknown' | 'other-application'> {
  const em = services.db.em();
  const row = await em.findOne(OAuthAccessTokenSchema, { tokenHash: hashSecret(token) });
  if (!row) return 'unknown';
  if (row.applicationId !== applicationId) return 'other-application';
  if (!row.revokedAt) {
    row.revokedAt = services.clock.now();
    await em.flush();
  }
  forgetViewer(services, row.tokenHash);
  return 'revoked';
}
