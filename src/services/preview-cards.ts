/**
 * Link preview cards (Mastodon's FetchLinkCardService and LinkCrawlWorker). When a status is
 * created, or its text changes in an edit, and it holds a link a card may come from (a local
 * status's text; a remote one's HTML, read as step 1 reads it), a job is queued in the same
 * transaction (never fetched in the request); the job:
 *
 *   1. takes the first http(s) URL of the source text that is not on this server (mentions and
 *      hashtags are not URLs in a local text, so they never count); for a status from another
 *      server, the first link of its HTML that is not a hashtag or a mention (previewCardUrlFromHtml,
 *      which also leaves out links to the accounts it mentions);
 *   2. skips a status that is gone, a reblog, already has a card, or has media (as Mastodon);
 *   3. reuses the card cached for that URL when it is less than two weeks old; otherwise fetches the
 *      page through the one bounded fetcher (src/lib/safe-fetch.ts: public addresses only unless
 *      federation.allowPrivateAddresses, 3 redirects each checked again, 5 s in all, 1 MiB), keeps
 *      it only when it is a 200 text/html page, and reads its OpenGraph tags with
 *      open-graph-scraper given the HTML (it fetches nothing itself), falling back to <title> and
 *      the description meta tag as Mastodon does; a page with no title gives no card;
 *   4. stores the card under the URL (one row per URL, shared) and links it to the status with the
 *      URL as the status wrote it (what `card.url` shows), unless the status was edited meanwhile.
 *
 * oEmbed first, as Mastodon: a page that announces a JSON oEmbed endpoint (`<link rel="alternate"
 * type="application/json+oembed">`) has it fetched through the same fetcher; a `link`, `photo` or
 * `video` answer makes the card (a video's iframe through sanitizeOEmbedHtml: http(s) src, size,
 * Mastodon's sandbox, nothing else); `rich` or anything malformed falls back to OpenGraph.
 *
 * Deliberate simplification: the card's image is the remote URL the page names (Mastodon downloads
 * and re-serves it with a blurhash; Roost does not proxy it yet, so `blurhash` is null and an
 * OpenGraph card's `width`/`height` come from og:image:width/height). No Twitter player cards
 * (Mastodon makes a video card of twitter:player; Roost makes a link card of such pages). The job
 * runs once (no retry), as Mastodon's LinkCrawlWorker.
 */
import { Parser } from 'htmlparser2';
import ogs from 'open-graph-scraper';
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import { schedule } from '../events/timers.ts';
import { normalizeLanguage } from '../lib/languages.ts';
import { MAX_JSON_BYTES, safeFetch, type SafeFetchOptions } from '../lib/safe-fetch.ts';
import { plainText, safeHttpUrl, sanitizeOEmbedHtml } from '../lib/sanitize.ts';
import { extractUrls } from '../lib/text-format.ts';

export const FETCH_CARD_JOB = 'statuses.fetch_card';
export const CARD_FETCH_TIMEOUT_MS = 5_000;
export const CARD_MAX_PAGE_BYTES = 1024 * 1024;
export const CARD_MAX_REDIRECTS = 3;
/** A cached card older than this is fetched again (Mastodon: two weeks). */
export const CARD_REFRESH_MS = 14 * 24 * 60 * 60 * 1000;
const MAX_TITLE = 500;
const MAX_DESCRIPTION = 2_000;
const MAX_NAME = 500;

/** The URL a card would be made for: the first http(s) link of a local status's text that is not on this server. */
export function previewCardUrl(text: string, localHosts: readonly string[]): string | null {
  for (const part of extractUrls(text)) {
    if (!part.url) continue;
    let url: URL;
    try {
      url = new URL(part.url);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    if (localHosts.includes(url.host.toLowerCase()) || localHosts.includes(url.hostname.toLowerCase())) continue;
    return part.url;
  }
  return null;
}

/**
 * The URL a card would be made for from a remote status's HTML: the first http(s) link that is not
 * a hashtag (rel="tag"), a mention (class u-url or h-card, or a link to a mentioned account) or on
 * this server — Mastodon's FetchLinkCardService#skip_link? for statuses from other servers.
 */
export function previewCardUrlFromHtml(html: string, localHosts: readonly string[], mentionUrls: readonly string[] = []): string | null {
  const found: string[] = [];
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name !== 'a' || !attrs.href) return;
        const rel = (attrs.rel ?? '').toLowerCase().split(/\s+/);
        // Mentions and hashtags: rel="tag" as sent, or their classes as Roost stores remote HTML
        // (the sanitiser keeps the classes and replaces rel with "nofollow noopener").
        if (rel.includes('tag') || /(?:^|\s)(?:u-url|h-card|mention|hashtag)(?:\s|$)/.test(attrs.class ?? '') || mentionUrls.includes(attrs.href)) return;
        found.push(attrs.href);
      },
    },
    { decodeEntities: true },
  );
  parser.write(html.slice(0, 100_000));
  parser.end();
  for (const href of found) {
    const url = previewCardUrl(href, localHosts);
    if (url === href) return url;
  }
  return null;
}

function localHosts(services: Services): string[] {
  const hosts = [services.config.domain.toLowerCase()];
  try {
    hosts.push(new URL(services.config.publicUrl).host.toLowerCase());
  } catch {
    /* no public URL */
  }
  return hosts;
}

/**
 * Queues the card fetch for a status, in the writer's transaction, only when it links somewhere a
 * card could come from: a local status's source `text`, or a status from another server by its
 * `html` (its mentions and hashtags are links too: Mastodon marks them, and they are left out here
 * as in the job; the job also leaves out links to the accounts it mentions, which it reads).
 */
export async function schedulePreviewCard(services: Services, sql: Sql, statusId: string, source: { text: string } | { html: string }): Promise<void> {
  const hosts = localHosts(services);
  if (!('text' in source ? previewCardUrl(source.text, hosts) : previewCardUrlFromHtml(source.html, hosts))) return;
  await schedule(sql, FETCH_CARD_JOB, { statusId }, { dedupeKey: `${FETCH_CARD_JOB}:${statusId}`, maxAttempts: 1, clock: services.clock });
}

/** Whether the status has media attachments: Mastodon makes no card for those. */
async function statusHasMedia(services: Services, statusId: string): Promise<boolean> {
  const rows = await services.db.sql.query(`select 1 from media_attachments where status_id = $1 limit 1`, [statusId]);
  return rows.length > 0;
}

/** What a page says about itself, as stored in preview_cards. */
export interface ParsedCard {
  url: string;
  title: string;
  description: string;
  type: 'link' | 'photo' | 'video';
  authorName: string;
  authorUrl: string;
  providerName: string;
  providerUrl: string;
  /** Sanitised (sanitizeOEmbedHtml): an oEmbed video's iframe, else empty. */
  html: string;
  width: number;
  height: number;
  imageUrl: string | null;
  embedUrl: string;
  language: string | null;
  publishedAt: Date | null;
}

const dimension = (v: unknown): number => {
  const n = Math.floor(Number(v));
  return Number.isFinite(n) && n > 0 && n <= 100_000 ? n : 0;
};

/** The card a page of HTML gives (null: no title, so no card), its relative URLs resolved against pageUrl. */
export async function parseCardHtml(html: string, pageUrl: URL): Promise<ParsedCard | null> {
  let result;
  try {
    // No fallbacks where Mastodon has none (images of the page, favicons); title and description do fall back.
    ({ result } = await ogs({ html, onlyGetOpenGraphInfo: ['image', 'url', 'favicon', 'logo', 'audioUrl', 'date'] }));
  } catch {
    return null;
  }
  const title = plainText(result.ogTitle ?? '', MAX_TITLE);
  if (!title) return null;
  const resolve = (href: string | undefined): string | null => {
    if (!href) return null;
    try {
      return safeHttpUrl(new URL(href, pageUrl));
    } catch {
      return null;
    }
  };
  const image = result.ogImage?.find((i) => resolve(i.url));
  // The canonical URL, same origin only (as Mastodon's LinkDetailsExtractor), else where the page was found.
  const canonical = resolve(result.ogUrl);
  const published = result.articlePublishedTime ? new Date(result.articlePublishedTime) : null;
  return {
    url: canonical && new URL(canonical).origin === pageUrl.origin ? canonical : pageUrl.href,
    title,
    description: plainText(result.ogDescription ?? '', MAX_DESCRIPTION),
    type: 'link',
    authorName: plainText(result.author ?? '', MAX_NAME),
    authorUrl: '',
    providerName: plainText(result.ogSiteName ?? '', MAX_NAME),
    providerUrl: '',
    html: '',
    width: image ? dimension(image.width) : 0,
    height: image ? dimension(image.height) : 0,
    imageUrl: image ? resolve(image.url) : null,
    embedUrl: '',
    language: normalizeLanguage(result.ogLocale ?? null),
    publishedAt: published && !Number.isNaN(published.getTime()) ? published : null,
  };
}

/** The oEmbed JSON endpoint a page announces (`<link rel="alternate" type="application/json+oembed">`), resolved, or null. */
export function oEmbedEndpoint(html: string, pageUrl: URL): string | null {
  let found: string | null = null;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (found || name !== 'link' || !attrs.href) return;
        const rel = (attrs.rel ?? '').toLowerCase().split(/\s+/);
        if (!rel.includes('alternate') || (attrs.type ?? '').trim().toLowerCase() !== 'application/json+oembed') return;
        try {
          found = safeHttpUrl(new URL(attrs.href, pageUrl));
        } catch {
          /* not a URL */
        }
      },
    },
    { decodeEntities: true },
  );
  parser.write(html.slice(0, 200_000));
  parser.end();
  return found;
}

/**
 * The card an oEmbed answer gives (Mastodon's FetchLinkCardService#attempt_oembed): version 1.0
 * with a type; `link` with its thumbnail, `photo` with its url (required) as image and embed_url,
 * `video` with its sanitised iframe; `rich` gives none (its HTML relies on scripts), nor does
 * anything malformed — the page's OpenGraph tags are read instead.
 */
export function parseOEmbed(json: unknown, endpoint: URL, pageUrl: URL): ParsedCard | null {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return null;
  const e = json as Record<string, unknown>;
  if (String(e.version ?? '') !== '1.0' || !['link', 'photo', 'video'].includes(e.type as string)) return null;
  const resolve = (v: unknown): string | null => {
    if (typeof v !== 'string' || !v) return null;
    try {
      return safeHttpUrl(new URL(v, endpoint));
    } catch {
      return null;
    }
  };
  const card: ParsedCard = {
    url: pageUrl.href,
    title: plainText(e.title ?? '', MAX_TITLE),
    description: '',
    type: e.type as ParsedCard['type'],
    authorName: plainText(e.author_name ?? '', MAX_NAME),
    authorUrl: resolve(e.author_url) ?? '',
    providerName: plainText(e.provider_name ?? '', MAX_NAME),
    providerUrl: resolve(e.provider_url) ?? '',
    html: '',
    width: 0,
    height: 0,
    imageUrl: resolve(e.thumbnail_url),
    embedUrl: '',
    language: null,
    publishedAt: null,
  };
  if (card.type === 'photo') {
    const url = resolve(e.url);
    if (!url) return null;
    card.embedUrl = url;
    card.imageUrl = url;
  }
  if (card.type === 'photo' || card.type === 'video') {
    card.width = dimension(e.width);
    card.height = dimension(e.height);
  }
  if (card.type === 'video') card.html = sanitizeOEmbedHtml(e.html);
  return card;
}

export interface FetchCardOptions {
  timeoutMs?: number;
  maxBytes?: number;
  lookup?: SafeFetchOptions['lookup'];
}

/** Fetches and parses the page at `url` (null: refused, failed, not a 200 HTML page, or no title). Never throws. */
export async function fetchCard(services: Services, url: string, opts: FetchCardOptions = {}): Promise<ParsedCard | null> {
  const log = services.log.child({ module: 'preview-cards' });
  try {
    const res = await safeFetch(new URL(url), {
      allowPrivateAddresses: services.config.federation.allowPrivateAddresses,
      userAgent: `Roost/${services.version} (+${services.config.publicUrl}) Bot`,
      headers: { accept: 'text/html' },
      timeoutMs: opts.timeoutMs ?? CARD_FETCH_TIMEOUT_MS,
      maxBytes: opts.maxBytes ?? CARD_MAX_PAGE_BYTES,
      maxRedirects: CARD_MAX_REDIRECTS,
      lookup: opts.lookup ?? services.dnsLookup,
      network: services.network,
    });
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (res.status !== 200 || type !== 'text/html') {
      log.info({ url, status: res.status, type }, 'no preview card: not an HTML page');
      return null;
    }
    const charset = /charset\s*=\s*"?([\w-]+)/i.exec(res.headers.get('content-type') ?? '')?.[1];
    let html: string;
    try {
      html = new TextDecoder(charset ?? 'utf-8').decode(res.body);
    } catch {
      html = new TextDecoder('utf-8').decode(res.body);
    }
    const endpoint = oEmbedEndpoint(html, res.url);
    if (endpoint) {
      const embed = await fetchOEmbed(services, new URL(endpoint), res.url, opts);
      if (embed) return embed;
    }
    return await parseCardHtml(html, res.url);
  } catch (err) {
    log.info({ url, err: (err as Error).message }, 'no preview card: the page could not be fetched');
    return null;
  }
}

/** The oEmbed answer at `endpoint` as a card, through the same bounded fetcher (null: none usable). Never throws. */
async function fetchOEmbed(services: Services, endpoint: URL, pageUrl: URL, opts: FetchCardOptions): Promise<ParsedCard | null> {
  try {
    const res = await safeFetch(endpoint, {
      allowPrivateAddresses: services.config.federation.allowPrivateAddresses,
      userAgent: `Roost/${services.version} (+${services.config.publicUrl}) Bot`,
      headers: { accept: 'application/json' },
      timeoutMs: opts.timeoutMs ?? CARD_FETCH_TIMEOUT_MS,
      maxBytes: Math.min(opts.maxBytes ?? MAX_JSON_BYTES, MAX_JSON_BYTES),
      maxRedirects: CARD_MAX_REDIRECTS,
      lookup: opts.lookup ?? services.dnsLookup,
      network: services.network,
    });
    if (res.status !== 200) return null;
    return parseOEmbed(JSON.parse(new TextDecoder('utf-8').decode(res.body)), res.url, pageUrl);
  } catch (err) {
    services.log.child({ module: 'preview-cards' }).info({ endpoint: endpoint.href, err: (err as Error).message }, 'oEmbed not used');
    return null;
  }
}

/** The job: makes (or reuses) the card of a status's first link and links it. Returns the card id, or null. */
export async function fetchPreviewCard(services: Services, statusId: string, opts: FetchCardOptions = {}): Promise<string | null> {
  const sql = services.db.sql;
  const [status] = await sql.query<{ text: string; content: string; local: boolean; edited_at: string | null; has_card: boolean; mention_urls: string[] }>(
    `select s.text, s.content, s.local, s.edited_at::text as edited_at,
            exists (select 1 from preview_cards_statuses pcs where pcs.status_id = s.id) as has_card,
            array(select coalesce(a.url, a.uri) from mentions m join accounts a on a.id = m.account_id where m.status_id = s.id) as mention_urls
       from statuses s where s.id = $1 and s.deleted_at is null and s.reblog_of_id is null`,
    [statusId],
  );
  if (!status || status.has_card) return null;
  const url = status.local
    ? previewCardUrl(status.text, localHosts(services))
    : previewCardUrlFromHtml(status.content, localHosts(services), status.mention_urls ?? []);
  if (!url || (await statusHasMedia(services, statusId))) return null;
  const now = services.clock.now();
  // Cached under that URL, or under where a link written that way led before (a redirect, a canonical URL).
  const [cached] = await sql.query<{ id: string }>(
    `select pc.id::text from preview_cards pc where pc.url = $1 and pc.updated_at > $2
     union all
     select pc.id::text from preview_cards_statuses pcs join preview_cards pc on pc.id = pcs.preview_card_id
      where pcs.url = $1 and pc.updated_at > $2
     limit 1`,
    [url, new Date(now.getTime() - CARD_REFRESH_MS)],
  );
  let cardId = cached?.id ?? null;
  if (!cardId) {
    const card = await fetchCard(services, url, opts);
    if (!card) return null;
    const [row] = await sql.query<{ id: string }>(
      `insert into preview_cards (id, url, title, description, type, author_name, author_url, provider_name, provider_url, html,
                                  width, height, image_url, embed_url, language, published_at, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17)
       on conflict (url) do update set title = excluded.title, description = excluded.description, type = excluded.type,
         author_name = excluded.author_name, author_url = excluded.author_url, provider_name = excluded.provider_name,
         provider_url = excluded.provider_url, html = excluded.html, width = excluded.width, height = excluded.height,
         image_url = excluded.image_url, embed_url = excluded.embed_url, language = excluded.language,
         published_at = excluded.published_at, updated_at = excluded.updated_at
       returning id::text`,
      [
        services.ids.next(), card.url, card.title, card.description, card.type, card.authorName, card.authorUrl, card.providerName,
        card.providerUrl, card.html, card.width, card.height, card.imageUrl, card.embedUrl, card.language, card.publishedAt, now,
      ],
    );
    cardId = row!.id;
  }
  // Only onto the version of the status the link was read from: an edit meanwhile queued its own fetch.
  const attached = await sql.query(
    `insert into preview_cards_statuses (status_id, preview_card_id, url)
     select s.id, $2, $3 from statuses s
      where s.id = $1 and s.deleted_at is null and s.edited_at::text is not distinct from $4::text
     on conflict (status_id) do nothing returning status_id`,
    [statusId, cardId, url, status.edited_at],
  );
  return attached.length ? cardId : null;
}
