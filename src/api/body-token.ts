/**
 * A bearer token that comes with a request body is checked before the body is read
 * (router.beforeBody): a bad token is a 401 at once, and nobody without a valid token makes
 * Roost buffer a body. The viewer found is kept on the request (optionalViewer), so the handler's
 * own check costs no second lookup.
 */
import type { BeforeBody } from '../http/index.ts';
import type { Services } from '../context.ts';
import { optionalViewer } from './auth.ts';

export function tokenBeforeBody(services: Services): BeforeBody {
  // (not async: requests it does not apply to go on without waiting a turn)
  return (ctx) => {
    // (POST /api/v1/apps ignores a token, as Mastodon does)
    if (!ctx.path.startsWith('/api/') || ctx.path.startsWith('/api/v1/apps')) return;
    const length = ctx.header('content-length');
    const hasBody = (length !== null && length !== '0') || ctx.header('transfer-encoding') !== null;
    if (!hasBody) return;
    if (ctx.header('authorization') === null && ctx.query.access_token === undefined) return;
    return optionalViewer(services, ctx).then(() => undefined);
  };
}
