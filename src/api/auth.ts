/**
 * Bearer authentication for REST routes: `Authorization: Bearer <token>` (or `access_token` in
 * the query, as Mastodon allows) → the viewer and the token's scopes.
 * 401 without a valid token; 403 when the token lacks every one of the scopes the route accepts;
 * 422 "This method requires an authenticated user" for app-only tokens on user routes.
 */
import type { RequestContext } from '../http/index.ts';
import type { Services } from '../context.ts';
import { RoostError } from '../lib/errors.ts';
import { anyScopeSatisfied } from '../lib/scopes.ts';
import { viewerForToken, type Viewer } from '../services/tokens.ts';
import type { Account, User } from '../db/entities/index.ts';
import { rolePermits, type Permission } from '../services/reads/roles.ts';

export type UserViewer = Viewer & { user: User; account: Account };

/** The bearer token the request came with (header, or `access_token` in the query), or null. */
export function bearer(ctx: RequestContext): string | null {
  const header = ctx.headers.get('authorization');
  if (header) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return m ? m[1] : null;
  }
  const q = ctx.query.access_token;
  return typeof q === 'string' && q ? q : null;
}

const VIEWER = Symbol('viewer');

/**
 * The viewer of the request's token, or null when none came or it is unknown, revoked or expired:
 * nothing refused here (the rate limiter counts such a request under its address; the route
 * answers 401). A viewer found is kept on the request for the route's own check.
 */
export async function tokenViewer(services: Services, ctx: RequestContext): Promise<Viewer | null> {
  const state = ctx.state as Record<symbol, Viewer | null | undefined>;
  if (state[VIEWER] !== undefined) return state[VIEWER];
  const token = bearer(ctx);
  if (!token) return (state[VIEWER] = null);
  const viewer = await viewerForToken(services, token);
  if (viewer) state[VIEWER] = viewer;
  return viewer;
}

/** The viewer if a valid token came with the request, else null (public endpoints). */
export async function optionalViewer(services: Services, ctx: RequestContext): Promise<Viewer | null> {
  const viewer = await tokenViewer(services, ctx);
  if (!viewer && bearer(ctx)) throw new RoostError(401, 'The access token is invalid');
  return viewer;
}

/**
 * Mastodon's authorize_if_got_token!: the route is public, but a token that comes along must be
 * valid (401) and carry one of `scopes` (403). Returns the viewer, or null without a token.
 */
export async function authorizeIfGotToken(services: Services, ctx: RequestContext, scopes: readonly string[]): Promise<Viewer | null> {
  const viewer = await optionalViewer(services, ctx);
  if (viewer && !anyScopeSatisfied(viewer.scopes, scopes)) throw new RoostError(403, 'This action is outside the authorized scopes');
  return viewer;
}

/** A token with one of `scopes` (app tokens allowed). */
export async function requireToken(services: Services, ctx: RequestContext, scopes: readonly string[]): Promise<Viewer> {
  const viewer = await optionalViewer(services, ctx);
  if (!viewer) throw new RoostError(401, 'The access token is invalid');
  if (!anyScopeSatisfied(viewer.scopes, scopes)) throw new RoostError(403, 'This action is outside the authorized scopes');
  return viewer;
}

/**
 * A user's token with one of `scopes`, and a user who may use the API: as Mastodon's require_user!,
 * an unconfirmed e-mail address is a 403 "Your login is missing a confirmed e-mail address", then a
 * pending sign-up a 403 "Your login is currently pending approval" (a disabled login's tokens are
 * already invalid: 401).
 *
 * `allowUnconfirmed` lets an unconfirmed user through (verify_credentials only): an app that just
 * signed a user up must still be able to show who is signed in and that the account waits for
 * the confirmation link (or, without SMTP, `roost accounts modify USER --confirm`).
 */
export async function requireUser(
  services: Services,
  ctx: RequestContext,
  scopes: readonly string[],
  opts: { allowUnconfirmed?: boolean } = {},
): Promise<UserViewer> {
  const viewer = await requireToken(services, ctx, scopes);
  if (!viewer.user || !viewer.account) throw new RoostError(422, 'This method requires an authenticated user');
  if (!viewer.user.confirmedAt && !opts.allowUnconfirmed) throw new RoostError(403, 'Your login is missing a confirmed e-mail address');
  if (!viewer.user.approved) throw new RoostError(403, 'Your login is currently pending approval');
  return viewer as UserViewer;
}

/**
 * An administrative route, as Mastodon's admin controllers answer: a token that comes along must
 * be valid (401) and carry one of `scopes` (403 "This action is outside the authorized scopes");
 * then the caller must be a user whose role has `permission` (Mastodon's Pundit policies: Owner and
 * Admin have every permission; the Moderator role as seeded has not "manage federation"). No
 * token, an app's token, or a role without it: 403 "This action is not allowed". The role's bits
 * come with the viewer (the token's one statement), so the check sends none of its own.
 */
export async function requirePermission(services: Services, ctx: RequestContext, scopes: readonly string[], permission: Permission): Promise<UserViewer> {
  const viewer = await authorizeIfGotToken(services, ctx, scopes);
  if (!viewer?.user || !viewer.account) throw new RoostError(403, 'This action is not allowed');
  const user = await requireUser(services, ctx, scopes);
  if (!rolePermits(user.rolePermissions, permission)) throw new RoostError(403, 'This action is not allowed');
  return user;
}
