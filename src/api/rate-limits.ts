/**
 * The rate-limit check every REST request passes before its body is read (router.beforeBody):
 * /api and /oauth requests count per token (hashed) when one comes along, else per IP address;
 * POST /api/v1/accounts also counts against the sign-up limit, and uploads (media, a multipart
 * update_credentials) against the upload limit. Every answer carries X-RateLimit-Limit,
 * -Remaining and -Reset of the general limit; past any limit the answer is 429
 * {"error":"Too many requests"} with Retry-After. Password attempts are counted where the
 * password is checked (services/oauth.ts authenticateUser), per IP and per login.
 */
import type { BeforeBody, RequestContext } from '../http/index.ts';
import type { Services } from '../context.ts';
import { rateLimitHeaders, rateLimits, tokenKey, type RateLimitRule } from '../services/rate-limits.ts';

const UPLOAD_PATHS = /^\/api\/v[12]\/media\/?$/;

function bearerToken(ctx: RequestContext): string | null {
  const header = ctx.header('authorization');
  if (header !== null) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return m ? m[1]! : null;
  }
  const q = ctx.query.access_token;
  return typeof q === 'string' && q ? q : null;
}

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
    const token = bearerToken(ctx);
    const tokenId = token !== null ? tokenKey(token) : null;
    const extra: Array<[RateLimitRule, string]> = [];
    if (ctx.method === 'POST' && (path === '/api/v1/accounts' || path === '/api/v1/accounts/')) extra.push(['signUp', ip]);
    if (isUpload(ctx)) extra.push(['uploads', tokenId ?? ip]);
    const general = await limits.consume(tokenId !== null ? 'perToken' : 'perIp', tokenId ?? ip);
    for (const [name, value] of Object.entries(rateLimitHeaders(general))) ctx.setResponseHeader(name, value);
    for (const [rule, key] of extra) await limits.consume(rule, key);
  };
  // (not async itself: other paths go on without waiting a turn)
  return (ctx) => {
    if (!ctx.path.startsWith('/api/') && !ctx.path.startsWith('/oauth/')) return;
    // (read at once: the remote address is there while the uWS callback runs)
    return check(ctx, ctx.remoteAddress);
  };
}
