/**
 * THE per-subscriber filter hook of the streaming API (one place), on the one filter engine
 * (services/filter-engine.ts): called once per subscribed account that has filters
 * (accountsWithFilters) and context for every `update` / `status.update` event, with the status
 * rendered once (public rendering, no viewer flags). `hidden` drops the event for that subscriber;
 * a non-empty `filtered` is set as the status's `filtered` array in that subscriber's payload (warn).
 *
 * The sets are cached per process: the hub loads the missing ones of an event's subscribers in
 * one statement (prefetchFilterSets), forgets an account's set when its `filters_changed` goes by
 * (every process serving streaming reads every event), and a set is at most SET_TTL_MS old, so an
 * event missed while the process had no clients costs at most that. Expiry needs no reload: the
 * engine is given the time of each event.
 */
import type { Services } from '../context.ts';
import { applyFilters, filterableFromStatusJson, loadFilterSets, type FilterableStatusJson, type FilterSet } from '../services/filter-engine.ts';

export interface StreamFilterVerdict {
  hidden: boolean;
  filtered?: unknown[];
}

export type StreamFilterContext = 'home' | 'public' | 'notifications' | 'thread';

/** How long a cached filter set is trusted without a `filters_changed`. */
export const SET_TTL_MS = 30_000;

const PASS: StreamFilterVerdict = { hidden: false };

const caches = new WeakMap<Services, Map<string, { set: FilterSet; at: number }>>();
function cacheOf(services: Services) {
  let c = caches.get(services);
  if (!c) caches.set(services, (c = new Map()));
  return c;
}

/** Loads (one statement) the sets of the accounts among `accountIds` not cached or too old. */
export async function prefetchFilterSets(services: Services, accountIds: readonly string[]): Promise<void> {
  const cache = cacheOf(services);
  const now = services.clock.now().getTime();
  const missing = accountIds.filter((id) => {
    const hit = cache.get(id);
    return !hit || now - hit.at > SET_TTL_MS;
  });
  if (missing.length === 0) return;
  for (const [id, set] of await loadFilterSets(services, missing)) cache.set(id, { set, at: now });
}

/**
 * The accounts among `accountIds` that may have filters: all but those whose cached set is empty
 * (call prefetchFilterSets first). The others pass every status without asking filterForSubscriber.
 */
export function accountsWithFilters(services: Services, accountIds: Iterable<string>): string[] {
  const cache = cacheOf(services);
  const out: string[] = [];
  for (const id of accountIds) if (cache.get(id)?.set.filters.length !== 0) out.push(id);
  return out;
}

/** An account's filters changed: its set is read again on its next event. */
export function forgetFilterSet(services: Services, accountId: string): void {
  cacheOf(services).delete(accountId);
}

export async function filterForSubscriber(
  services: Services,
  accountId: string,
  status: Record<string, unknown>,
  context: StreamFilterContext,
): Promise<StreamFilterVerdict> {
  await prefetchFilterSets(services, [accountId]);
  const set = cacheOf(services).get(accountId)?.set;
  if (!set || set.filters.length === 0) return PASS;
  const outcome = applyFilters(set, filterableFromStatusJson(status as unknown as FilterableStatusJson), context, services.clock.now());
  return outcome.hidden ? { hidden: true } : outcome.filtered.length > 0 ? { hidden: false, filtered: outcome.filtered } : PASS;
}
