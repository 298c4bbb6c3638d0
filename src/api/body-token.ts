/**
 * A bearer token that comes with a request body is checked before the body is read
 * (router.beforeBody): a bad token is a 401 at once, and nobody without a valid token makes
 * Roost buffer a body. The viewer found is kept on the request (optionalViewer), so the handler's
 * own check costs no second lookup. A user's token found here vouches for the body: it does not
 * count against the budget of unauthenticated bodies.
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
    // A user's valid token vouches for the body (src/http/body-budget.ts); an app's token, which
    // anybody can get without an account, does not.
    return optionalViewer(services, ctx).then((viewer) => {
      if (viewer?.user) ctx.markAuthenticated();
    });
  };
}
