/**
 * The one bounded, SSRF-safe fetcher for everything Roost fetches from the outside world (actors,
 * keys, WebFinger, JSON-LD contexts, profile links; later media and previews):
 *
 * - http and https only, no credentials in URLs;
 * - the private-address check runs on the addresses the connection actually uses: the DNS answer
 *   is checked inside the socket's lookup, at connect time, for every hop, so a name cannot be
 *   rebound to a private address between a check and the request; IP literals are checked before;
 *   loopback, private, link-local, CGNAT, documentation, multicast and reserved ranges (and their
 *   IPv4-mapped IPv6 forms) are refused unless `allowPrivateAddresses` (tests and labs);
 * - redirects are followed by hand, each hop checked again, at most `maxRedirects`;
 * - a connect timeout and a deadline for the whole fetch (all hops, headers and body), so a tarpit
 *   peer holds a request (and its socket) for seconds, not undici's 300;
 * - the body is streamed and counted: a declared Content-Length over the cap is refused before
 *   reading, and the stream is destroyed as soon as the count passes the cap, so at most `maxBytes`
 *   (plus one chunk) is ever held, whatever the peer sends;
 * - no keep-alive pool: each fetch owns its socket and closes it, unless the caller hands in an
 *   agent of its own (Web Push keeps one per instance for the few push services it talks to, as
 *   Mastodon keeps a pool per push origin); the agent's connections still resolve through the
 *   guarded lookup, so the address check holds for every socket it opens.
 *
 * Name resolution can be injected (`lookup`): tests simulate DNS, e.g. a rebinding name.
 */
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { Network } from './network.ts';

/** Mastodon's cap for JSON documents (actors, keys, WebFinger, contexts). */
export const MAX_JSON_BYTES = 1024 * 1024;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_REDIRECTS = 3;

// --- addresses ------------------------------------------------------------------------------

const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv6');

/** Loopback, private, link-local, CGNAT, documentation, multicast, reserved (IPv4-mapped IPv6 included). */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** A URL or address the fetcher refuses, or a response it will not read (too large, too many redirects). */
export class UnsafeUrlError extends Error {
  override name = 'UnsafeUrlError';
}

/** A lookup that refuses non-public answers: runs when the socket connects (before any TCP connection), for every hop. */
export function guardedLookup(allowPrivate: boolean, resolve: LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = (Array.isArray(addresses) ? addresses : [{ address: addresses, family: isIP(addresses as string) }]) as LookupAddress[];
      const refused = allowPrivate ? undefined : list.find((a) => isNonPublicAddress(a.address));
      if (refused || list.length === 0) {
        return callback(new UnsafeUrlError(`${hostname} resolves to a non-public address`) as NodeJS.ErrnoException, '', 0);
      }
      if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      else callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

// --- fetching -------------------------------------------------------------------------------

export interface SafeFetchOptions {
  allowPrivateAddresses: boolean;
  userAgent: string;
  /** Request headers (accept, …); user-agent is added. */
  headers?: Record<string, string>;
  /** Signs a hop: gets its URL and headers, returns the headers to send (HTTP signatures). */
  sign?: (url: URL, headers: Record<string, string>) => Promise<Record<string, string>>;
  /** Deadline for the whole fetch, every hop and the body included. */
  timeoutMs?: number;
  connectTimeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  /** Name resolution (default node:dns lookup); its answers are checked at connect time. */
  lookup?: LookupFunction;
  signal?: AbortSignal;
  /** A keep-alive agent of the caller's (see above); by default none: one socket per fetch. */
  agent?: http.Agent;
  /** GET by default; a POST (Web Push) sends `body` and follows no redirect (give maxRedirects 0). */
  method?: 'GET' | 'POST';
  body?: Buffer;
  /** The lab's virtual network (src/lib/network.ts): each hop goes there instead of a socket. */
  network?: Network;
}

export interface SafeResponse {
  /** Where the document was finally found, after redirects. */
  url: URL;
  status: number;
  headers: Headers;
  body: Buffer;
}

interface Hop {
  status: number;
  headers: Headers;
  location: string | null;
  body: Buffer;
}

function toHeaders(raw: http.IncomingHttpHeaders): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) h.append(k, one);
  }
  return h;
}

function requestOnce(url: URL, headers: Record<string, string>, opts: SafeFetchOptions, signal: AbortSignal): Promise<Hop> {
  const maxBytes = opts.maxBytes ?? MAX_JSON_BYTES;
  const connectTimeoutMs = opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    let settled = false;
    const fail = (e: unknown) => {
      if (settled) return;
      settled = true;
      reject(e);
    };
    const req = client.request(
      url,
      {
        method: opts.method ?? 'GET',
        signal,
        lookup: guardedLookup(opts.allowPrivateAddresses, opts.lookup ?? (dnsLookup as unknown as LookupFunction)),
        headers,
        // One socket per fetch, closed after it: nothing pooled for a peer to hold (unless the
        // caller keeps its own agent).
        agent: opts.agent ?? false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const resHeaders = toHeaders(res.headers);
        if (status >= 300 && status < 400 && res.headers.location) {
          res.destroy();
          settled = true;
          resolve({ status, headers: resHeaders, location: res.headers.location, body: Buffer.alloc(0) });
          return;
        }
        const declared = Number(res.headers['content-length'] ?? NaN);
        if (declared > maxBytes) {
          req.destroy(new UnsafeUrlError(`the page is larger than ${maxBytes} bytes`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            req.destroy(new UnsafeUrlError(`the page is larger than ${maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          resolve({ status, headers: resHeaders, location: null, body: Buffer.concat(chunks, size) });
        });
        res.on('error', fail);
        res.on('aborted', () => fail(new Error('the response was cut short')));
      },
    );
    req.on('error', fail);
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => req.destroy(new Error(`connect timeout after ${connectTimeoutMs} ms`)), connectTimeoutMs);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    req.end(opts.body);
  });
}

/** One hop over a virtual network: the same size cap and redirect handling as a socket's. */
async function requestOnNetwork(network: Network, url: URL, headers: Record<string, string>, opts: SafeFetchOptions, signal: AbortSignal): Promise<Hop> {
  const lower: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) lower[k.toLowerCase()] = v;
  const answer = await network({ method: opts.method ?? 'GET', url, headers: lower, body: opts.body ?? null });
  signal.throwIfAborted();
  const resHeaders = new Headers(answer.headers);
  const location = answer.status >= 300 && answer.status < 400 ? resHeaders.get('location') : null;
  if (location) return { status: answer.status, headers: resHeaders, location, body: Buffer.alloc(0) };
  const maxBytes = opts.maxBytes ?? MAX_JSON_BYTES;
  if (answer.body.byteLength > maxBytes) throw new UnsafeUrlError(`the page is larger than ${maxBytes} bytes`);
  return { status: answer.status, headers: resHeaders, location: null, body: Buffer.from(answer.body) };
}

/** Checks what can be checked before connecting: scheme, credentials, IP literals. */
export function checkFetchableUrl(url: URL, allowPrivateAddresses: boolean): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnsafeUrlError(`${url.protocol} URLs are not fetched`);
  if (url.username || url.password) throw new UnsafeUrlError('URLs with credentials are not fetched');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // IP literals never go through the lookup: check them here.
  if (isIP(host) && !allowPrivateAddresses && isNonPublicAddress(host)) throw new UnsafeUrlError(`${host} is not a public address`);
}

/**
 * Fetches a URL under the rules above. Throws UnsafeUrlError for a refused URL, address, size or
 * redirect chain, or the network/timeout error; otherwise returns the final response, whatever its
 * status, with its whole (capped) body.
 */
export async function safeFetch(start: URL, opts: SafeFetchOptions): Promise<SafeResponse> {
  const deadline = AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const signal = opts.signal ? AbortSignal.any([deadline, opts.signal]) : deadline;
  const maxRedirects = opts.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  let url = start;
  for (let hop = 0; ; hop++) {
    signal.throwIfAborted();
    checkFetchableUrl(url, opts.allowPrivateAddresses);
    let headers: Record<string, string> = { ...opts.headers, 'user-agent': opts.userAgent };
    if (opts.sign) headers = await opts.sign(url, headers);
    const res = opts.network ? await requestOnNetwork(opts.network, url, headers, opts, signal) : await requestOnce(url, headers, opts, signal);
    if (res.location === null) return { url, status: res.status, headers: res.headers, body: res.body };
    if (hop >= maxRedirects) throw new UnsafeUrlError(`more than ${maxRedirects} redirects`);
    url = new URL(res.location, url);
  }
}
