// The per-request context handed to handlers. Everything uWS gave us was copied synchronously
// (method, path, query string, headers, body bytes); the WHATWG objects built from them
// (`request`, `headers`, `url`), the parsed query, the AbortSignal and the child logger are created
// on first use, so a handler that needs none of them pays for none of them.

import type { Logger } from 'pino';
import type { Files } from './body.ts';
import type { UploadedFile } from './multipart.ts';
import { parseQuery, type Params } from './params.ts';
import { clientAddress, type TrustedProxies } from '../lib/client-address.ts';

export type { UploadedFile };

export interface RequestContext {
  /** WHATWG Request with the buffered body (built on first access). */
  readonly request: Request;
  readonly url: URL;
  /** As sent, e.g. 'GET'. For HEAD requests served by a GET route this is still 'HEAD'. */
  readonly method: string;
  /** Raw path (still %-encoded), no query string. */
  readonly path: string;
  readonly headers: Headers;
  /** Fast header lookup without building Headers: lowercase name → first value or null. */
  header(name: string): string | null;
  /** Every value of a header as received (lowercase name), in order; [] when absent. */
  headerValues(name: string): string[];
  /**
   * The request body's bytes as received, null when there was none; empty for a multipart body,
   * which is parsed as it arrives (its fields in `body`, its files on disk in `files`).
   */
  readonly rawBody: Uint8Array | null;
  /** Path params of the matched route, URL-decoded. */
  readonly params: Record<string, string>;
  /** Normalised nested params from the query string. */
  readonly query: Params;
  /** Normalised params from a JSON / urlencoded / multipart body ({} when none). */
  readonly body: Params;
  /** `{ ...query, ...body }`: Mastodon reads params from either. */
  readonly input: Params;
  /** Files from a multipart body, by field name (`media[]` → `media`, an array). */
  readonly files: Files;
  /** X-Request-Id of this request (the client's if sane, else a new UUID). */
  readonly reqId: string;
  /** Child of the server logger with { module: 'http', reqId }. */
  readonly log: Logger;
  /** Aborts when the client goes away (or the server force-closes during shutdown). */
  readonly signal: AbortSignal;
  /**
   * The client's address: the peer's, or from a trusted proxy the one X-Forwarded-For names
   * (src/lib/client-address.ts). Rate limits and everything that records an address use this.
   */
  readonly remoteAddress: string;
  /** For middleware (auth puts the viewer here). */
  readonly state: Record<string, unknown>;
  /** Set a header on whatever response this request gets, errors included (rate-limit headers). */
  setResponseHeader(name: string, value: string): void;
  /**
   * Vouch for the request before its body is read (a check before the body found a user's valid
   * token): its body no longer counts against the budget of unauthenticated bodies (body-budget.ts).
   */
  markAuthenticated(): void;
}

/** What the server side of a request provides to its context. */
export interface ExchangeSource {
  /** The connection's peer address. */
  remoteAddress(): string;
  /** Peers whose X-Forwarded-For is believed (none when absent). */
  readonly trustedProxies?: TrustedProxies;
}

const NO_PROXIES: TrustedProxies = () => false;
const NO_ROUTE_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;
const HOST_RE = /^[A-Za-z0-9.\-]{1,253}(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](?::\d{1,5})?$/;

/** Base URL for a request: an absolute origin as is, a sane Host as http://host, else http://localhost. */
export function baseUrl(origin: string | null): string {
  if (origin === null) return 'http://localhost';
  if (origin.includes('://')) return origin;
  return HOST_RE.test(origin) ? `http://${origin}` : 'http://localhost';
}

export class HttpContext implements RequestContext {
  readonly method: string;
  readonly path: string;
  readonly reqId: string;
  params: Record<string, string>;
  body: Params = {};
  files: Files = {};
  /** Raw request body bytes, null when there was none. */
  rawBody: Uint8Array | null = null;
  readonly state: Record<string, unknown> = {};
  /** Flat [name, value, …] added to the response by setResponseHeader, or null. */
  responseHeaders: string[] | null = null;
  /** A check before the body vouched for the request (markAuthenticated). */
  authenticated = false;

  #rawQuery: string;
  /** Flat [name, value, name, value…], names lowercase, as received. */
  #rawHeaders: string[];
  /** publicUrl (no trailing slash) or the Host header. */
  #origin: string | null;
  #source: ExchangeSource;
  #parentLog: Logger;

  #query: Params | undefined;
  #input: Params | undefined;
  #headers: Headers | undefined;
  #url: URL | undefined;
  #request: Request | undefined;
  #log: Logger | undefined;
  #controller: AbortController | undefined;
  #aborted = false;
  #remote: string | undefined;

  /**
   * @param origin publicUrl without trailing slash ('https://example.com'), or the Host header
   *   value (then the base is http://<host>), or null (http://localhost).
   */
  constructor(method: string, path: string, rawQuery: string, rawHeaders: string[], reqId: string, origin: string | null, source: ExchangeSource, parentLog: Logger, params: Record<string, string> = NO_ROUTE_PARAMS) {
    this.method = method;
    this.path = path;
    this.#rawQuery = rawQuery;
    this.#rawHeaders = rawHeaders;
    this.reqId = reqId;
    this.#origin = origin;
    this.#source = source;
    this.#parentLog = parentLog;
    this.params = params;
  }

  markAuthenticated(): void {
    this.authenticated = true;
  }

  setResponseHeader(name: string, value: string): void {
    const lower = name.toLowerCase();
    const h = (this.responseHeaders ??= []);
    for (let i = 0; i < h.length; i += 2) {
      if (h[i] === lower) {
        h[i + 1] = value;
        return;
      }
    }
    h.push(lower, value);
  }

  header(name: string): string | null {
    const h = this.#rawHeaders;
    for (let i = 0; i < h.length; i += 2) if (h[i] === name) return h[i + 1];
    return null;
  }

  headerValues(name: string): string[] {
    const h = this.#rawHeaders;
    const out: string[] = [];
    for (let i = 0; i < h.length; i += 2) if (h[i] === name) out.push(h[i + 1]);
    return out;
  }

  /** The raw query string (after '?', not decoded). */
  get rawQuery(): string {
    return this.#rawQuery;
  }

  get query(): Params {
    return (this.#query ??= parseQuery(this.#rawQuery));
  }

  get input(): Params {
    if (this.#input === undefined) {
      const q = this.query;
      this.#input = { ...q, ...this.body };
    }
    return this.#input;
  }

  get headers(): Headers {
    if (this.#headers === undefined) {
      const h = new Headers();
      const raw = this.#rawHeaders;
      for (let i = 0; i < raw.length; i += 2) {
        try {
          h.append(raw[i], raw[i + 1]);
        } catch {
          // A header value WHATWG refuses (e.g. control characters): leave it out.
        }
      }
      this.#headers = h;
    }
    return this.#headers;
  }

  get url(): URL {
    return (this.#url ??= new URL(this.#rawQuery ? `${this.path}?${this.#rawQuery}` : this.path, baseUrl(this.#origin)));
  }

  get request(): Request {
    if (this.#request === undefined) {
      const m = this.method;
      const body = m === 'GET' || m === 'HEAD' ? null : this.rawBody;
      this.#request = new Request(this.url, { method: m, headers: this.headers, body, signal: this.signal });
    }
    return this.#request;
  }

  get log(): Logger {
    return (this.#log ??= this.#parentLog.child({ reqId: this.reqId }));
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(abortReason());
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get remoteAddress(): string {
    return (this.#remote ??= clientAddress(this.#source.remoteAddress(), this.header('x-forwarded-for'), this.#source.trustedProxies ?? NO_PROXIES));
  }

  /** Called by the server when the client disconnects. */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#controller?.abort(abortReason());
  }
}

function abortReason(): Error {
  const e = new Error('The client closed the connection');
  e.name = 'AbortError';
  return e;
}
