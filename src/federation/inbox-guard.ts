/**
 * A cheap gate in front of Fedify's inbox handling. Fedify parses and JSON-LD-expands an inbox
 * POST (looking for Linked Data signatures and object proofs) before it checks the HTTP signature,
 * so without this gate anyone could make Roost expand any document and fetch any context for free.
 * For POSTs to /inbox and /users/{name}/inbox it refuses, before any JSON-LD work:
 *
 * - a request without a Signature or Signature-Input header: 401 (Mastodon's inbox requires an
 *   HTTP signature too; every server signs its deliveries);
 * - a body over MAX_INBOX_BYTES (413), nested deeper than MAX_JSON_DEPTH (a scan, not a parse), or
 *   not JSON: 400;
 * - a JSON-LD @context, anywhere in the document, naming a remote document that is neither one of
 *   Fedify's preloaded contexts (ActivityStreams, security, Mastodon's, GoToSocial's, Lemmy's…)
 *   nor on the sender's own server (the keyId's origin — Pleroma and Akkoma publish their litepub
 *   context there; fetching it costs no more than fetching the key, through the same bounded
 *   fetcher): 400. A context on a third server would let a peer aim Roost's fetches anywhere.
 *
 * - a request signed by a server the domain policy refuses (a suspended domain, or in allowlist
 *   mode one not allowed; `allowedHost`, services.domainPolicy.allowed): 403, before the body is
 *   read and before any key is fetched (Mastodon takes such activities and drops them; refusing
 *   says so, as GoToSocial does).
 *
 * Anything else goes on to Fedify untouched (its body is read from a clone).
 */
import { isPreloadedContext } from './loaders.ts';
import { jsonNestingExceeds, MAX_JSON_DEPTH } from '../lib/json-depth.ts';

/** An activity larger than this is not one anybody sends (Mastodon's are a few KiB). */
export const MAX_INBOX_BYTES = 1024 * 1024;

/** How far a signature's Date may be from now, either way (Fedify's signatureTimeWindow; Mastodon allows 12 hours). */
export const SIGNATURE_TIME_WINDOW = { hours: 12 } as const;
export const SIGNATURE_WINDOW_MS = SIGNATURE_TIME_WINDOW.hours * 3600_000;

const INBOX_PATH = /^\/(?:users\/[^/]+\/)?inbox$/;

/**
 * An inbox POST's body as text, read once per Request from a clone (Fedify reads the original):
 * the gates in front of Fedify (this guard, ./inbox/unknown-delete.ts, ./inbox/forwarded.ts) each
 * need it, and cloning a WHATWG body stream costs more than the parse.
 */
const bodies = new WeakMap<Request, Promise<string>>();
export function inboxBodyText(request: Request): Promise<string> {
  let text = bodies.get(request);
  if (!text) {
    text = request.clone().text();
    bodies.set(request, text);
  }
  return text;
}

/**
 * The body parsed, once per Request, for the gates after guardInbox (which has bounded its size
 * and depth by then); undefined when it is not JSON. Read-only: the gates share the one object.
 */
const parsed = new WeakMap<Request, unknown>();
export async function inboxBodyJson(request: Request): Promise<unknown> {
  if (parsed.has(request)) return parsed.get(request);
  const text = await inboxBodyText(request);
  if (parsed.has(request)) return parsed.get(request);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  parsed.set(request, json);
  return json;
}

function refuse(status: number, error: string): Response {
  return Response.json({ error }, { status });
}

/** The keyId of an HTTP signature (draft-cavage Signature or RFC 9421 Signature-Input), if any. */
export function signatureKeyId(headers: Headers): URL | null {
  const m = /keyId="([^"]*)"/i.exec(headers.get('signature') ?? '') ?? /keyid="([^"]*)"/i.exec(headers.get('signature-input') ?? '');
  if (!m || !URL.canParse(m[1]!)) return null;
  return new URL(m[1]!);
}

/** Every remote context URL a JSON-LD document names, at any depth (the depth is already bounded). */
export function remoteContextUrls(json: unknown, out: Set<string> = new Set()): Set<string> {
  const visitContext = (ctx: unknown) => {
    if (typeof ctx === 'string') out.add(ctx);
    else if (Array.isArray(ctx)) ctx.forEach(visitContext);
    else if (ctx && typeof ctx === 'object') remoteContextUrls(ctx, out); // scoped contexts inside term definitions
  };
  if (Array.isArray(json)) {
    for (const item of json) remoteContextUrls(item, out);
  } else if (json && typeof json === 'object') {
    for (const [key, value] of Object.entries(json)) {
      if (key === '@context') visitContext(value);
      else if (key === '@import' && typeof value === 'string') out.add(value); // JSON-LD 1.1 context import
      else if (value && typeof value === 'object') remoteContextUrls(value, out);
    }
  }
  return out;
}

/**
 * The gate: a Response refusing the request, or null to hand it to Fedify. Only inbox POSTs are
 * looked at; everything else returns null at once.
 */
export async function guardInbox(
  request: Request,
  allowedHost?: (host: string) => Promise<boolean>,
  signatureNow?: () => number,
): Promise<Response | null> {
  if (request.method !== 'POST') return null;
  const { pathname } = new URL(request.url);
  if (!INBOX_PATH.test(pathname)) return null;
  if (!request.headers.has('signature') && !request.headers.has('signature-input')) return refuse(401, 'Request not signed');
  if (signatureNow) {
    // A signature clock of the instance's own (the lab's): Fedify's window is off, this is it.
    const date = Date.parse(request.headers.get('date') ?? '');
    if (!Number.isFinite(date) || Math.abs(date - signatureNow()) > SIGNATURE_WINDOW_MS) return refuse(401, 'Signature date outside the window');
  }
  const signer = signatureKeyId(request.headers);
  if (signer && allowedHost && (signer.protocol === 'https:' || signer.protocol === 'http:') && !(await allowedHost(signer.host))) {
    return refuse(403, 'Activities from this server are not accepted');
  }
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > MAX_INBOX_BYTES) return refuse(413, 'Activity too large');
  const text = await inboxBodyText(request);
  if (text.length > MAX_INBOX_BYTES) return refuse(413, 'Activity too large');
  if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) return refuse(400, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  const json = await inboxBodyJson(request);
  if (json === undefined) return refuse(400, 'Invalid JSON');
  // One node object: compacted, or expanded (full IRIs, no @context), which Fedify reads as well.
  // A top-level array (jsonld.js's expand() output) is refused: Fedify copies the document into
  // an object to detach a Linked Data signature and then finds no actor, and the body cannot be
  // unwrapped here without breaking its signed Digest.
  if (!json || typeof json !== 'object' || Array.isArray(json)) return refuse(400, 'Invalid activity');
  const keyOrigin = signer?.origin ?? null;
  for (const url of remoteContextUrls(json)) {
    if (isPreloadedContext(url)) continue;
    const origin = URL.canParse(url) ? new URL(url).origin : null;
    if (origin === null || origin === 'null' || origin !== keyOrigin) return refuse(400, `Remote JSON-LD context not accepted: ${url.slice(0, 200)}`);
  }
  return null;
}
