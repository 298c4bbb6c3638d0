// CORS as Mastodon configures rack-cors (config/initializers/cors.rb): any origin, no credentials,
// on the public API surface only. Responses on these paths carry the headers below; an OPTIONS
// preflight on them is answered here (200, empty body) unless a route handles OPTIONS itself.

export interface CorsRule {
  /** Methods allowed cross-origin on this resource. */
  methods: string;
}

export const CORS_EXPOSE_HEADERS = 'Link, X-RateLimit-Reset, X-RateLimit-Limit, X-RateLimit-Remaining, X-Request-Id, Idempotency-Key, Mastodon-Async-Refresh';
export const CORS_MAX_AGE = '7200'; // rack-cors' default max_age

const API: CorsRule = { methods: 'POST, PUT, DELETE, GET, PATCH, OPTIONS' };
const GET_ONLY: CorsRule = { methods: 'GET, HEAD, OPTIONS' };
const POST_ONLY: CorsRule = { methods: 'POST, OPTIONS' };

/**
 * The CORS rule for a raw request path, or null when the path is not cross-origin accessible:
 * /api/* (all methods), /oauth/token and /oauth/revoke (POST), /.well-known/*, /nodeinfo/*,
 * /users/*, /@username (GET).
 */
export function corsRuleFor(path: string): CorsRule | null {
  switch (path.charCodeAt(1)) {
    case 97 /* a */:
      return path.startsWith('/api/') ? API : null;
    case 111 /* o */:
      return path === '/oauth/token' || path === '/oauth/revoke' ? POST_ONLY : null;
    case 46 /* . */:
      return path.startsWith('/.well-known/') ? GET_ONLY : null;
    case 110 /* n */:
      return path.startsWith('/nodeinfo/') ? GET_ONLY : null;
    case 117 /* u */:
      return path.startsWith('/users/') ? GET_ONLY : null;
    case 64 /* @ */:
      return path.length > 2 ? GET_ONLY : null;
    default:
      return null;
  }
}

/** Header names a preflight may ask for: a token list; anything else is dropped. */
export function sanitizeRequestedHeaders(value: string): string {
  return value
    .split(',')
    .map((h) => h.trim())
    .filter((h) => /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/.test(h))
    .slice(0, 64)
    .join(', ');
}
