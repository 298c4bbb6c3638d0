/**
 * /oauth/authorize (sign-in and consent page), /oauth/token, /oauth/revoke and the RFC 8414
 * metadata at /.well-known/oauth-authorization-server.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RequestContext, Router } from '../http/index.ts';
import { json, paramString, stringResponse } from '../http/index.ts';
import type { Services } from '../context.ts';
import {
  OOB_REDIRECT_URI,
  authenticateClient,
  authenticateUser,
  createAuthorizationCode,
  exchangeToken,
  findApplicationByClientId,
  requestedScopes,
  signInRefusal,
  OAuthError,
  oauthError,
} from '../services/oauth.ts';
import { revokeToken } from '../services/tokens.ts';
import { GRANULAR_SCOPES } from '../lib/scopes.ts';
import { authorizePage, codePage, errorPage } from './oauth-page.ts';
import type { OAuthApplication } from '../db/entities/index.ts';

/** Every scope, in the order Mastodon's metadata lists them (Doorkeeper's default, then its optional scopes). */
const SCOPES_SUPPORTED = [
  'read',
  'write',
  ...GRANULAR_SCOPES.filter((s) => s.startsWith('write:')),
  ...GRANULAR_SCOPES.filter((s) => s.startsWith('read:')),
  'follow',
  'push',
  'profile',
  'admin:read',
  ...GRANULAR_SCOPES.filter((s) => s.startsWith('admin:read:')),
  'admin:write',
  ...GRANULAR_SCOPES.filter((s) => s.startsWith('admin:write:')),
];

const AUTH_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'] as const;

function htmlHeaders(formTargets: string[] = []): Record<string, string> {
  const formAction = ["'self'", ...formTargets].join(' ');
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'same-origin',
    'cache-control': 'no-store',
  };
}

const html = (body: string, status = 200, formTargets: string[] = [], extra: Record<string, string> = {}) =>
  stringResponse(body, { status, headers: { ...htmlHeaders(formTargets), ...extra } });

/** RFC 6749 §2.3.1: the Basic user and password are form-urlencoded; a malformed one names no client. */
function formDecode(s: string): string | undefined {
  try {
    const v = decodeURIComponent(s.replace(/\+/g, ' '));
    return v.includes('\0') ? undefined : v;
  } catch {
    return undefined;
  }
}

/**
 * Client credentials from HTTP Basic auth or the body, as Doorkeeper accepts both. A Basic header
 * that cannot be read (not base64, no colon, bad %-encoding) authenticates nobody: invalid_client.
 */
function clientCredentials(ctx: RequestContext): { clientId?: string; clientSecret?: string } {
  const auth = ctx.header('authorization');
  if (auth && /^Basic(\s|$)/i.test(auth)) {
    const m = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(auth);
    const decoded = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
    const i = decoded.indexOf(':');
    const clientId = i > 0 ? formDecode(decoded.slice(0, i)) : undefined;
    const clientSecret = i > 0 ? formDecode(decoded.slice(i + 1)) : undefined;
    if (clientId === undefined || clientSecret === undefined) throw oauthError(401, 'invalid_client');
    return { clientId, clientSecret };
  }
  return { clientId: paramString(ctx.input.client_id), clientSecret: paramString(ctx.input.client_secret) };
}

interface AuthorizeRequest {
  app: OAuthApplication;
  params: Record<(typeof AUTH_PARAMS)[number], string>;
  scopes: string[];
}

function redirectWith(uri: string, query: Record<string, string>): Response {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(query)) if (v !== '') u.searchParams.set(k, v);
  return new Response(null, { status: 302, headers: { location: u.toString(), 'cache-control': 'no-store' } });
}

/** Validates an authorization request. Errors before the redirect URI is trusted are shown, never redirected. */
async function checkAuthorizeRequest(services: Services, input: Record<string, unknown>): Promise<AuthorizeRequest | Response> {
  const params = Object.fromEntries(AUTH_PARAMS.map((k) => [k, paramString(input[k] as never) ?? ''])) as AuthorizeRequest['params'];
  const app = params.client_id ? await findApplicationByClientId(services, params.client_id) : null;
  if (!app) return html(errorPage('Client authentication failed: unknown client.'), 400);
  if (!params.redirect_uri && app.redirectUris.length === 1) params.redirect_uri = app.redirectUris[0];
  if (!app.redirectUris.includes(params.redirect_uri)) return html(errorPage('The redirect URI included is not valid.'), 400);
  const fail = (error: string, description: string) =>
    params.redirect_uri === OOB_REDIRECT_URI
      ? html(errorPage(description), 400)
      : redirectWith(params.redirect_uri, { error, error_description: description, state: params.state });
  if (params.response_type !== 'code') return fail('unsupported_response_type', 'The authorization server does not support this response type.');
  if (params.code_challenge_method && params.code_challenge_method !== 'S256') {
    return fail('invalid_request', 'The code_challenge_method must be S256.');
  }
  if (params.code_challenge && !params.code_challenge_method) params.code_challenge_method = 'S256';
  if (params.code_challenge && !/^[A-Za-z0-9_-]{43}$/.test(params.code_challenge)) return fail('invalid_request', 'The code challenge is malformed.');
  let scopes: string[];
  try {
    scopes = requestedScopes(app, params.scope || undefined);
  } catch (e) {
    if (e instanceof OAuthError) return fail('invalid_scope', 'The requested scope is invalid, unknown, or malformed.');
    throw e;
  }
  return { app, params, scopes };
}

/**
 * The consent form's anti-forgery token is bound to a browser session: a random id in an HttpOnly,
 * SameSite=Lax cookie set with the form (a cross-site POST does not carry it), and to the
 * authorization parameters (the same token with a wider scope is a forgery).
 */
const SESSION_COOKIE = 'roost_oauth_session';
const SESSION_RE = /^[A-Za-z0-9_-]{43}$/;

function sessionId(ctx: RequestContext): string | null {
  const header = ctx.header('cookie');
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const v = part.slice(eq + 1).trim();
      return SESSION_RE.test(v) ? v : null;
    }
  }
  return null;
}

function sessionCookie(services: Services, id: string): string {
  const secure = services.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${id}; Path=/oauth; HttpOnly; SameSite=Lax${secure}`;
}

function csrfToken(services: Services, session: string, params: Record<string, string>): string {
  const canonical = AUTH_PARAMS.map((k) => `${k}=${params[k] ?? ''}`).join('&');
  return createHmac('sha256', services.secrets.secretKeyBase).update(`oauth-authorize\n${session}\n${canonical}`).digest('base64url');
}

/**
 * Where the consent form may lead: browsers apply `form-action` to the redirect that follows the
 * POST, so the client's origin (or, for a native app's custom scheme, that scheme) is allowed.
 */
function formTargetsFor(redirectUri: string): string[] {
  if (redirectUri === OOB_REDIRECT_URI) return [];
  try {
    const u = new URL(redirectUri);
    if (u.protocol === 'http:' || u.protocol === 'https:') return [u.origin];
    const scriptable = ['javascript:', 'data:', 'vbscript:'].includes(u.protocol); // refused at registration anyway
    return !scriptable && /^[a-z][a-z0-9+.-]*:$/.test(u.protocol) ? [u.protocol] : [];
  } catch {
    return [];
  }
}

export function oauthRoutes(router: Router, services: Services): void {
  router.get('/oauth/authorize', async (ctx) => {
    const req = await checkAuthorizeRequest(services, ctx.query);
    if (req instanceof Response) return req;
    const existing = sessionId(ctx);
    const session = existing ?? randomBytes(32).toString('base64url');
    const hidden = { ...req.params, authenticity_token: csrfToken(services, session, req.params) };
    return html(
      authorizePage({ appName: req.app.name, appWebsite: req.app.website ?? null, instanceTitle: services.config.instance.title, scopes: req.scopes, hidden }),
      200,
      formTargetsFor(req.params.redirect_uri),
      existing ? {} : { 'set-cookie': sessionCookie(services, session) },
    );
  });

  router.post('/oauth/authorize', async (ctx) => {
    const req = await checkAuthorizeRequest(services, ctx.body);
    if (req instanceof Response) return req;
    const token = paramString(ctx.body.authenticity_token) ?? '';
    const session = sessionId(ctx);
    const expected = session ? csrfToken(services, session, req.params) : '';
    if (!session || token.length !== expected.length || !timingSafeEqual(Buffer.from(token), Buffer.from(expected))) {
      return html(errorPage('The form has expired or did not come from this server. Go back and try again.'), 422);
    }
    const { redirect_uri: redirectUri, state } = req.params;
    if (paramString(ctx.body.decision) === 'deny') {
      if (redirectUri === OOB_REDIRECT_URI) return html(errorPage('You denied the authorization.'), 200);
      return redirectWith(redirectUri, { error: 'access_denied', error_description: 'The resource owner or authorization server denied the request.', state });
    }
    const login = paramString(ctx.body.login) ?? '';
    const user = await authenticateUser(services, login, paramString(ctx.body.password) ?? '', ctx.remoteAddress);
    const refusal = user ? signInRefusal(user) : 'Invalid username, e-mail address or password.';
    if (!user || refusal) {
      const hidden = { ...req.params, authenticity_token: expected };
      return html(
        authorizePage({ appName: req.app.name, appWebsite: req.app.website ?? null, instanceTitle: services.config.instance.title, scopes: req.scopes, hidden, login, error: refusal! }),
        401,
        formTargetsFor(redirectUri),
      );
    }
    const code = await createAuthorizationCode(services, {
      app: req.app,
      user,
      redirectUri,
      scopes: req.scopes,
      codeChallenge: req.params.code_challenge || null,
      codeChallengeMethod: req.params.code_challenge ? 'S256' : null,
    });
    if (redirectUri === OOB_REDIRECT_URI) return html(codePage(code, req.app.name));
    return redirectWith(redirectUri, { code, state });
  });

  router.post('/oauth/token', async (ctx) => {
    const { clientId, clientSecret } = clientCredentials(ctx);
    const body = await exchangeToken(services, {
      grantType: paramString(ctx.input.grant_type),
      clientId,
      clientSecret,
      scope: paramString(ctx.input.scope),
      code: paramString(ctx.input.code),
      redirectUri: paramString(ctx.input.redirect_uri),
      codeVerifier: paramString(ctx.input.code_verifier),
      username: paramString(ctx.input.username),
      password: paramString(ctx.input.password),
      ip: ctx.remoteAddress,
    });
    return json(body, { headers: { 'cache-control': 'no-store', pragma: 'no-cache' } });
  });

  router.post('/oauth/revoke', async (ctx) => {
    const { clientId, clientSecret } = clientCredentials(ctx);
    const app = await authenticateClient(services, clientId, clientSecret).catch(() => null);
    const token = paramString(ctx.input.token);
    const unauthorized = () =>
      json({ error: 'unauthorized_client', error_description: 'You are not authorized to revoke this token' }, { status: 403 });
    if (!app || !token) return unauthorized();
    const result = await revokeToken(services, token, app.id);
    // Unknown tokens are fine (RFC 7009); another app's token is not.
    if (result === 'other-application') return unauthorized();
    return json({});
  });

  router.get('/.well-known/oauth-authorization-server', () => {
    const base = services.config.publicUrl;
    return json({
      issuer: `${base}/`,
      service_documentation: 'https://docs.joinmastodon.org/',
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      app_registration_endpoint: `${base}/api/v1/apps`,
      revocation_endpoint: `${base}/oauth/revoke`,
      scopes_supported: SCOPES_SUPPORTED,
      response_types_supported: ['code'],
      response_modes_supported: ['query'], // Mastodon lists fragment and form_post too; Roost answers in the query only
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'password', 'client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    });
  });
}
