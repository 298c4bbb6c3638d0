/**
 * Authentication's read: a bearer token → the token, its user and the user's account, in one
 * indexed statement (oauth_access_tokens.token_hash is unique), cached briefly per instance.
 *
 * The cache holds a viewer for VIEWER_CACHE_TTL_MS. A revoke in this process forgets the token at
 * once (forgetViewer); another process sharing the database sees it within the TTL, as it sees a
 * disabled user or a suspended account. Routes use the viewer's ids and flags only: its rows may
 * be that old (verify_credentials and preferences read the account afresh).
 */
import { createHash } from 'node:crypto';
import type { Services } from '../../context.ts';
import type { Account, OAuthAccessToken, User } from '../../db/entities/index.ts';
import { parseScopes } from '../../lib/scopes.ts';
import { recordUserActivity } from '../accounts.ts';
import { accountColumns, accountFromRow, tokenColumns, tokenFromRow, userColumns, userFromRow } from './account-rows.ts';
import { prepared } from '../../db/prepared.ts';

export interface Viewer {
  token: OAuthAccessToken;
  scopes: string[];
  /** Null for client-credentials tokens (an app acting for nobody). */
  user: User | null;
  account: Account | null;
}

/**
 * Wall time (Date.now), not the instance's Clock: the cache's age is a property of this process,
 * and a lab's controllable clock standing still must not keep a stale viewer forever.
 */
export const VIEWER_CACHE_TTL_MS = 5_000;
const VIEWER_CACHE_MAX = 10_000;

interface Entry {
  at: number;
  viewer: Promise<Viewer | null>;
}
/** Per instance (several live in one process): token hash → viewer. */
const caches = new WeakMap<Services, Map<string, Entry>>();

function cacheOf(services: Services): Map<string, Entry> {
  let c = caches.get(services);
  if (!c) caches.set(services, (c = new Map()));
  return c;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The viewer a bearer token stands for, or null when it is unknown, revoked or expired. */
export function viewerForToken(services: Services, token: string): Promise<Viewer | null> {
  const hash = hashToken(token);
  const cache = cacheOf(services);
  const now = Date.now();
  const hit = cache.get(hash);
  if (hit && now - hit.at < VIEWER_CACHE_TTL_MS) return hit.viewer;
  if (hit) cache.delete(hash);
  const viewer = loadViewer(services, hash);
  if (cache.size >= VIEWER_CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(hash, { at: now, viewer });
  viewer.catch(() => cache.delete(hash));
  return viewer;
}

/** A token was revoked here: forget it now (by its hash), or everything of this instance (no hash). */
export function forgetViewer(services: Services, tokenHash?: string): void {
  const cache = caches.get(services);
  if (!cache) return;
  if (tokenHash === undefined) cache.clear();
  else cache.delete(tokenHash);
}

/** {@link loadViewer}'s statement: the token, its user and account. */
const VIEWER_SQL = prepared(
  `select ${tokenColumns('t', 't_')}, ${userColumns('u', 'u_')}, ${accountColumns('a', 'a_')}
       from oauth_access_tokens t
       left join users u on u.id = t.user_id
       left join accounts a on a.id = u.account_id
      where t.token_hash = $1`,
);

async function loadViewer(services: Services, hash: string): Promise<Viewer | null> {
  const [row] = await services.db.sql.query<Record<string, unknown>>(
    VIEWER_SQL,
    [hash],
  );
  if (!row) return null;
  const token = tokenFromRow(row, 't_');
  const now = services.clock.now();
  if (token.revokedAt || (token.expiresAt && token.expiresAt <= now)) return null;
  let user: User | null = null;
  let account: Account | null = null;
  if (token.userId) {
    if (row.u_id === null || row.a_id === null) return null;
    user = userFromRow(row, 'u_');
    account = accountFromRow(row, 'a_');
    if (user.disabled || account.suspendedAt) return null;
    // Activity counts once a day per user (NodeInfo active users, instance activity logins).
    if (!token.lastUsedAt || token.lastUsedAt.toISOString().slice(0, 10) !== now.toISOString().slice(0, 10)) {
      token.lastUsedAt = now;
      await recordTokenUse(services, token.id, user.id, now);
    }
  }
  return { token, scopes: parseScopes(token.scopes), user, account };
}

async function recordTokenUse(services: Services, tokenId: string, userId: string, now: Date): Promise<void> {
  await services.db.sql.query(`update oauth_access_tokens set last_used_at = $1 where id = $2`, [now, tokenId]);
  await recordUserActivity(services, userId);
}
