/**
 * rel="me" verification of profile fields (Mastodon's VerifyAccountLinksWorker): when a local
 * account's fields change, a job fetches each field whose whole value is an http(s) URL and marks
 * the field verified (`verified_at`) when that page links back to the profile with
 * `<a rel="me" href="…">` or `<link rel="me" href="…">`.
 *
 * The fetch is the one place Roost requests a URL a user typed, so it is careful: http and https
 * only, at most 3 redirects (each one checked again), 5 seconds in all, at most 1 MiB of body, and
 * no loopback, private, link-local or otherwise non-public addresses — checked on the addresses the
 * connection actually uses (DNS answers are checked at connect time, so a name cannot be rebound
 * to a private address between the check and the request) — unless
 * federation.allowPrivateAddresses is on (tests and labs).
 */
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { Services } from '../context.ts';
import { AccountSchema } from '../db/entities/index.ts';
import type { Sql } from '../db/sql.ts';
import { schedule } from '../effects/events.ts';
import type { Clock } from '../lib/clock.ts';
import { decodeEntities } from '../lib/html.ts';

export const VERIFY_LINKS_JOB = 'accounts.verify_links';

export const FETCH_TIMEOUT_MS = 5_000;
export const MAX_PAGE_BYTES = 1024 * 1024;
export const MAX_REDIRECTS = 3;

/** Queues a verification of the account's fields (one pending job per account is enough: it reads the fields when it runs). */
export async function enqueueLinkVerification(sql: Sql, accountId: string, clock?: Clock): Promise<void> {
  await schedule(sql, VERIFY_LINKS_JOB, { accountId }, { dedupeKey: `${VERIFY_LINKS_JOB}:${accountId}`, maxAttempts: 3, clock });
}

/** A field value Mastodon would verify: the whole value is one http(s) URL with a host. */
export function verifiableUrl(value: string): URL | null {
  const v = value.trim();
  if (!v || /\s/.test(v) || v.length > 2048) return null;
  try {
    const url = new URL(v);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname || url.username || url.password) return null;
    return url;
  } catch {
    return null;
  }
}

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

export class UnsafeUrlError extends Error {
  override name = 'UnsafeUrlError';
}

/** dns.lookup that refuses non-public answers: runs when the socket connects, for every hop. */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as LookupAddress[];
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

export interface FetchPageOptions {
  allowPrivateAddresses: boolean;
  userAgent: string;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
}

export interface FetchedPage {
  /** Where the page was finally found, after redirects. */
  url: URL;
  status: number;
  body: string;
}

function requestOnce(url: URL, opts: FetchPageOptions, signal: AbortSignal): Promise<{ status: number; location: string | null; body: string }> {
  const maxBytes = opts.maxBytes ?? MAX_PAGE_BYTES;
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.get(
      url,
      {
        signal,
        lookup: guardedLookup(opts.allowPrivateAddresses),
        headers: { accept: 'text/html, application/xhtml+xml;q=0.9, */*;q=0.1', 'user-agent': opts.userAgent },
        // A page is fetched, not kept alive for more.
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          res.resume();
          resolve({ status, location: res.headers.location ?? null, body: '' });
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
        res.on('end', () => resolve({ status, location: null, body: new TextDecoder('utf-8').decode(Buffer.concat(chunks)) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
}

/**
 * Fetches a page under the rules above. Throws UnsafeUrlError for a refused URL or address, or the
 * network error; returns the final status and body otherwise.
 */
export async function fetchPageSafely(start: URL, opts: FetchPageOptions): Promise<FetchedPage> {
  const signal = AbortSignal.timeout(opts.timeoutMs ?? FETCH_TIMEOUT_MS);
  const maxRedirects = opts.maxRedirects ?? MAX_REDIRECTS;
  let url = start;
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnsafeUrlError(`${url.protocol} URLs are not fetched`);
    if (url.username || url.password) throw new UnsafeUrlError('URLs with credentials are not fetched');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // IP literals never go through the lookup: check them here.
    if (isIP(host) && !opts.allowPrivateAddresses && isNonPublicAddress(host)) throw new UnsafeUrlError(`${host} is not a public address`);
    const res = await requestOnce(url, opts, signal);
    if (res.location === null) return { url, status: res.status, body: res.body };
    if (hop >= maxRedirects) throw new UnsafeUrlError(`more than ${maxRedirects} redirects`);
    url = new URL(res.location, url);
  }
}

// --- the link back --------------------------------------------------------------------------

const TAG_RE = /<(a|link)\b((?:[^>"']|"[^"]*"|'[^']*')*)>/gi;
const ATTR_RE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

/** The hrefs of every `<a>` and `<link>` whose rel includes `me`, resolved against the page URL. */
export function relMeLinks(html: string, pageUrl: URL): string[] {
  const out: string[] = [];
  for (const tag of html.matchAll(TAG_RE)) {
    const attrs = new Map<string, string>();
    for (const a of tag[2]!.matchAll(ATTR_RE)) {
      const name = a[1]!.toLowerCase();
      if (!attrs.has(name)) attrs.set(name, decodeEntities(a[2] ?? a[3] ?? a[4] ?? ''));
    }
    const rel = (attrs.get('rel') ?? '').toLowerCase().split(/\s+/);
    const href = attrs.get('href')?.trim();
    if (!rel.includes('me') || !href) continue;
    try {
      out.push(new URL(href, pageUrl).href);
    } catch {
      /* not a URL */
    }
  }
  return out;
}

/** The URLs that count as this profile: its web page (what Mastodon checks) and its actor URI. */
function profileUrls(account: { url?: string | null; uri: string }): Set<string> {
  const set = new Set<string>();
  for (const u of [account.url, account.uri]) {
    if (!u) continue;
    set.add(new URL(u).href.toLowerCase());
  }
  return set;
}

/**
 * The job: verifies every field of a local account that names a URL and is not verified yet.
 * Marks only fields whose value is still the one fetched (the user may have edited meanwhile).
 * A page that cannot be fetched, or does not link back, leaves the field unverified (no retry:
 * the next edit of the fields tries again, as in Mastodon).
 */
export async function verifyAccountLinks(services: Services, accountId: string): Promise<{ verified: string[] }> {
  const log = services.log.child({ module: 'link-verification' });
  const account = await services.db.em().findOne(AccountSchema, { id: accountId, domain: null });
  if (!account || account.suspendedAt) return { verified: [] };
  const targets = profileUrls(account);
  const pending = [...new Set(account.fields.filter((f) => !f.verified_at && verifiableUrl(f.value)).map((f) => f.value))];
  const verified: string[] = [];
  await Promise.all(
    pending.map(async (value) => {
      try {
        const page = await fetchPageSafely(verifiableUrl(value)!, {
          allowPrivateAddresses: services.config.federation.allowPrivateAddresses,
          userAgent: `Roost/${services.version} (+${services.config.publicUrl})`,
        });
        if (page.status < 200 || page.status >= 300) return;
        if (relMeLinks(page.body, page.url).some((href) => targets.has(href.toLowerCase()))) verified.push(value);
      } catch (err) {
        log.info({ accountId, url: value, err: (err as Error).message }, 'profile link not verified');
      }
    }),
  );
  if (verified.length === 0) return { verified };
  const now = services.clock.now().toISOString();
  await services.db.em().transactional(async (tx) => {
    const fresh = await tx.findOne(AccountSchema, { id: accountId });
    if (!fresh) return;
    fresh.fields = fresh.fields.map((f) => (!f.verified_at && verified.includes(f.value) ? { ...f, verified_at: now } : f));
    await tx.flush();
  });
  log.info({ accountId, verified }, 'profile links verified');
  return { verified };
}
