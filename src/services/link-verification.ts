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
 * federation.allowPrivateAddresses is on (tests and labs). The fetch itself is the one bounded
 * fetcher every outbound request uses (src/lib/safe-fetch.ts).
 */
import { isNonPublicAddress, safeFetch, UnsafeUrlError, type SafeFetchOptions } from '../lib/safe-fetch.ts';
import type { Services } from '../context.ts';
import { AccountSchema } from '../db/entities/index.ts';
import type { Sql } from '../db/sql.ts';
import { schedule } from '../events/timers.ts';
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

// --- fetching (through the one bounded fetcher, src/lib/safe-fetch.ts) -----------------------

export { isNonPublicAddress, UnsafeUrlError };

export interface FetchPageOptions {
  allowPrivateAddresses: boolean;
  userAgent: string;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  lookup?: SafeFetchOptions['lookup'];
  network?: SafeFetchOptions['network'];
}

export interface FetchedPage {
  /** Where the page was finally found, after redirects. */
  url: URL;
  status: number;
  body: string;
}

/**
 * Fetches a page under the rules above. Throws UnsafeUrlError for a refused URL or address, or the
 * network error; returns the final status and body otherwise.
 */
export async function fetchPageSafely(start: URL, opts: FetchPageOptions): Promise<FetchedPage> {
  const res = await safeFetch(start, {
    allowPrivateAddresses: opts.allowPrivateAddresses,
    userAgent: opts.userAgent,
    headers: { accept: 'text/html, application/xhtml+xml;q=0.9, */*;q=0.1' },
    timeoutMs: opts.timeoutMs ?? FETCH_TIMEOUT_MS,
    maxBytes: opts.maxBytes ?? MAX_PAGE_BYTES,
    maxRedirects: opts.maxRedirects ?? MAX_REDIRECTS,
    lookup: opts.lookup,
    network: opts.network,
  });
  return { url: res.url, status: res.status, body: new TextDecoder('utf-8').decode(res.body) };
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
          lookup: services.dnsLookup,
          network: services.network,
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
