/**
 * Where Roost leans on Fedify's internals rather than its API, all here: each seam was written
 * against @fedify/fedify and @fedify/vocab FEDIFY_VERSION and holds only as long as Fedify does
 * what its sources did then. FEDIFY_SEAMS says what to re-read in the new sources before moving
 * the packages; ./fedify-seams.test.ts fails on any other installed version and prints that list.
 *
 * - the inbox queue message, written by hand by the inbox's fast path (./inbox-fast.ts, which also
 *   repeats the checks of Fedify's inbox handler) and read by OrderedInbox (./index.ts) and the
 *   queue's domain-policy filter (./outbound-policy.ts);
 * - parseActivitiesOnce: Activity.fromJsonLd patched so the inbox parses an activity once;
 * - reuseBuiltKeys: CryptographicKey.fromJsonLd patched so a cached key document is built once;
 * - the KV layout of Fedify's document and public-key caches (./loaders.ts wraps them);
 * - actorKeyPairs: the private keys Context.getActorKeyPairs returns though its type omits them.
 */
import { randomUUID, type webcrypto } from 'node:crypto';
import type { Context } from '@fedify/fedify';
import { Activity, CryptographicKey } from '@fedify/vocab';

/** The Fedify version (@fedify/fedify and @fedify/vocab) every seam below was checked against. */
export const FEDIFY_VERSION = '2.3.6';

/** Each seam: where it is, and what to re-check in Fedify's sources before a version change. */
export const FEDIFY_SEAMS: readonly { seam: string; where: string; recheck: string }[] = [
  {
    seam: 'the inbox fast path',
    where: 'fedifyInboxMessage; src/federation/inbox-fast.ts',
    recheck:
      "handleInbox's checks before enqueueing (draft-cavage parsing, Date window, Digest, Vary: Accept, key owner) and " +
      "routeActivity's queued inbox message, field for field (type, id, baseUrl, activity, identifier, attempt, started, traceContext)",
  },
  {
    seam: 'the inbox message, read',
    where: 'OrderedInbox (src/federation/index.ts), fedifyMessageAllowed (src/federation/outbound-policy.ts)',
    recheck: "the queued message's `type` and `activity.actor` as Fedify's queue holds them",
  },
  {
    seam: 'parse once',
    where: 'parseActivitiesOnce',
    recheck: 'handleInbox parses the same JSON object twice with Activity.fromJsonLd (object proofs, then after the HTTP signature), and only then',
  },
  {
    seam: 'built keys',
    where: 'reuseBuiltKeys, keepBuiltKey; withMemoryKeyCache (src/federation/loaders.ts)',
    recheck: 'KvKeyCache rebuilds a key with CryptographicKey.fromJsonLd from the very object the KV store returned',
  },
  {
    seam: 'KV layout',
    where: 'FEDIFY_KV; withShortUnavailableKeys, withMemoryKeyCache (src/federation/loaders.ts)',
    recheck: "the keys and values of the remote-document cache and the public-key cache (['_fedify','publicKey',keyId], its null and '__fetchError' entries)",
  },
  {
    seam: 'private keys of getActorKeyPairs',
    where: 'actorKeyPairs (src/federation/delivery.ts signs with them)',
    recheck: "Context.getActorKeyPairs spreads the key-pairs dispatcher's pairs, privateKey included, into each entry",
  },
];

// --- the inbox queue message ----------------------------------------------------------------

/** The message Fedify's routeActivity enqueues for an activity to the shared inbox. */
export function fedifyInboxMessage(baseUrl: string, activity: Record<string, unknown>) {
  return {
    type: 'inbox',
    id: randomUUID(),
    baseUrl,
    activity,
    identifier: null,
    attempt: 0,
    started: new Date().toISOString(),
    // Empty: Roost registers no OpenTelemetry propagator.
    traceContext: {},
  };
}

// --- parse once -----------------------------------------------------------------------------

const PARSE_ONCE = Symbol.for('roost.activityParseOnce');
const kept = new WeakMap<object, Promise<Activity>>();

/**
 * One JSON-LD parse of an incoming activity instead of two. Fedify's inbox handler parses the
 * activity (a JSON-LD expansion of the whole document, the Note included) once to look for Object
 * Integrity Proofs (verifyObject), and, when there are none, checks the HTTP signature and parses
 * the very same object again with the same loaders. Here the first parse of an object is kept
 * (keyed by the object itself, in a WeakMap) and handed to the next parse of that same object,
 * once: the second call gets the first one's result, and a third call parses afresh. What is
 * parsed, and every check Fedify makes on it, is unchanged. Installed once per process
 * (createRoostFederation calls it); Activity.fromJsonLd on subclasses (Create.fromJsonLd…) and
 * with a different object is untouched.
 */
export function parseActivitiesOnce(): void {
  const cls = Activity as unknown as Record<symbol, unknown>;
  if (cls[PARSE_ONCE]) return;
  cls[PARSE_ONCE] = true;
  const original = Activity.fromJsonLd;
  Activity.fromJsonLd = function (this: typeof Activity, json: unknown, options?: Parameters<typeof original>[1]) {
    if (this !== Activity || json === null || typeof json !== 'object') return original.call(this, json, options);
    const earlier = kept.get(json);
    if (earlier) {
      kept.delete(json);
      return earlier;
    }
    const parsed = original.call(this, json, options);
    kept.set(json, parsed);
    parsed.catch(() => kept.delete(json));
    return parsed;
  } as typeof original;
}

// --- built keys -----------------------------------------------------------------------------

const builtKeys = new WeakMap<object, Promise<CryptographicKey>>();
const cachedKeyDocuments = new WeakSet<object>();
const BUILT_KEYS = Symbol.for('roost.cryptographicKeyFromJsonLd');

/** Marks a key document held in memory (withMemoryKeyCache): its key is built once (reuseBuiltKeys). */
export function keepBuiltKey(document: object): void {
  cachedKeyDocuments.add(document);
}

/**
 * CryptographicKey.fromJsonLd, once per cached key document. Fedify's key cache (KvKeyCache) reads
 * a sender's key from the KV store and rebuilds it on every signed request: a JSON-LD expansion,
 * a PEM parse and a WebCrypto import, about as much work as the RSA verify itself. For documents
 * marked by keepBuiltKey (the same object each time) the built key is kept beside the document (a
 * WeakMap: dropped with it); any other document is built as before. Installed once per process.
 */
export function reuseBuiltKeys(): void {
  const cls = CryptographicKey as unknown as Record<symbol | string, unknown>;
  if (cls[BUILT_KEYS]) return;
  const original = CryptographicKey.fromJsonLd;
  cls[BUILT_KEYS] = true;
  CryptographicKey.fromJsonLd = function (this: typeof CryptographicKey, json: unknown, options?: Parameters<typeof original>[1]) {
    if (this !== CryptographicKey || json === null || typeof json !== 'object' || !cachedKeyDocuments.has(json)) return original.call(this, json, options);
    let built = builtKeys.get(json);
    if (!built) {
      built = original.call(this, json, options);
      builtKeys.set(json, built);
      built.catch(() => builtKeys.delete(json));
    }
    return built;
  } as typeof original;
}

// --- the KV layout --------------------------------------------------------------------------

/** Fedify's default KV prefixes: fetched documents, and remote public keys (`[...publicKey, keyId]`). */
export const FEDIFY_KV = {
  remoteDocument: ['_fedify', 'remoteDocument'],
  publicKey: ['_fedify', 'publicKey'],
} as const;

/** Whether a KV key is an entry of Fedify's public-key cache (a key, or its fetch error). */
export function isPublicKeyEntry(key: readonly unknown[]): boolean {
  return key[0] === FEDIFY_KV.publicKey[0] && key[1] === FEDIFY_KV.publicKey[1];
}

/** The key id of a cached public key's entry (not of its fetch error), or null. */
export function publicKeyEntryId(key: readonly unknown[]): string | null {
  return key.length === 3 && isPublicKeyEntry(key) && typeof key[2] === 'string' ? key[2] : null;
}

// --- key pairs ------------------------------------------------------------------------------

/**
 * An actor's key pairs with their private keys and key ids (Fedify's getActorKeyPairs returns the
 * dispatcher's pairs spread into each entry, private key included, though its type omits it).
 */
export async function actorKeyPairs(ctx: Context<void>, identifier: string) {
  const pairs = await ctx.getActorKeyPairs(identifier);
  return pairs.map((kp) => ({
    keyId: kp.keyId,
    multikeyId: kp.multikey.id,
    privateKey: (kp as unknown as { privateKey: webcrypto.CryptoKey }).privateKey,
  }));
}
