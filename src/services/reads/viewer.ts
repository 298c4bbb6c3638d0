/**
 * Authentication's read: a bearer token → the token, its user, the user's account and the
 * permission bits of the user's role, in one indexed statement (oauth_access_tokens.token_hash is
 * unique), cached briefly per instance. The role's bits ride along so that an admin route's
 * permission check (api/auth.ts requirePermission) costs no round trip of its own.
 *
 * The cache holds a viewer for VIEWER_CACHE_TTL_MS. A revoke, a role given or taken, or a role's
 * permissions changed in this process forgets cached viewers at once (forgetViewer); another
 * process sharing the database sees it within the TTL, as it sees a disabled user or a suspended
 * account. Routes use the viewer's ids and flags only: its rows may
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
  /** The permission bits of the user's role (a decimal string, as user_roles.permissions); null without a role or a user. */
  rolePermissions: string | null;
}

/**
 * Wall time (Date.now), not the instance's Clock: the cache's age is a property of this process,
 * and a lab's controllable clock standing still must not keep a stale viewer forever.
 */
export const VIEWER_CACHE_TTL_MS = 5_000;
const VIEWER_CACHE_MAX = 10_000;

/**
 * Tokens seen valid lately (hash → when, ms), kept longer than the viewer cache: the rate limiter
 * looks a bearer string up for an address already over its limit only when it is one of these
 * (services/rate-limits.ts skipsTokenLookup), so made-up strings cost no lookup there while a
 * user behind that address still counts as the user. Never a reason to accept a token: the lookup
 * still decides. Bounded; the oldest go first.
 */
export const KNOWN_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;
const KNOWN_TOKEN_MAX = 50_000;
const knownTokens = new WeakMap<Services, Map<string, number>>();

function knownOf(services: Services): Map<string, number> {
  let k = knownTokens.get(services);
  if (!k) knownTokens.set(services, (k = new Map()));
  return k;
}

/** Remember a token (by its hash) as valid: it resolved to a viewer, or it was just issued. */
export function rememberValidToken(services: Services, tokenHash: string): void {
  const known = knownOf(services);
  known.delete(tokenHash);
  if (known.size >= KNOWN_TOKEN_MAX) known.delete(known.keys().next().value!);
  known.set(tokenHash, Date.now());
}

/** Whether the token is in the viewer cache (fresh: no lookup to pay) or was seen valid within KNOWN_TOKEN_TTL_MS (no database). */
export function isKnownToken(services: Services, token: string): boolean {
  const hash = hashToken(token);
  const hit = caches.get(services)?.get(hash);
  if (hit && Date.now() - hit.at < VIEWER_CACHE_TTL_MS) return true;
  const at = knownTokens.get(services)?.get(hash);
  return at !== undefined && Date.now() - at < KNOWN_TOKEN_TTL_MS;
}

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
  if (tokenHash !== undefined) knownTokens.get(services)?.delete(tokenHash);
}

/** {@link loadViewer}'s statement: the token, its user and account, the user's role's permissions. */
const VIEWER_SQL = prepared(
  `select ${tokenColumns('t', 't_')}, ${userColumns('u', 'u_')}, ${accountColumns('a', 'a_')}, r.permissions::text as r_permissions
       from oauth_access_tokens t
       left join users u on u.id = t.user_id
       left join accounts a on a.id = u.account_id
       left join user_roles r on r.id = u.role_id
      where t.token_hash = $1`,
);

async function loadViewer(services: Services, hash: string): Promise<Viewer | null> {
  const [row] = await services.db.sql.query<Record<string, unknown>>(
    VIEWER_SQL,
    [hash],
  );
  const viewer = await resolveViewer(services, row);
  if (viewer) rememberValidToken(services, hash);
  else knownTokens.get(services)?.delete(hash);
  return viewer;
}

async function resolveViewer(services: Services, row: Record<string, unknown> | undefined): Promise<Viewer | null> {
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
  return { token, scopes: parseScopes(token.scopes), user, account, rolePermissions: user ? ((row.r_permissions as string | null) ?? null) : null };
}

async function recordTokenUse(services: Services, tokenId: string, userId: string, now: Date): Promise<void> {
  await services.db.sql.query(`update oauth_access_tokens set last_used_at = $1 where id = $2`, [now, tokenId]);
  await recordUserActivity(services, userId);
}
