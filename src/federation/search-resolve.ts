/**
 * What a search with `resolve=true` fetches (Mastodon's ResolveURLService and ResolveAccountService):
 * a remote account by `user@domain` (WebFinger, then the actor), or the account or status a URL
 * names. Everything goes through the bounded fetcher (the instance's document loader and
 * ./lookup.ts), and the whole resolve is abandoned after `federation.resolveTimeoutSeconds`: the
 * search then answers with what is known here. Nothing is asked of a server the domain policy
 * refuses.
 */
import { isActor } from '@fedify/vocab';
import type { Services } from '../context.ts';
import type { RoostFederation } from './index.ts';
import { lookupObjectSafely, lookupRemoteAccount } from './lookup.ts';
import { persistAccount, isStatusObject } from './convert/from-as.ts';
import { fetchRemoteStatus, newFetchBudget } from './remote-statuses.ts';

export type Resolved = { kind: 'account'; id: string } | { kind: 'status'; id: string } | null;

async function withDeadline<T>(services: Services, run: (signal: AbortSignal) => Promise<T>): Promise<T | null> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<null>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve(null);
    }, services.config.federation.resolveTimeoutSeconds * 1000);
  });
  try {
    return await Promise.race([run(controller.signal).catch(() => null), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A remote account by handle (`user@domain`, `@user@domain`), fetched or refreshed; null when not found in time. */
export async function resolveRemoteHandle(services: Services, federation: RoostFederation, handle: string): Promise<string | null> {
  const account = await withDeadline(services, (signal) => lookupRemoteAccount(services, federation, handle, { signal }));
  return account?.id ?? null;
}

/** The account or status a remote URL names, fetched and stored; null when nothing usable is there in time. */
export async function resolveRemoteUrl(services: Services, federation: RoostFederation, url: URL): Promise<Resolved> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.origin === new URL(services.config.publicUrl).origin) return null;
  if (!(await services.domainPolicy.allowed(url.hostname.toLowerCase()))) return null;
  const ctx = federation.createContext(new URL(services.config.publicUrl), undefined);
  return withDeadline(services, async (signal): Promise<Resolved> => {
    const object = await lookupObjectSafely(url, ctx.documentLoader, ctx.contextLoader, signal);
    signal.throwIfAborted();
    if (!object?.id) return null;
    if (isActor(object)) {
      const account = await persistAccount(services, object);
      return account ? { kind: 'account', id: account.id } : null;
    }
    if (isStatusObject(object)) {
      const id = await fetchRemoteStatus(services, ctx, object.id, { depth: 0, budget: newFetchBudget() });
      return id ? { kind: 'status', id } : null;
    }
    return null;
  });
}
