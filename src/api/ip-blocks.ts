/**
 * The no_access IP blocks, checked before anything else on every request the router serves (as
 * Mastodon's Rack::Attack blocklist does): a client whose address is in an unexpired no_access
 * block gets 403 {"error":"This action is not allowed"}. Synchronous while the block index is
 * held (services/ip-blocks.ts): a request pays one map lookup per prefix length of the blocks,
 * and, when no block says no_access, not even the parse of its address.
 */
import type { BeforeBody } from '../http/index.ts';
import type { Services } from '../context.ts';
import { RoostError } from '../lib/errors.ts';
import { ipAccessDenied, noAccessBlocksNone } from '../services/ip-blocks.ts';

export function ipAccessGuard(services: Services): BeforeBody {
  const refuse = (denied: boolean) => {
    if (denied) throw new RoostError(403, 'This action is not allowed');
  };
  return (ctx) => {
    if (noAccessBlocksNone(services)) return; // (the common case: not even the address is needed)
    // (read at once: the remote address is there while the uWS callback runs)
    const denied = ipAccessDenied(services, ctx.remoteAddress);
    if (denied instanceof Promise) return denied.then(refuse);
    refuse(denied);
  };
}
