/**
 * The rate-limit check every REST request passes before its body is read (router.beforeBody).
 * /api and /oauth requests count under their token's user once the token resolves (an app's token:
 * under the token), else under the client address: an unknown or revoked bearer string counts
 * as no token at all (services/rate-limits.ts requestBucket), and once the address is over its
 * limit a bearer string not seen valid lately is not looked up at all (skipsTokenLookup). A client
 * whose resolved address is loopback is not counted (rateLimits.exemptLoopback). POST /api/v1/accounts with a valid token
 * also counts against the sign-up limit (per address), and an upload (media, a multipart
 * update_credentials) by a user against the upload limit (per user); a request the route will
 * refuse for its token writes no count of these (they are shared in PostgreSQL). Every counted
 * answer carries X-RateLimit-Limit, -Remaining and -Reset of the general limit; past any limit the
 * answer is 429 {"error":"Too many requests"} with Retry-After. Password attempts are counted where
 * the password is checked (services/oauth.ts authenticateUser), per address and per account.
 */
import type { BeforeBody, RequestContext } from '../http/index.ts';
import type { Services } from '../context.ts';
import { rateLimitHeaders, rateLimits, requestBucket, skipsTokenLookup, type RateLimitRule } from '../services/rate-limits.ts';
import { bearer, tokenViewer } from './auth.ts';

const UPLOAD_PATHS = /^\/api\/v[12]\/media\/?$/;

function isUpload(ctx: RequestContext): boolean {
  const m = ctx.method;
  if (m === 'POST' && UPLOAD_PATHS.test(ctx.path)) return true;
  if ((m === 'PATCH' || m === 'PUT') && ctx.path.startsWith('/api/v1/accounts/update_credentials')) {
    return (ctx.header('content-type') ?? '').toLowerCase().startsWith('multipart/');
  }
  return false;
}

/** The check, or null when rate limits are off. */
export function rateLimitGuard(services: Services): BeforeBody | null {
  const limits = rateLimits(services);
  if (!limits.enabled) return null;
  const check = async (ctx: RequestContext, ip: string): Promise<void> => {
    const path = ctx.path;
    const token = bearer(ctx);
    // (a made-up bearer string from an address over its limit: no lookup, the 429 of no token)
    const viewer = token !== null && (await skipsTokenLookup(services, ip, token)) ? null : await tokenViewer(services, ctx);
    const [rule, key] = requestBucket(viewer, ip);
    const general = await limits.consume(rule, key);
    for (const [name, value] of Object.entries(rateLimitHeaders(general))) ctx.setResponseHeader(name, value);
    const extra: Array<[RateLimitRule, string]> = [];
    if (viewer !== null && ctx.method === 'POST' && (path === '/api/v1/accounts' || path === '/api/v1/accounts/')) extra.push(['signUp', ip]);
    if (viewer?.user && isUpload(ctx)) extra.push(['uploads', key]);
    for (const [r, k] of extra) await limits.consume(r, k);
  };
  // (not async itself: other paths go on without waiting a turn)
  return (ctx) => {
    if (!ctx.path.startsWith('/api/') && !ctx.path.startsWith('/oauth/')) return;
    // (read at once: the remote address is there while the uWS callback runs)
    const ip = ctx.remoteAddress;
    if (!limits.counts(ip)) return;
    return check(ctx, ip);
  };
}
