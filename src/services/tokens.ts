/**
 * Access tokens: random 256-bit bearer strings handed to the client once and stored only as their
 * SHA-256 (a leaked database holds no usable token).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Services } from '../context.ts';
import {
  AccountSchema,
  OAuthAccessTokenSchema,
  UserSchema,
  type Account,
  type OAuthAccessToken,
  type User,
} from '../db/entities/index.ts';
import { parseScopes } from '../lib/scopes.ts';
import { recordUserActivity } from './accounts.ts';

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
  return { token, row };
}

export interface Viewer {
  token: OAuthAccessToken;
  scopes: string[];
  /** Null for client-credentials tokens (an app acting for nobody). */
  user: User | null;
  account: Account | null;
}

/** The viewer a bearer token stands for, or null when it is unknown, revoked or expired. */
export async function viewerForToken(services: Services, token: string): Promise<Viewer | null> {
  const em = services.db.em();
  const row = await em.findOne(OAuthAccessTokenSchema, { tokenHash: hashSecret(token) });
  const now = services.clock.now();
  if (!row || row.revokedAt || (row.expiresAt && row.expiresAt <= now)) return null;
  let user: User | null = null;
  let account: Account | null = null;
  if (row.userId) {
    user = await em.findOne(UserSchema, { id: row.userId });
    if (!user || user.disabled) return null;
    account = await em.findOne(AccountSchema, { id: user.accountId });
    if (!account || account.suspendedAt) return null;
    // Activity counts once a day per user (NodeInfo active users, instance activity logins).
    if (!row.lastUsedAt || row.lastUsedAt.toISOString().slice(0, 10) !== now.toISOString().slice(0, 10)) {
      row.lastUsedAt = now;
      await em.flush();
      await recordUserActivity(services, user.id);
    }
  }
  return { token: row, scopes: parseScopes(row.scopes), user, account };
}

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
  return 'revoked';
}
