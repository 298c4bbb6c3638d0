/**
 * Who may GET Roost's ActivityPub documents (actors, Notes and their activities, collections):
 * Fedify's `.authorize()` predicates on those dispatchers (./index.ts) call the predicate made here.
 *
 * - Without `federation.authorizedFetch`, anybody (as Mastodon without secure mode: a signature it
 *   cannot use, a blocked server's among them, counts as none, and public documents are public).
 * - With it (Mastodon's secure mode, GoToSocial's default), only a request with a valid HTTP
 *   signature (draft-cavage or RFC 9421, Fedify verifies both) whose key and key owner live on
 *   servers the domain policy allows gets anything; others get 401, as on Mastodon. A keyId on a
 *   refused server (suspended; in allowlist mode, not allowed) is refused before anything is
 *   fetched. The key and its owner are fetched through the instance's document loader, signed by
 *   the instance actor, so a peer in the same mode answers. (Mastodon's limited federation mode
 *   implies secure mode; here allowlist mode and authorized fetch are set apart.)
 * - The instance actor (./instance-actor.ts), WebFinger and NodeInfo stay public in any mode, as
 *   Mastodon's: peers fetch the instance actor's key to verify Roost's signed fetches.
 */
import type { RequestContext } from '@fedify/fedify';
import type { Services } from '../context.ts';
import { signatureKeyId } from './inbox-guard.ts';

export function fetchAuthorizer(services: Services): (ctx: RequestContext<unknown>) => Promise<boolean> {
  const policy = services.domainPolicy;
  return async (ctx) => {
    if (!services.config.federation.authorizedFetch) return true;
    // A keyId on a refused server: refused before anything is fetched.
    const claimed = signatureKeyId(ctx.request.headers);
    if (claimed && (claimed.protocol === 'http:' || claimed.protocol === 'https:') && !(await policy.allowed(claimed.host.toLowerCase()))) return false;
    const key = await ctx.getSignedKey().catch(() => null);
    if (!key?.id || !(await policy.allowed(key.id.host.toLowerCase()))) return false;
    const owner = await ctx.getSignedKeyOwner().catch(() => null);
    return !!owner?.id && (await policy.allowed(owner.id.host.toLowerCase()));
  };
}
