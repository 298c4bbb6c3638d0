/**
 * The domain policy on the way out: nothing is delivered to a server Roost does not talk to
 * (a suspended domain; in allowlist mode, any domain not allowed). Roost's delivery jobs
 * (./delivery.ts) drop refused inboxes when they run, so a delivery queued before a block sends
 * nothing. Messages already in Fedify's own queue when a server was blocked (an activity from it
 * waiting to be processed) are dropped when their turn comes (`fedifyMessageAllowed`, the queue's
 * `accept`).
 */
import type { DomainPolicySnapshot } from '../services/domain-policy.ts';

/** The host of a URL string, lower-cased; null when it is not one. */
function urlHost(v: unknown): string | null {
  return typeof v === 'string' && URL.canParse(v) ? new URL(v).host.toLowerCase() : null;
}

/**
 * Whether a message of Fedify's queue may be handled under the policy: a delivery ('outbox') to
 * a refused server's inbox, or incoming work ('inbox') from a refused actor's server, may not.
 * Anything else (fan-out, which expands into deliveries checked here one by one) may.
 */
export function fedifyMessageAllowed(policy: DomainPolicySnapshot, message: unknown): boolean {
  const m = message as { type?: unknown; inbox?: unknown; activity?: { actor?: unknown } } | null;
  if (m?.type === 'outbox') {
    const host = urlHost(m.inbox);
    return host === null || policy.allowed(host);
  }
  if (m?.type === 'inbox') {
    const actor = Array.isArray(m.activity?.actor) ? m.activity.actor[0] : m.activity?.actor;
    const host = urlHost(typeof actor === 'string' ? actor : (actor as { id?: unknown } | undefined)?.id);
    return host === null || policy.allowed(host);
  }
  return true;
}
