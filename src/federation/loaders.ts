/**
 * Fedify's document loaders, all on the one bounded fetcher (src/lib/safe-fetch.ts): actors, keys,
 * objects, JSON-LD contexts and signed (authorized-fetch) requests are fetched with a 1 MiB cap,
 * connect and total timeouts, and the private-address check on the address actually connected.
 *
 * - The well-known JSON-LD contexts (ActivityStreams, security v1, data integrity, Mastodon's,
 *   GoToSocial's, Lemmy's…) are served from Fedify's preloaded copies, never fetched.
 * - Other contexts are fetched through the bounded fetcher and cached for a day; objects for five
 *   minutes (Fedify's default), both in the instance's KV store.
 * - A document nested deeper than MAX_JSON_DEPTH is refused before it is parsed.
 * - A document on a server the domain policy refuses (suspended; not allowed in allowlist mode)
 *   is not fetched at all.
 */
import type { webcrypto } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import { kvCache, signRequest, type KvStore, type KvStoreSetOptions } from '@fedify/fedify';
import {
  FetchError,
  getRemoteDocument,
  getUserAgent,
  preloadedContexts,
  type AuthenticatedDocumentLoaderFactory,
  type DocumentLoader,
  type RemoteDocument,
} from '@fedify/vocab-runtime';
import { Temporal } from '@js-temporal/polyfill';
import type { Services } from '../context.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import type { Network } from '../lib/network.ts';
import { MAX_JSON_BYTES, safeFetch, type SafeFetchOptions } from '../lib/safe-fetch.ts';
import { jsonNestingExceeds, MAX_JSON_DEPTH } from '../lib/json-depth.ts';
import { FEDIFY_KV, isPublicKeyEntry, keepBuiltKey, publicKeyEntryId, reuseBuiltKeys } from './fedify-seams.ts';

const ACCEPT = 'application/activity+json, application/ld+json; profile="https://www.w3.org/ns/activitystreams"';

export interface LoaderSettings {
  allowPrivateAddresses: boolean;
  userAgent: string;
  /** Read at each fetch, so tests may simulate DNS on a running instance. */
  lookup: () => LookupFunction | undefined;
  /** The lab's virtual network (services.network), read at each fetch. */
  network?: () => Network | undefined;
  /** The clock signed fetches are dated by (services.signatureClock; the wall clock unset). */
  signatureClock?: Clock;
  timeoutMs?: number;
  /**
   * The domain policy (services.domainPolicy.allowed): a document on a server Roost does not talk
   * to (suspended, or not allowed in allowlist mode) is never fetched.
   */
  allowedHost?: (host: string) => Promise<boolean>;
}

export function loaderSettings(services: Services): LoaderSettings {
  return {
    allowPrivateAddresses: services.config.federation.allowPrivateAddresses,
    userAgent: getUserAgent({ software: `Roost/${services.version}`, url: new URL(services.config.publicUrl) }),
    lookup: () => services.dnsLookup,
    network: () => services.network,
    signatureClock: services.signatureClock,
    allowedHost: (host) => services.domainPolicy.allowed(host),
  };
}

/** True for the context URLs served from Fedify's preloaded copies. */
export function isPreloadedContext(url: string): boolean {
  return Object.hasOwn(preloadedContexts, url);
}

type Signer = SafeFetchOptions['sign'];

/** A loader on the bounded fetcher; `sign` turns it into an authenticated one. */
export function boundedDocumentLoader(settings: LoaderSettings, sign?: Signer): DocumentLoader {
  const load: DocumentLoader = async (url, options): Promise<RemoteDocument> => {
    if (isPreloadedContext(url)) return { contextUrl: null, document: preloadedContexts[url], documentUrl: url };
    if (settings.allowedHost && URL.canParse(url) && !(await settings.allowedHost(new URL(url).host))) {
      throw new FetchError(new URL(url), `the domain policy refuses ${new URL(url).host}`);
    }
    const res = await safeFetch(new URL(url), {
      allowPrivateAddresses: settings.allowPrivateAddresses,
      userAgent: settings.userAgent,
      headers: { accept: ACCEPT },
      sign,
      maxBytes: MAX_JSON_BYTES,
      timeoutMs: settings.timeoutMs,
      lookup: settings.lookup(),
      network: settings.network?.(),
      signal: options?.signal,
    });
    if (res.status < 200 || res.status > 599) throw new FetchError(res.url, `HTTP ${res.status}: ${res.url.href}`);
    const type = res.headers.get('content-type') ?? '';
    if (!/^\s*text\/html|^\s*application\/xhtml\+xml/i.test(type)) {
      const text = res.body.toString('utf8');
      if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) throw new FetchError(res.url, `document nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    // Fedify's own parsing of a response (status, content type, Link contexts, HTML alternates),
    // on a body that is already complete and capped.
    return getRemoteDocument(res.url.href, new Response(new Uint8Array(res.body), { status: res.status, headers: res.headers }), load);
  };
  return load;
}

/** A key that signs fetches: its id (what peers fetch to verify) and its private half. */
export interface FetchSigningKey {
  keyId: URL;
  privateKey: webcrypto.CryptoKey;
}

/** Signs each hop of a fetch with draft-cavage HTTP signatures, which every implementation verifies. */
export function signerFor(key: () => Promise<FetchSigningKey | null>, clock?: Clock): Signer {
  return async (url, headers) => {
    const k = await key();
    if (!k) return headers;
    const signed = await signRequest(new Request(url, { headers }), k.privateKey, k.keyId, {
      spec: 'draft-cavage-http-signatures-12',
      // Dated by the signature clock when there is one (the lab's); Fedify's own now otherwise.
      ...(clock ? { currentTime: Temporal.Instant.fromEpochMilliseconds(clock.now().getTime()) as never } : {}),
    });
    return Object.fromEntries(signed.headers.entries());
  };
}

/**
 * Objects (actors, keys, activities), cached five minutes in the KV store as Fedify does. With
 * `instanceKey` (the instance actor's, ./instance-actor.ts) every fetch is signed by the instance
 * actor, as Mastodon signs its fetches with its representative account: servers in
 * authorized-fetch mode answer it. What it gets is what any server may see, so the cache is shared.
 */
export function documentLoaderFactory(
  settings: LoaderSettings,
  kv: KvStore,
  instanceKey?: () => Promise<FetchSigningKey | null>,
): () => DocumentLoader {
  const sign = instanceKey ? signerFor(instanceKey, settings.signatureClock) : undefined;
  // Built once: Fedify asks the factory for every context it creates (each inbox POST), and
  // kvCache compiles its rules (a URLPattern, Temporal durations) each time it is called. The
  // loader keeps no state of its own between calls.
  const loader = kvCache({ loader: boundedDocumentLoader(settings, sign), kv, prefix: [...FEDIFY_KV.remoteDocument], kind: 'object' });
  return () => loader;
}

/** JSON-LD contexts: preloaded ones in memory, others fetched under the same bounds and kept a day. */
export function contextLoaderFactory(settings: LoaderSettings, kv: KvStore): () => DocumentLoader {
  // Built once, as the object loader above.
  const loader = kvCache({
    loader: boundedDocumentLoader(settings),
    kv,
    prefix: [...FEDIFY_KV.remoteDocument],
    kind: 'context',
    // Every URL matches (kvCache calls `test` on a pattern object).
    rules: [[{ test: () => true } as never, Temporal.Duration.from({ hours: 24 }) as never]],
  });
  return () => loader;
}

/**
 * Signed fetches on behalf of a local actor (servers with authorized fetch): each hop is signed
 * with draft-cavage HTTP signatures, which every implementation verifies.
 */
export function authenticatedDocumentLoaderFactory(settings: LoaderSettings): AuthenticatedDocumentLoaderFactory {
  return (identity) => boundedDocumentLoader(settings, signerFor(async () => identity, settings.signatureClock));
}

/** How long a key that could not be fetched (or was unusable) is remembered as unavailable. */
export const UNAVAILABLE_KEY_TTL_MS = 30_000;

/**
 * The KV store Fedify gets, with its negative key cache shortened. Fedify remembers a key it could
 * not fetch (and why) for 10 minutes and offers no option for it: a peer whose key fetch failed
 * once (it was restarting) had every delivery refused for those 10 minutes, and with its retry
 * schedule waited up to 14.5. Here such entries live UNAVAILABLE_KEY_TTL_MS: long enough to spare
 * a dead host one fetch per signed request, short enough that the sender's next retry gets in.
 * Fetched keys and everything else pass through untouched.
 */
export function withShortUnavailableKeys(kv: KvStore, ttlMs = UNAVAILABLE_KEY_TTL_MS): KvStore {
  const wrapped: KvStore = {
    get: (key) => kv.get(key),
    delete: (key) => kv.delete(key),
    list: (prefix) => kv.list(prefix),
    set: (key, value, options) => {
      if (isPublicKeyEntry(key) && (value === null || key[2] === '__fetchError')) {
        const ttl = Temporal.Duration.from({ milliseconds: ttlMs });
        const asked = options?.ttl ? Temporal.Duration.from(options.ttl) : null;
        const chosen = asked && Temporal.Duration.compare(asked, ttl) < 0 ? asked : ttl;
        // Fedify types ttl as the built-in Temporal; its own values are this polyfill's.
        return kv.set(key, value, { ...options, ttl: chosen as unknown as NonNullable<KvStoreSetOptions['ttl']> });
      }
      return kv.set(key, value, options);
    },
  };
  if (kv.cas) wrapped.cas = (key, expected, next, options) => kv.cas!(key, expected, next, options);
  return wrapped;
}

/**
 * How far one incoming activity may make us fetch (a reply's missing parents, an Announce's
 * object, their authors): at most `depth` ancestors up a thread and `fetches` documents in all.
 * Past either, the status is stored without its parent (as Mastodon does when a thread cannot be
 * resolved); a peer serving an endless chain costs these many requests and no more.
 */
export const REMOTE_FETCH_LIMITS = { depth: 8, fetches: 16 } as const;

/** How long a remote public key read from the KV store is kept in memory, and how many at most. */
export const KEY_MEMORY_TTL_MS = 10 * 60_000;
export const KEY_MEMORY_MAX = 10_000;

/**
 * Remote actors' public keys (Fedify's `_fedify/publicKey/<keyId>` entries) kept in memory in
 * front of the KV store, so that a signed delivery from a known server costs no database round
 * trip for its key, and (reuseBuiltKeys, ./fedify-seams.ts) no rebuild of it. Writes and deletes
 * go to the store and update the memory; entries live KEY_MEMORY_TTL_MS, at most KEY_MEMORY_MAX (oldest dropped). A
 * key changed by another process is seen here when it is refetched: a signature that fails with
 * a cached key makes Fedify fetch the key again and store it, through this wrapper. Negative
 * entries (a key that could not be fetched) and fetch errors are not kept in memory.
 */
export function withMemoryKeyCache(kv: KvStore, clock: Clock = systemClock, ttlMs = KEY_MEMORY_TTL_MS, max = KEY_MEMORY_MAX): KvStore {
  reuseBuiltKeys();
  const memory = new Map<string, { value: object; until: number }>();
  const peek = (id: string) => {
    const hit = memory.get(id);
    return hit && hit.until > clock.now().getTime() ? hit.value : undefined;
  };
  const remember = (id: string, value: unknown) => {
    memory.delete(id);
    if (value === null || typeof value !== 'object') return;
    if (memory.size >= max) memory.delete(memory.keys().next().value!);
    keepBuiltKey(value);
    memory.set(id, { value, until: clock.now().getTime() + ttlMs });
  };
  const wrapped: KvStore = {
    async get(key) {
      const id = publicKeyEntryId(key);
      if (id === null) return kv.get(key);
      const hit = memory.get(id);
      if (hit && hit.until > clock.now().getTime()) return hit.value as never;
      const value = await kv.get(key);
      remember(id, value);
      return value as never;
    },
    async set(key, value, options) {
      const id = publicKeyEntryId(key);
      if (id !== null) memory.delete(id);
      await kv.set(key, value, options);
      // A copy of what was stored (the caller may change its object), as a read would return it.
      if (id !== null && value !== null && typeof value === 'object' && !options?.ttl) remember(id, JSON.parse(JSON.stringify(value)));
    },
    async delete(key) {
      const id = publicKeyEntryId(key);
      if (id !== null) memory.delete(id);
      await kv.delete(key);
    },
    list: (prefix) => kv.list(prefix),
  };
  if (kv.cas) {
    wrapped.cas = async (key, expected, next, options) => {
      const id = publicKeyEntryId(key);
      if (id !== null) memory.delete(id);
      return kv.cas!(key, expected, next, options);
    };
  }
  memoryPeeks.set(wrapped, peek);
  return wrapped;
}

const memoryPeeks = new WeakMap<KvStore, (keyId: string) => object | undefined>();

/**
 * The key document `keyId` as withMemoryKeyCache holds it in memory right now (the very object
 * Fedify's next read gets, unexpired), or undefined: a miss, an expired entry, or a store that is
 * not such a cache. Never reads the store. For the inbox's fast path (./inbox-fast.ts).
 */
export function peekMemoryKey(kv: KvStore, keyId: string): object | undefined {
  return memoryPeeks.get(kv)?.(keyId);
}
