/**
 * Mentions of remote accounts Roost has never seen (`@user@other.example`), resolved when a local
 * status is written (created, published from a schedule, edited), as Mastodon's
 * ProcessMentionsService does with ResolveAccountService: WebFinger, then the actor, through the
 * one bounded fetcher. A resolved account is linked in the text, listed in the status' mentions and
 * so gets the delivery; one that cannot be resolved stays plain text and the post goes on.
 *
 * Bounds (Mastodon has none): at most MAX_MENTION_LOOKUPS handles per status (the first ones the
 * text names), looked up at once, each abandoned after `federation.mentionLookupTimeoutSeconds`
 * (its fetches aborted). Callers resolve before their transaction: a network call inside one
 * would hold a database connection for as long.
 *
 * The lookup itself lives in the federation floor (src/federation/lookup.ts); the composition root
 * (src/main.ts) hands it to this instance's services here once its federation is built. Without
 * one (the CLI's services), unknown mentions stay text.
 */
import type { Services } from '../context.ts';

/** Unknown remote handles resolved per status, at most (the rest stay text). */
export const MAX_MENTION_LOOKUPS = 10;

/** A remote account as a lookup found it (fetched and stored). */
export interface ResolvedAccount {
  id: string;
}

/** Resolves `username@domain` (WebFinger, then the actor), stopping when `signal` aborts; null when nothing is there. */
export type RemoteAccountResolver = (username: string, domain: string, signal: AbortSignal) => Promise<ResolvedAccount | null>;

const resolvers = new WeakMap<Services, RemoteAccountResolver>();

export function setRemoteAccountResolver(services: Services, resolver: RemoteAccountResolver | null): void {
  if (resolver) resolvers.set(services, resolver);
  else resolvers.delete(services);
}

/**
 * Looks up the remote handles (the first MAX_MENTION_LOOKUPS of them, all at once, each within
 * the timeout) and gives the ids of the accounts found, by position in `handles` (null: not found,
 * failed, timed out, or not looked up). Never throws.
 */
export async function resolveRemoteHandles(
  services: Services,
  handles: readonly { username: string; domain: string }[],
): Promise<(string | null)[]> {
  const resolver = resolvers.get(services);
  if (!resolver || handles.length === 0) return handles.map(() => null);
  const timeoutMs = services.config.federation.mentionLookupTimeoutSeconds * 1000;
  return Promise.all(
    handles.map(async (h, i) => {
      if (i >= MAX_MENTION_LOOKUPS) return null;
      const abort = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<null>((resolve) => {
        timer = setTimeout(() => {
          abort.abort(new Error(`mention lookup of ${h.username}@${h.domain} timed out`));
          resolve(null);
        }, timeoutMs);
      });
      try {
        // The race keeps the bound even where a step of the lookup does not heed the signal.
        const found = await Promise.race([resolver(h.username, h.domain, abort.signal).catch(() => null), expired]);
        return found?.id ?? null;
      } catch {
        return null;
      } finally {
        clearTimeout(timer);
      }
    }),
  ).then((ids) => {
    const missed = handles.filter((_, i) => ids[i] === null).map((h) => `${h.username}@${h.domain}`);
    if (missed.length) services.log.debug({ missed }, 'mentions left as text: not resolved');
    return ids;
  });
}
