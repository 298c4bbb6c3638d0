import { isActor } from '@fedify/vocab';
import { getDocumentLoader, type DocumentLoader } from '@fedify/vocab-runtime';
import type { Services } from '../context.ts';
import type { Account } from '../db/entities/index.ts';
import { isPrivateHost } from '../../config/index.ts';
import { persistAccount } from './convert/from-as.ts';
import { findLocalAccount } from '../services/accounts.ts';
import { parseAcct } from '../lib/acct.ts';
import { localAccountFromUri } from './inbox/resolve.ts';
import type { RoostFederation } from './index.ts';

/**
 * Resolves a remote account by actor URL or by handle (`user@domain`, via WebFinger), fetching
 * and persisting (or refreshing) it. Null when nothing actor-like is found there.
 *
 * WebFinger is https by definition, and Fedify asks https only. Instances in a lab or a test run
 * on plain http on loopback/private addresses: with ROOST_ALLOW_PRIVATE_ADDRESSES on, a handle
 * on such a host is looked up over http by this module, then its actor fetched by Fedify.
 */
export async function lookupRemoteAccount(
  services: Services,
  federation: RoostFederation,
  query: string,
  opts: { fresh?: boolean } = {},
): Promise<Account | null> {
  const ctx = federation.createContext(new URL(services.config.publicUrl), undefined);
  let target = query.trim().replace(/^@/, '');
  const handle = /^([^@\s/]+)@([^@\s/]+)$/.exec(target);
  if (handle && services.config.federation.allowPrivateAddresses && isPrivateHost(handle[2])) {
    const self = await plainHttpWebFinger(handle[1], handle[2]);
    if (!self) return null;
    target = self;
  }
  const object = await ctx.lookupObject(target, opts.fresh ? { documentLoader: freshDocumentLoader(services) } : {});
  if (!object || !isActor(object)) return null;
  return persistAccount(services, object);
}

/**
 * A document loader that skips Fedify's cache of fetched documents: for the checks that must see
 * the actor as it is now (a Move's target and its aliases), not as it was an hour ago.
 */
export function freshDocumentLoader(services: Services): DocumentLoader {
  return getDocumentLoader({
    allowPrivateAddress: services.config.federation.allowPrivateAddresses,
    userAgent: { software: `Roost/${services.version}`, url: new URL(services.config.publicUrl) },
  });
}

async function plainHttpWebFinger(user: string, host: string): Promise<string | null> {
  const url = `http://${host}/.well-known/webfinger?resource=${encodeURIComponent(`acct:${user}@${host}`)}`;
  try {
    const res = await fetch(url, { headers: { accept: 'application/jrd+json' }, signal: AbortSignal.timeout(5000), redirect: 'error' });
    if (!res.ok) return null;
    const jrd = (await res.json()) as { links?: { rel?: string; type?: string; href?: string }[] };
    const self = jrd.links?.find((l) => l.rel === 'self' && /activity\+json|ld\+json/.test(l.type ?? ''));
    return self?.href ?? null;
  } catch {
    return null;
  }
}

/**
 * Finds the account a handle (`user`, `@user@domain`) or actor URI names: local accounts from the
 * database, remote ones fetched anew, past the document cache (so their aliases are current).
 * Null when none.
 */
export function accountResolver(services: Services, federation: RoostFederation): (query: string) => Promise<Account | null> {
  const ctx = federation.createContext(new URL(services.config.publicUrl), undefined);
  return async (query) => {
    const q = query.trim();
    if (/^https?:\/\//i.test(q)) {
      if (!URL.canParse(q)) return null;
      const url = new URL(q);
      if (url.origin === new URL(services.config.publicUrl).origin) return localAccountFromUri(services, ctx, url);
      return lookupRemoteAccount(services, federation, url.href, { fresh: true }).catch(() => null);
    }
    const handle = parseAcct(q, services.config.domain);
    if (!handle) return null;
    if (handle.domain === null) return findLocalAccount(services.db.em(), handle.username);
    return lookupRemoteAccount(services, federation, q, { fresh: true }).catch(() => null);
  };
}
