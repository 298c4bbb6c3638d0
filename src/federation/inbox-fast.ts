/**
 * The shared inbox's fast path: a delivery signed with a key this process already holds is
 * verified here and put on Fedify's inbox queue, without a WHATWG Request, a JSON-LD parse or
 * Fedify's request handling. Fedify's queue worker then runs the very same listeners on it.
 *
 * What Fedify's inbox handler (handleInbox, in the Fedify version of ./fedify-seams.ts) does for
 * such a delivery, and so what this does, for a POST to /inbox with one draft-cavage `Signature` header:
 *
 * - Digest: the `SHA-256=` digest of the body, as received, matches;
 * - Date: within SIGNATURE_TIME_WINDOW of now, either way (Fedify's signatureTimeWindow);
 * - the signature: over the signed headers, `(request-target)`, `date` and `digest` among them,
 *   the signing string built as Fedify builds it, verified (RSASSA-PKCS1-v1_5, SHA-256) with the
 *   key Fedify's key cache holds in memory for the keyId (withMemoryKeyCache: the entry Fedify's
 *   own verification filled and would read next), as a KeyObject, on this thread: an RSA-2048
 *   verify costs ~25 µs here, and handing it to libuv's pool cost the main thread more than that
 *   (queueing the work, waking a pool thread — dear on this virtualised machine — and the
 *   completion callback; perf put them at a quarter of the thread's time under load);
 * - the key's owner is the activity's `actor`;
 * - then the inbox message Fedify enqueues, field for field (fedifyInboxMessage, ./fedify-seams.ts),
 *   on the same queue (OrderedInbox: the actor's ordering key), and
 *   Fedify's answer: 202 "Activity is enqueued.". (Fedify's activity-id idempotence read before
 *   enqueueing cannot hit with a queue: see take(); its worker makes the real check.)
 *
 * Why it is safe: every check Fedify makes before enqueueing is made, or the request goes to
 * Fedify. Fedify's JSON-LD parse at the door decides which `actor` and `id` the worker will see;
 * here they are read from the JSON, so only documents whose reading cannot differ are taken: a
 * compacted document whose contexts are Fedify's preloaded ones (anywhere in it), plus inline
 * context objects that define no keyword, no term named `id`, `type` or `actor` and nothing
 * mapped to an `…actor` IRI; no top-level key that is a keyword (but @context) or an IRI; `id` and
 * `actor` absolute http(s) URLs given as strings. The listeners then work from the worker's own
 * parse of the queued JSON, as after Fedify's handler. One difference remains, by design: an
 * activity Fedify would have refused at the door as unparseable (a malformed date inside the
 * Note…) is answered 202 here, and dropped by the worker as a permanent parse error (nothing is
 * stored, nothing retried), as Mastodon answers 202 before processing.
 *
 * When it falls back (null: guardInbox, the other gates and Fedify take the request, untouched):
 * any other path or method; no Signature, several, or an RFC 9421 Signature-Input; an Accept
 * header other than `*\/*` (Fedify's Vary logic); a key not in memory, not RSA/SHA-256, or without an owner; a
 * server the domain policy refuses (guardInbox answers 403); a body over MAX_INBOX_BYTES, too
 * deep, not a JSON object, or with a remote or unusual context; a Linked Data `signature` or a
 * `proof`; a `Delete` (src/federation/inbox/unknown-delete.ts decides those); signature
 * parameters `created`/`expires`; a signed header missing, repeated or with odd characters; a
 * Digest or Date not in the usual form; and any failed check — a bad signature (Fedify then
 * refetches the key, which may have been rotated), a digest mismatch, a stale Date, an actor that
 * is not the key's owner (a forwarded activity, ./inbox/forwarded.ts): Fedify's path answers
 * those as it always has.
 */
import { createHash, KeyObject, verify as cryptoVerify } from 'node:crypto';
import type { KvStore, MessageQueue } from '@fedify/fedify';
import { CryptographicKey } from '@fedify/vocab';
import type { DocumentLoader } from '@fedify/vocab-runtime';
import type { Services } from '../context.ts';
import type { RequestContext } from '../http/index.ts';
import { StringResponse } from '../http/index.ts';
import { jsonNestingExceeds, MAX_JSON_DEPTH } from '../lib/json-depth.ts';
import { MAX_INBOX_BYTES, remoteContextUrls, SIGNATURE_WINDOW_MS } from './inbox-guard.ts';
import { isPreloadedContext, peekMemoryKey } from './loaders.ts';
import { fedifyInboxMessage } from './fedify-seams.ts';

export { SIGNATURE_TIME_WINDOW } from './inbox-guard.ts';
const WINDOW_MS = SIGNATURE_WINDOW_MS;

const TEXT_PLAIN = 'text/plain; charset=utf-8';

export interface InboxFastPathDeps {
  services: Services;
  /** The withMemoryKeyCache store inside it, whose memory holds the keys (peekMemoryKey). */
  keyMemory: KvStore;
  /** Fedify's inbox queue (OrderedInbox over the jobs table). */
  queue: MessageQueue;
  /** The loaders Fedify's contexts use, for building a cached key document (CryptographicKey.fromJsonLd). */
  contextLoader: DocumentLoader;
  documentLoader: DocumentLoader;
}

export interface InboxFastPathStats {
  /** Deliveries verified and enqueued here. */
  accepted: number;
  /** Inbox POSTs handed on to Fedify's path, by reason. */
  fallbacks: Record<string, number>;
}

export interface InboxFastPath {
  /** A Response (202) when the delivery was taken here; null (or a promise of null) to hand it on. */
  handle(ctx: RequestContext): Promise<Response | null> | null;
  readonly stats: InboxFastPathStats;
}

/** A cached key document, once built: what the fast path needs of it, or null when it is not for here. */
interface UsableKey {
  key: KeyObject;
  owner: string;
}

/** The parameters of a draft-cavage Signature header, parsed exactly as Fedify parses them. */
function signatureParams(header: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of header.split(',')) {
    const m = /^\s*([A-Za-z]+)=(?:"([^"]*)"|(\d+))\s*$/.exec(pair);
    if (m) out[m[1]!] = m[2] ?? m[3]!;
  }
  return out;
}

const HTTP_WS = /^[\t\n\r ]+|[\t\n\r ]+$/g;
/** Printable ASCII (and tabs): what a signed header may hold here. */
const PLAIN_VALUE = /^[\t\x20-\x7e]*$/;
const DIGEST = /^\s*sha-256=([A-Za-z0-9+/]{43}=)\s*$/i;
/** Padded base64 (with the length check in isBase64): one pass, no backtracking over 344 characters. */
const BASE64_CHARS = /^[A-Za-z0-9+/]+={0,2}$/;
const isBase64 = (s: string) => s.length % 4 === 0 && BASE64_CHARS.test(s);

function isHttpUrl(s: unknown): s is string {
  if (typeof s !== 'string' || !URL.canParse(s)) return false;
  const p = new URL(s).protocol;
  return p === 'https:' || p === 'http:';
}

/** Terms an inline context may not define: those the door reads (their meaning must be the preloaded contexts'). */
const READ_TERMS = new Set(['id', 'type', 'actor', 'signature', 'proof']);
const TERM_DEFINITION_KEYS = new Set(['@id', '@type', '@container']);

/** An inline context object that cannot change what `id`, `type` and `actor` mean. */
function harmlessInlineContext(ctx: Record<string, unknown>): boolean {
  for (const [term, def] of Object.entries(ctx)) {
    if (term.startsWith('@') || term.includes(':') || READ_TERMS.has(term)) return false;
    let iri: unknown;
    if (typeof def === 'string') iri = def;
    else if (def && typeof def === 'object' && !Array.isArray(def)) {
      for (const k of Object.keys(def)) if (!TERM_DEFINITION_KEYS.has(k)) return false;
      const d = def as Record<string, unknown>;
      iri = d['@id'];
      if (d['@type'] !== undefined && typeof d['@type'] !== 'string') return false;
      const c = d['@container'];
      if (c !== undefined && typeof c !== 'string' && !(Array.isArray(c) && c.every((x) => typeof x === 'string'))) return false;
    } else return false;
    if (typeof iri !== 'string' || iri.startsWith('@') || /actor$/i.test(iri)) return false;
  }
  return true;
}

/** The top-level @context: preloaded context URLs and harmless inline objects only. */
function plainContext(context: unknown): boolean {
  const entries = Array.isArray(context) ? context : [context];
  if (entries.length === 0) return false;
  for (const c of entries) {
    if (typeof c === 'string') {
      if (!isPreloadedContext(c)) return false;
    } else if (!c || typeof c !== 'object' || Array.isArray(c) || !harmlessInlineContext(c as Record<string, unknown>)) return false;
  }
  return true;
}

function verifies(data: Buffer, key: KeyObject, signature: Buffer): boolean {
  try {
    return cryptoVerify('sha256', data, key, signature);
  } catch {
    return false;
  }
}

export function createInboxFastPath(deps: InboxFastPathDeps): InboxFastPath {
  const { services, keyMemory, queue } = deps;
  const stats: InboxFastPathStats = { accepted: 0, fallbacks: {} };
  const built = new WeakMap<object, Promise<UsableKey | null>>();

  const fallback = (reason: string): null => {
    stats.fallbacks[reason] = (stats.fallbacks[reason] ?? 0) + 1;
    return null;
  };

  /** The key document built as Fedify's key cache builds it (the same memoised CryptographicKey), once. */
  const usableKey = (doc: object): Promise<UsableKey | null> => {
    let p = built.get(doc);
    if (!p) {
      p = (async () => {
        const key = await CryptographicKey.fromJsonLd(doc, { contextLoader: deps.contextLoader, documentLoader: deps.documentLoader });
        const pub = key.publicKey;
        const hash = (pub?.algorithm as { hash?: { name?: string } } | undefined)?.hash?.name;
        if (!pub || pub.algorithm.name !== 'RSASSA-PKCS1-v1_5' || hash !== 'SHA-256' || !key.ownerId) return null;
        return { key: KeyObject.from(pub), owner: key.ownerId.href };
      })().catch(() => null);
      built.set(doc, p);
    }
    return p;
  };

  async function take(ctx: RequestContext): Promise<Response | null> {
    // The request's shape: one draft-cavage signature, a body, nothing Fedify would treat apart.
    const sigs = ctx.headerValues('signature');
    if (sigs.length !== 1 || ctx.header('signature-input') !== null) return fallback('signature header');
    // Fedify adds Vary: Accept when the Accept header asks for JSON-LD; absent or `*/*` (what
    // fetch() sends) it does not.
    const accept = ctx.headerValues('accept');
    if (accept.length > 1 || (accept.length === 1 && accept[0]!.replace(HTTP_WS, '') !== '*/*')) return fallback('accept header');
    const body = ctx.rawBody;
    if (body === null || body.byteLength === 0 || body.byteLength > MAX_INBOX_BYTES) return fallback('body size');
    const params = signatureParams(sigs[0]!.replace(HTTP_WS, ''));
    const { keyId, headers, signature } = params;
    if (keyId === undefined || headers === undefined || signature === undefined || 'created' in params || 'expires' in params) return fallback('signature parameters');
    if (!isHttpUrl(keyId) || !isBase64(signature)) return fallback('signature parameters');
    const keyUrl = new URL(keyId);

    // The key, only from memory: a miss is Fedify's (it fetches or reads the store, and fills the memory).
    const doc = peekMemoryKey(keyMemory, keyUrl.href);
    if (doc === undefined) return fallback('key not in memory');
    // A server the domain policy refuses: guardInbox's 403.
    if (!(await services.domainPolicy.allowed(keyUrl.host))) return fallback('domain policy');

    // Date, within the window.
    const dates = ctx.headerValues('date');
    if (dates.length !== 1) return fallback('date header');
    const date = Date.parse(dates[0]!.replace(HTTP_WS, ''));
    // The wall clock, not services.clock, as Fedify's own check (Temporal.Now): senders sign with
    // theirs. In the lab, the signature clock every instance shares.
    const now = services.signatureClock?.now().getTime() ?? Date.now();
    if (!Number.isFinite(date) || Math.abs(date - now) > WINDOW_MS) return fallback('date');

    // Digest of the body as received.
    const digests = ctx.headerValues('digest');
    const digest = digests.length === 1 ? DIGEST.exec(digests[0]!) : null;
    if (!digest) return fallback('digest header');
    if (createHash('sha256').update(body).digest('base64') !== digest[1]) return fallback('digest mismatch');

    // The signing string, as Fedify builds it.
    const names = headers.split(/\s+/g);
    if (!names.includes('(request-target)') || !names.includes('date') || !names.includes('digest')) return fallback('signed headers');
    const lines: string[] = [];
    for (const name of names) {
      if (name === '(request-target)') {
        lines.push('(request-target): post /inbox');
        continue;
      }
      const values = ctx.headerValues(name.toLowerCase());
      if (values.length !== 1) return fallback('signed headers');
      const value = values[0]!.replace(HTTP_WS, '');
      if (!PLAIN_VALUE.test(value)) return fallback('signed headers');
      lines.push(`${name}: ${value}`);
    }

    // The activity: a compacted object whose actor and id read the same with or without JSON-LD.
    const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
    if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) return fallback('json');
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return fallback('json');
    }
    if (!json || typeof json !== 'object' || Array.isArray(json)) return fallback('json');
    if ('signature' in json || 'proof' in json) return fallback('embedded signature or proof');
    for (const k of Object.keys(json)) if ((k.startsWith('@') && k !== '@context') || k.includes(':')) return fallback('activity shape');
    if (!plainContext(json['@context'])) return fallback('context');
    for (const url of remoteContextUrls(json)) if (!isPreloadedContext(url)) return fallback('context');
    const { type, id, actor } = json;
    // A plain term (a compact or full IRI could name a Delete too).
    if (typeof type !== 'string' || !/^[A-Za-z]+$/.test(type) || type === 'Delete') return fallback('activity type');
    if (!isHttpUrl(id) || !isHttpUrl(actor)) return fallback('activity shape');

    // The key: built once per cached document; its owner must be the actor.
    const usable = await usableKey(doc);
    if (usable === null) return fallback('key type');
    if (usable.owner !== new URL(actor).href) return fallback('actor is not the key owner');
    if (!verifies(Buffer.from(lines.join('\n')), usable.key, Buffer.from(signature, 'base64'))) return fallback('signature');

    // Fedify's message (routeActivity). Its idempotence read before enqueueing is left out: with a
    // queue it can never find anything — the key it reads (`origin\nid\nsharedInbox`) is written only
    // by Fedify's queue-less path, and Roost always has a queue (its worker marks `[origin, id]`
    // after processing, and checks that itself) — so here it would be a round trip per delivery for nothing.
    await queue.enqueue(fedifyInboxMessage(ctx.url.origin, json));
    stats.accepted++;
    // (the fast path's response: no Headers object to fill and iterate)
    return StringResponse.withType('Activity is enqueued.', TEXT_PLAIN, 202);
  }

  return {
    stats,
    handle(ctx) {
      if (ctx.method !== 'POST' || ctx.path !== '/inbox') return null;
      return take(ctx);
    },
  };
}
