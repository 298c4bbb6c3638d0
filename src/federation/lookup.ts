import type { Context } from '@fedify/fedify';
import { isActor, Object as AsObject } from '@fedify/vocab';
import type { DocumentLoader } from '@fedify/vocab-runtime';
import type { Services } from '../context.ts';
import type { Account } from '../db/entities/index.ts';
import { isPrivateHost } from '../../config/index.ts';
import { persistAccount } from './convert/from-as.ts';
import { findLocalAccount } from '../services/accounts.ts';
import { parseAcct } from '../lib/acct.ts';
import { MAX_JSON_BYTES, safeFetch } from '../lib/safe-fetch.ts';
import { jsonNestingExceeds, MAX_JSON_DEPTH } from '../lib/json-depth.ts';
import { localAccountFromUri } from './inbox/resolve.ts';
import { loaderSettings } from './loaders.ts';
import { INSTANCE_ACTOR } from './instance-actor.ts';
import type { RoostFederation } from './index.ts';

/**
 * Resolves a remote account by actor URL or by handle (`user@domain`, via WebFinger), fetching
 * and persisting (or refreshing) it. Null when nothing actor-like is found there.
 *
 * Every request goes through the bounded fetcher (src/lib/safe-fetch.ts): WebFinger here, the
 * actor through the instance's document loader (./loaders.ts). WebFinger is https by definition;
 * instances in a lab or a test run on plain http on loopback/private addresses, so with
 * federation.allowPrivateAddresses on, a handle on such a host is looked up over http.
 */
export async function lookupRemoteAccount(
  services: Services,
  federation: RoostFederation,
  query: string,
  opts: { fresh?: boolean; signal?: AbortSignal } = {},
): Promise<Account | null> {
  const ctx = federation.createContext(new URL(services.config.publicUrl), undefined);
  const target = query.trim().replace(/^acct:/i, '').replace(/^@/, '');
  const handle = /^([^@\s/]+)@([^@\s/]+)$/.exec(target);
  let url: URL | null;
  if (handle) url = await webFingerSelf(services, handle[1]!, handle[2]!, opts.signal);
  else url = URL.canParse(target) ? new URL(target) : null;
  if (!url) return null;
  const documentLoader = opts.fresh ? await freshDocumentLoader(ctx) : ctx.documentLoader;
  opts.signal?.throwIfAborted();
  const object = await lookupObjectSafely(url, documentLoader, ctx.contextLoader, opts.signal);
  if (!object || !isActor(object)) return null;
  opts.signal?.throwIfAborted();
  return persistAccount(services, object);
}

/**
 * Fedify's lookupObject for a URL, without its fallbacks: the document comes from `documentLoader`
 * (the bounded one), and an object whose id is on another origin than the document is refused.
 * (Fedify's own falls back to a WebFinger request of its own, outside the bounded fetcher.)
 */
export async function lookupObjectSafely(
  url: URL,
  documentLoader: DocumentLoader,
  contextLoader: DocumentLoader,
  signal?: AbortSignal,
): Promise<AsObject | null> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  let doc;
  try {
    doc = await documentLoader(url.href, signal ? { signal } : undefined);
  } catch {
    return null;
  }
  let object: AsObject;
  try {
    object = await AsObject.fromJsonLd(doc.document, { documentLoader, contextLoader, baseUrl: new URL(doc.documentUrl) });
  } catch {
    return null;
  }
  if (object.id && object.id.origin !== new URL(doc.documentUrl).origin) return null;
  return object;
}

/**
 * A document loader that skips the cache of fetched documents: for the checks that must see the
 * actor as it is now (a Move's target and its aliases), not as it was minutes ago, and for the
 * re-fetch of a forwarded object. Signed by the instance actor (./instance-actor.ts) and bounded
 * like every other (Fedify's authenticated loader is ./loaders.ts's).
 */
export function freshDocumentLoader(ctx: Context<unknown>): Promise<DocumentLoader> {
  return ctx.getDocumentLoader({ identifier: INSTANCE_ACTOR });
}

/** The ActivityPub actor URL a handle's WebFinger document names (rel=self), or null (also when `signal` aborts it). */
export async function webFingerSelf(services: Services, user: string, host: string, signal?: AbortSignal): Promise<URL | null> {
  const settings = loaderSettings(services);
  // Nothing is asked of a server the domain policy refuses (suspended, or not allowed).
  if (!(await services.domainPolicy.allowed(host.toLowerCase()))) return null;
  const allowHttp = services.config.federation.allowPrivateAddresses && isPrivateHost(host);
  const resource = encodeURIComponent(`acct:${user}@${host}`);
  let url: URL;
  try {
    url = new URL(`${allowHttp ? 'http' : 'https'}://${host}/.well-known/webfinger?resource=${resource}`);
  } catch {
    return null;
  }
  try {
    const res = await safeFetch(url, {
      allowPrivateAddresses: settings.allowPrivateAddresses,
      userAgent: settings.userAgent,
      headers: { accept: 'application/jrd+json, application/json;q=0.9' },
      maxBytes: MAX_JSON_BYTES,
      lookup: settings.lookup(),
      network: settings.network?.(),
      signal,
    });
    if (res.status !== 200) return null;
    const text = res.body.toString('utf8');
    if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) return null;
    const jrd = JSON.parse(text) as { links?: { rel?: unknown; type?: unknown; href?: unknown }[] };
    if (!Array.isArray(jrd?.links)) return null;
    const self = jrd.links.find(
      (l) => l && l.rel === 'self' && typeof l.type === 'string' && /activity\+json|ld\+json/.test(l.type) && typeof l.href === 'string',
    );
    if (!self || !URL.canParse(self.href as string)) return null;
    const href = new URL(self.href as string);
    return href.protocol === 'https:' || href.protocol === 'http:' ? href : null;
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
