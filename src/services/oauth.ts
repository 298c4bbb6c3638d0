/**
 * OAuth 2 as Mastodon (Doorkeeper) speaks it: applications, authorization codes with PKCE, and the
 * password, client-credentials and authorization-code grants. Secrets, codes and tokens are
 * random 256-bit strings; codes and tokens are stored only as their SHA-256.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Services } from '../context.ts';
import {
  AccountSchema,
  OAuthAccessGrantSchema,
  OAuthApplicationSchema,
  UserSchema,
  type OAuthAccessToken,
  type OAuthApplication,
  type User,
} from '../db/entities/index.ts';
import { RoostError } from '../lib/errors.ts';
import { hashPassword, verifyPassword } from '../lib/password.ts';
import { ipAccessDenied } from './ip-blocks.ts';
import { rateLimits, tokenKey } from './rate-limits.ts';
import { parseScopes, scopesWithin, unknownScopes } from '../lib/scopes.ts';
import { hashSecret, issueAccessToken, randomToken } from './tokens.ts';
import { forgetViewer } from './reads/viewer.ts';
import { recordUserIp } from './accounts.ts';

export const OOB_REDIRECT_URI = 'urn:ietf:wg:oauth:2.0:oob';
export const AUTHORIZATION_CODE_TTL_MS = 10 * 60_000;

/** Doorkeeper's error bodies: `{"error": code, "error_description": text}`. */
export class OAuthError extends RoostError {
  constructor(status: number, code: string, description: string) {
    super(status, code, { extra: { error_description: description } });
  }
}

const DESCRIPTIONS = {
  invalid_client:
    'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
  invalid_grant:
    'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
  invalid_scope: 'The requested scope is invalid, unknown, or malformed.',
  invalid_request: 'The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.',
  unsupported_grant_type: 'The authorization grant type is not supported by the authorization server.',
} as const;

export const oauthError = (status: number, code: keyof typeof DESCRIPTIONS) => new OAuthError(status, code, DESCRIPTIONS[code]);

/** Doorkeeper's invalid_request for an absent parameter: "Missing required parameter: code_verifier." */
export const missingParameter = (name: string) => new OAuthError(400, 'invalid_request', `Missing required parameter: ${name}.`);

/** Schemes Mastodon refuses as redirect URIs (its Doorkeeper `forbid_redirect_uri`). */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:']);

/** What is wrong with one redirect URI, in Doorkeeper's words (the attribute is "Redirect URI"). */
function redirectUriProblems(uri: string): string[] {
  if (uri === OOB_REDIRECT_URI) return [];
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    try {
      new URL(uri, 'http://relative.invalid/');
      return ['must be an absolute URI.'];
    } catch {
      return ['must be a valid URI.'];
    }
  }
  if (FORBIDDEN_SCHEMES.has(u.protocol)) return ['is forbidden by the server.'];
  const problems: string[] = [];
  if (uri.includes('#')) problems.push('cannot contain a fragment.');
  // "localhost:3000/cb" or "myapp:callback": a host or an opaque part taken for a scheme.
  if (u.protocol === 'localhost:' || !uri.slice(u.protocol.length).startsWith('/')) problems.push('must specify a scheme.');
  return problems;
}

export interface CreateApplicationInput {
  name: string | undefined;
  redirectUris: string[];
  scopes: string | undefined;
  website: string | undefined;
}

/**
 * POST /api/v1/apps. Mastodon answers a bad application with Rails' full messages and no
 * `details` (`{"error":"Validation failed: Redirect URI must be an absolute URI."}`), in the order
 * its validations run: Doorkeeper's (name, redirect URI, scopes), then Mastodon's own lengths.
 */
export async function createApplication(services: Services, input: CreateApplicationInput): Promise<OAuthApplication> {
  const errors: string[] = [];
  const fail = (message: string) => void (errors.includes(message) || errors.push(message));
  const name = input.name?.trim() ?? '';
  if (!name) fail("Application name can't be blank");
  const uris = [...new Set(input.redirectUris.flatMap((u) => u.split(/\s+/)).filter(Boolean))];
  if (uris.length === 0) fail("Redirect URI can't be blank");
  for (const uri of uris) for (const problem of redirectUriProblems(uri)) fail(`Redirect URI ${problem}`);
  // A blank `scopes` is the default, as clients that send an empty field mean it.
  const scopes = parseScopes(input.scopes?.trim() ? input.scopes : 'read');
  if (unknownScopes(scopes).length > 0) fail("Scopes doesn't match configured on the server.");
  if (name.length > 60) fail('Application name is too long (maximum is 60 characters)');
  const website = input.website?.trim() || null;
  if (website) {
    let ok = false;
    try {
      const u = new URL(website);
      ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      ok = false;
    }
    if (!ok) fail('Application website is invalid');
    if (website.length > 2000) fail('Application website is too long (maximum is 2000 characters)');
  }
  if (uris.join('\n').length > 2000) fail('Redirect URI is too long (maximum is 2000 characters)');
  if (errors.length > 0) throw new RoostError(422, `Validation failed: ${errors.join(', ')}`);
  const em = services.db.em();
  const now = services.clock.now();
  const app = em.create(OAuthApplicationSchema, {
    id: services.ids.next(),
    name,
    website,
    redirectUris: uris,
    scopes: scopes.join(' '),
    clientId: randomToken(),
    clientSecret: randomToken(),
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return app;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The application a client_id/client_secret pair names, or invalid_client (401). */
export async function authenticateClient(services: Services, clientId: string | undefined, clientSecret: string | undefined): Promise<OAuthApplication> {
  if (!clientId || !clientSecret) throw oauthError(401, 'invalid_client');
  const app = await services.db.em().findOne(OAuthApplicationSchema, { clientId });
  if (!app || !sameSecret(app.clientSecret, clientSecret)) throw oauthError(401, 'invalid_client');
  return app;
}

export async function findApplicationByClientId(services: Services, clientId: string): Promise<OAuthApplication | null> {
  return services.db.em().findOne(OAuthApplicationSchema, { clientId });
}

/**
 * The scopes a grant asks for (Doorkeeper's default is "read"), each within the app's registered
 * scopes. A granular scope is within its parent (`read:statuses` within `read`), which Doorkeeper's
 * literal comparison would refuse; a parent is never within one of its children.
 */
export function requestedScopes(app: OAuthApplication, scope: string | undefined): string[] {
  const scopes = scope === undefined || scope.trim() === '' ? ['read'] : parseScopes(scope);
  if (unknownScopes(scopes).length > 0 || !scopesWithin(scopes, parseScopes(app.scopes))) throw oauthError(400, 'invalid_scope');
  return scopes;
}

/** A hash no password matches, checked when the login names nobody (made once per process). */
let dummyHash: Promise<string> | undefined;
function unknownUserHash(): Promise<string> {
  return (dummyHash ??= hashPassword(randomBytes(32).toString('hex')));
}

/**
 * A user who may sign in: found by username or e-mail, password right, not disabled or pending.
 * Every attempt counts against the sign-in limits (per IP when `ip` is known, and per account, or
 * per login as typed when it names none) and
 * runs one scrypt whether or not the login names an account, so the answer's timing does not
 * tell which e-mail addresses are registered.
 */
export async function authenticateUser(services: Services, login: string, password: string, ip?: string): Promise<User | null> {
  const limits = rateLimits(services);
  // A loopback client is not counted (rateLimits.exemptLoopback); without an address, per login only.
  const counted = ip ? limits.counts(ip) : limits.enabled;
  if (ip && counted) await limits.consume('signIn', ip);
  // An address in a no_access IP block signs in as nobody (the request guard refuses it first:
  // api/ip-blocks.ts; this holds for every caller).
  if (ip && (await ipAccessDenied(services, ip))) return null;
  const em = services.db.em();
  let user: User | null = null;
  if (login.includes('@')) user = await em.findOne(UserSchema, { email: { $ilike: login.replace(/[\\%_]/g, '\\$&') } });
  if (!user) {
    const account = await em.findOne(AccountSchema, { username: { $ilike: login.replace(/[\\%_]/g, '\\$&') }, domain: null });
    if (account) user = await em.findOne(UserSchema, { accountId: account.id });
  }
  // Per account once the login names one (its username and its e-mail address are one login, as
  // Mastodon keys on the user it found), else per login as typed (hashed, normalised).
  if (counted) await limits.consume('signInPerLogin', user ? `user:${user.id}` : tokenKey(login.trim().toLowerCase()));
  if (!user) {
    await verifyPassword(password, await unknownUserHash());
    return null;
  }
  if (!(await verifyPassword(password, user.encryptedPassword))) return null;
  if (ip) await recordUserIp(services.db.sql, user.id, ip, services.clock.now());
  return user;
}

/** Why a user with the right password still may not sign in (Mastodon's rules), or null. */
export function signInRefusal(user: User): string | null {
  if (user.disabled) return 'Your login is currently disabled';
  if (!user.approved) return 'Your account is pending review by our staff';
  return null;
}

export async function createAuthorizationCode(
  services: Services,
  input: { app: OAuthApplication; user: User; redirectUri: string; scopes: string[]; codeChallenge: string | null; codeChallengeMethod: string | null },
): Promise<string> {
  const code = randomToken();
  const now = services.clock.now();
  const em = services.db.em();
  em.create(OAuthAccessGrantSchema, {
    id: services.ids.next(),
    applicationId: input.app.id,
    userId: input.user.id,
    codeHash: hashSecret(code),
    redirectUri: input.redirectUri,
    scopes: input.scopes.join(' '),
    codeChallenge: input.codeChallenge,
    codeChallengeMethod: input.codeChallengeMethod,
    expiresAt: new Date(now.getTime() + AUTHORIZATION_CODE_TTL_MS),
    createdAt: now,
  });
  await em.flush();
  return code;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  scope: string;
  created_at: number;
}

function tokenBody(token: string, row: OAuthAccessToken): TokenResponse {
  return { access_token: token, token_type: 'Bearer', scope: row.scopes, created_at: Math.floor(row.createdAt.getTime() / 1000) };
}

async function tokenResponse(services: Services, applicationId: string, userId: string | null, scopes: string[]): Promise<TokenResponse> {
  const { token, row } = await issueAccessToken(services, { applicationId, userId, scopes });
  return tokenBody(token, row);
}

export interface TokenRequest {
  grantType: string | undefined;
  clientId: string | undefined;
  clientSecret: string | undefined;
  scope: string | undefined;
  code?: string;
  redirectUri?: string;
  codeVerifier?: string;
  username?: string;
  password?: string;
  /** The client's address (password attempts are limited per IP). */
  ip?: string;
}

/** POST /oauth/token, checked in Doorkeeper's order so each failure gets Doorkeeper's error. */
export async function exchangeToken(services: Services, req: TokenRequest): Promise<TokenResponse> {
  if (!req.grantType) throw missingParameter('grant_type');
  switch (req.grantType) {
    case 'client_credentials': {
      const app = await authenticateClient(services, req.clientId, req.clientSecret);
      return tokenResponse(services, app.id, null, requestedScopes(app, req.scope));
    }
    case 'password': {
      const app = await authenticateClient(services, req.clientId, req.clientSecret);
      const user = req.username && req.password ? await authenticateUser(services, req.username, req.password, req.ip) : null;
      if (!user || signInRefusal(user)) throw oauthError(400, 'invalid_grant');
      return tokenResponse(services, app.id, user.id, requestedScopes(app, req.scope));
    }
    case 'authorization_code':
      return exchangeAuthorizationCode(services, req);
    default:
      throw oauthError(400, 'unsupported_grant_type');
  }
}

/**
 * The authorization-code grant. A failed attempt leaves the code usable (as Doorkeeper does); a
 * successful one spends it atomically, and the token it gave is remembered on the grant so that a
 * second use of the code revokes that token too (RFC 6749 §4.1.2).
 */
async function exchangeAuthorizationCode(services: Services, req: TokenRequest): Promise<TokenResponse> {
  const em = services.db.em();
  const grant = req.code ? await em.findOne(OAuthAccessGrantSchema, { codeHash: hashSecret(req.code) }) : null;
  if (grant?.codeChallenge && !req.codeVerifier) throw missingParameter('code_verifier');
  if (!req.redirectUri) throw missingParameter('redirect_uri');
  const app = await authenticateClient(services, req.clientId, req.clientSecret);
  if (!grant || grant.applicationId !== app.id) throw oauthError(400, 'invalid_grant');
  if (grant.revokedAt) {
    await revokeTokenOfGrant(services, grant.id);
    throw oauthError(400, 'invalid_grant');
  }
  const now = services.clock.now();
  if (grant.expiresAt <= now || grant.redirectUri !== req.redirectUri) throw oauthError(400, 'invalid_grant');
  if (grant.codeChallenge) {
    const computed = createHash('sha256').update(req.codeVerifier ?? '').digest('base64url');
    if (!sameSecret(computed, grant.codeChallenge)) throw oauthError(400, 'invalid_grant');
  }
  const user = await em.findOne(UserSchema, { id: grant.userId });
  if (!user || signInRefusal(user)) throw oauthError(400, 'invalid_grant');
  // Spend the code; of two concurrent exchanges only one gets the row.
  const spent = await services.db.sql.query(
    'update oauth_access_grants set revoked_at = $1 where id = $2 and revoked_at is null returning id',
    [now, grant.id],
  );
  if (spent.length === 0) throw oauthError(400, 'invalid_grant');
  const { token, row } = await issueAccessToken(services, { applicationId: app.id, userId: user.id, scopes: parseScopes(grant.scopes) });
  await services.db.sql.query('update oauth_access_grants set access_token_id = $1 where id = $2', [row.id, grant.id]);
  return tokenBody(token, row);
}

/** A spent code came back: the token it was exchanged for may be in the wrong hands. */
async function revokeTokenOfGrant(services: Services, grantId: string): Promise<void> {
  await services.db.sql.query(
    `update oauth_access_tokens set revoked_at = $1
      where revoked_at is null and id = (select access_token_id from oauth_access_grants where id = $2)`,
    [services.clock.now(), grantId],
  );
  forgetViewer(services);
}
