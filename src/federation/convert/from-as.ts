/**
 * ActivityPub → rows: remote actors become (or refresh) remote accounts. Everything a remote
 * server says is sanitised here, on ingest (src/lib/sanitize.ts): the summary and field values as
 * Mastodon's strict HTML, names as plain text, url/avatar/header as http(s) URLs or nothing, each
 * cut to a sane length, so what is stored is safe to serve as it is.
 */
import { isIP } from 'node:net';
import {
  Article,
  Audio,
  Document,
  Emoji,
  Hashtag,
  Image,
  isActor,
  LanguageString,
  Mention,
  Note,
  PropertyValue,
  Question,
  Video,
  type Actor,
  type Link,
  type Object as AsObject,
} from '@fedify/vocab';
import type { DocumentLoader } from '@fedify/vocab-runtime';
import type { StatusVisibility } from '../../db/entities/status.entity.ts';
import type { RemoteMediaItem } from '../../services/media.ts';
import { persistRemoteEmojis, type RemoteEmoji } from '../../services/custom-emojis.ts';
import type { Services } from '../../context.ts';
import { AccountSchema, type Account } from '../../db/entities/index.ts';
import { RoostError } from '../../lib/errors.ts';
import { followActorRedirect } from '../../services/moves.ts';
import { plainText, REMOTE_LIMITS, safeHttpUrl, sanitizeRemoteHtml } from '../../lib/sanitize.ts';
import { isNonPublicAddress } from '../../lib/safe-fetch.ts';
import { SHORTCODE } from '../../lib/emoji-shortcodes.ts';

/** What Mastodon accepts as a remote username (Account's format validation for remote accounts). */
const REMOTE_USERNAME = /^[a-z0-9_]+(?:[a-z0-9_.-]+[a-z0-9_]+)?$/i;
/** At most this many attachments are looked at (each may be a link Fedify would fetch). */
const MAX_ATTACHMENTS_SCANNED = 32;
const MAX_ALIASES = 32;
import { insertRemoteAccount, refreshRemoteAccount } from '../../services/accounts.ts';

function str(v: unknown): string {
  return v == null ? '' : String(v);
}

export function actorDomain(actorId: URL): string {
  return actorId.host.toLowerCase();
}

/** Inserts or refreshes the remote account for an actor; returns the row. */
export async function persistAccount(services: Services, actor: Actor): Promise<Account> {
  if (!actor.id) throw new RoostError(422, 'Actor has no id');
  const uri = actor.id.href;
  const username = actor.preferredUsername ? str(actor.preferredUsername) : null;
  if (!username) throw new RoostError(422, `Actor ${uri} has no preferredUsername`);
  if (username.length > 255 || !REMOTE_USERNAME.test(username)) throw new RoostError(422, `Actor ${uri} has an invalid preferredUsername`);
  const now = services.clock.now();
  const fields: Account['fields'] = [];
  let scanned = 0;
  for await (const a of actor.getAttachments({ suppressError: true })) {
    if (++scanned > MAX_ATTACHMENTS_SCANNED || fields.length >= REMOTE_LIMITS.fields) break;
    if (a instanceof PropertyValue) {
      const name = plainText(a.name, REMOTE_LIMITS.fieldName);
      if (!name) continue;
      fields.push({ name, value: sanitizeRemoteHtml(a.value, REMOTE_LIMITS.fieldValue), verified_at: null });
    }
  }
  const icon = await actor.getIcon({ suppressError: true }).catch(() => null);
  const image = await actor.getImage({ suppressError: true }).catch(() => null);
  const link = (u: URL | null | undefined) => (u ? safeHttpUrl(u) : null);
  // Inboxes are POSTed to by Fedify's delivery, outside the bounded fetcher: an inbox on a
  // loopback/private address literal or a localhost name is not kept (tests and labs excepted).
  const inbox = (u: URL | null | undefined) => {
    const href = link(u);
    if (!href || services.config.federation.allowPrivateAddresses) return href;
    const host = new URL(href).hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) && isNonPublicAddress(host))) return null;
    return href;
  };
  const data = {
    username,
    domain: actorDomain(actor.id),
    displayName: plainText(actor.name, REMOTE_LIMITS.displayName),
    note: sanitizeRemoteHtml(await actorSummary(actor), REMOTE_LIMITS.note),
    url: safeHttpUrl(actor.url instanceof URL ? actor.url : (actor.url as { href?: URL } | null)?.href) ?? uri,
    inboxUrl: inbox(actor.inboxId),
    sharedInboxUrl: inbox(actor.endpoints?.sharedInbox),
    outboxUrl: link(actor.outboxId),
    followersUrl: link(actor.followersId),
    followingUrl: link(actor.followingId),
    featuredUrl: link(actor.featuredId),
    actorType: actorTypeName(actor),
    locked: actor.manuallyApprovesFollowers ?? false,
    discoverable: actor.discoverable ?? null,
    indexable: actor.indexable ?? false,
    avatarUrl: icon?.url instanceof URL ? safeHttpUrl(icon.url) : null,
    headerUrl: image?.url instanceof URL ? safeHttpUrl(image.url) : null,
    fields,
    alsoKnownAs: actor.aliasIds.slice(0, MAX_ALIASES).map((u) => safeHttpUrl(u)).filter((u): u is string => u !== null),
    fetchedAt: now,
    updatedAt: now,
  };
  await persistActorEmojis(services, actor, data.domain).catch(() => undefined);
  // The writes belong to the accounts service: a new row is born with its account actor's
  // snapshot, and a change of `locked` is a step of that actor.
  const existing = await services.db.em().findOne(AccountSchema, { uri });
  if (existing) {
    const refreshed = await refreshRemoteAccount(services, existing, data);
    if (await followActorRedirect(services, refreshed.id, actor.successorId?.href ?? null)) return (await services.db.em().findOne(AccountSchema, { id: refreshed.id }))!;
    return refreshed;
  }
  const account = await insertRemoteAccount(services, { uri, ...data });
  if (actor.successorId && (await followActorRedirect(services, account.id, actor.successorId.href))) {
    return (await services.db.em().findOne(AccountSchema, { id: account.id }))!;
  }
  return account;
}

/**
 * An actor's profile text: its HTML `summary`; Misskey sends the MFM source beside it as
 * `_misskey_summary`, which is shown as text only when there is no `summary` at all. Fedify drops
 * the extension, so it is read from the JSON as received (Fedify keeps it).
 */
export async function actorSummary(actor: Actor): Promise<string | null> {
  if (actor.summary != null) return String(actor.summary);
  const json = (await actor.toJsonLd().catch(() => null)) as Record<string, unknown> | null;
  const mfm = json?._misskey_summary ?? json?.['https://misskey-hub.net/ns#_misskey_summary'];
  const text = typeof mfm === 'string' ? mfm : Array.isArray(mfm) && typeof (mfm[0] as { '@value'?: unknown })?.['@value'] === 'string' ? String((mfm[0] as { '@value': string })['@value']) : null;
  if (!text) return null;
  return text
    .slice(0, REMOTE_LIMITS.note)
    .split(/\n{2,}/)
    .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
    .join('');
}

export function actorTypeName(actor: AsObject): string {
  const name = actor.constructor.name;
  return ['Person', 'Service', 'Application', 'Group', 'Organization'].includes(name) ? name : 'Person';
}

export { isActor };

// --- Statuses: what a Note says, sanitised (federation/remote-statuses.ts resolves its references) ---

/** The public collection, in each spelling peers use. */
const PUBLIC_IRIS = new Set(['https://www.w3.org/ns/activitystreams#Public', 'as:Public', 'Public']);

export function isPublicCollection(iri: string): boolean {
  return PUBLIC_IRIS.has(iri);
}

/**
 * A remote status's visibility from its audience, as Mastodon's ActivityPub::Activity::Create
 * (visibility_from_audience): Public in `to` → public; Public in `cc` → unlisted; the author's
 * followers in `to` → private; otherwise direct (made `limited` by the caller when the audience
 * names accounts the tags do not mention, as Mastodon's process_audience does).
 */
export function visibilityFromAudience(to: readonly string[], cc: readonly string[], followersUrl: string | null): StatusVisibility {
  if (to.some(isPublicCollection)) return 'public';
  if (cc.some(isPublicCollection)) return 'unlisted';
  if (followersUrl && to.includes(followersUrl)) return 'private';
  return 'direct';
}

/** Remote status text cut to this many characters (after sanitising); the spoiler to SPOILER_LIMIT. */
export const STATUS_CONTENT_LIMIT = 50_000;
const SPOILER_LIMIT = 1_000;
/** At most this many tags of a Note are looked at (each may be a link Fedify would fetch). */
const MAX_TAGS_SCANNED = 64;
const LANGUAGE = /^[a-zA-Z]{2,3}([-_][a-zA-Z0-9]{1,8})*$/;
/** What Mastodon takes as a hashtag name. */
const HASHTAG = /^[\p{L}\p{M}\p{N}_]{1,255}$/u;

type StatusObject = Note | Article | Question;

/**
 * Tags and attachments are read as embedded in the Note, never fetched by a link (as Mastodon
 * reads them): a Note listing 64 tag links costs no request.
 */
const NO_FETCH: DocumentLoader = async (url) => {
  throw new Error(`not fetched: ${url}`);
};

/** The kinds of object Roost stores as a status (a Question is one with a poll: questionPoll). */
export function isStatusObject(o: unknown): o is StatusObject {
  return o instanceof Note || o instanceof Article || o instanceof Question;
}

function linkHref(u: URL | Link | null | undefined): string | null {
  if (!u) return null;
  return u instanceof URL ? u.href : (u.href?.href ?? null);
}

/** What a Note says, sanitised, with its references (mentions, parent) left as URIs. */
export interface NoteFields {
  uri: string;
  url: string | null;
  content: string;
  spoilerText: string;
  sensitive: boolean;
  language: string | null;
  published: Date;
  updated: Date | null;
  inReplyToUri: string | null;
  to: string[];
  cc: string[];
  /** Mention tags' hrefs. */
  mentionHrefs: string[];
  /** Hashtag names, without '#'. */
  tags: string[];
  attachments: RemoteMediaItem[];
  /** Custom emojis (Emoji tags), stored as the author's server's copies. */
  emojis: RemoteEmoji[];
  /**
   * The post it quotes: FEP-044f `quote`, else a legacy name (`_misskey_quote`, `quoteUri`,
   * `quoteUrl`: `legacy`), with the authorization (`quoteAuthorization`) it names.
   */
  quote: { uri: string; legacy: boolean; authorization: string | null } | null;
  /** Who its author lets quote it without review (interactionPolicy.canQuote.automaticApproval); null: unsaid. */
  quoteApprovals: string[] | null;
}

/**
 * Reads a Note (or Article): content through the one sanitiser (src/lib/sanitize.ts), the spoiler
 * as plain text, the language from contentMap, dates not after `now`, the url only on the
 * status's own host, tags and attachments bounded and only as embedded (nothing is fetched). `fallback` is the activity's audience, for
 * objects that carry none of their own (Mastodon reads the object's to/cc, else the activity's).
 */
export async function noteFields(
  note: StatusObject,
  opts: { now: Date; maxAttachments: number; fallback?: { to: URL[]; cc: URL[] }; raw?: unknown },
): Promise<NoteFields> {
  const uri = note.id!.href;
  const host = note.id!.host;
  let language: string | null = null;
  let raw: string | null = note.content == null ? null : String(note.content);
  for (const c of note.contents) {
    if (c instanceof LanguageString) {
      const tag = c.locale.baseName;
      if (!language && tag.length <= 16 && LANGUAGE.test(tag)) language = tag;
      raw ??= String(c);
    } else raw ??= String(c);
  }
  const urlHref = safeHttpUrl(linkHref(note.url as URL | Link | null));
  const url = urlHref && new URL(urlHref).host === host ? urlHref : uri;
  const date = (t: { epochMilliseconds: number } | null) => (t ? new Date(Math.min(t.epochMilliseconds, opts.now.getTime())) : null);
  const published = date(note.published) ?? opts.now;
  const updated = date(note.updated);
  const mentionHrefs: string[] = [];
  const tags: string[] = [];
  const emojis: RemoteEmoji[] = [];
  let scanned = 0;
  for await (const tag of note.getTags({ suppressError: true, documentLoader: NO_FETCH })) {
    if (++scanned > MAX_TAGS_SCANNED) break;
    if (tag instanceof Emoji) {
      const emoji = await remoteEmoji(tag);
      if (emoji) emojis.push(emoji);
    } else if (tag instanceof Mention) {
      const href = safeHttpUrl(tag.href);
      if (href) mentionHrefs.push(href);
    } else if (tag instanceof Hashtag) {
      const name = str(tag.name).trim().replace(/^#/, '');
      if (HASHTAG.test(name)) tags.push(name);
    }
  }
  const attachments: RemoteMediaItem[] = [];
  // Mastodon's extensions (toot:blurhash, toot:focalPoint) are not in Fedify's vocabulary: read
  // from the JSON as received (the activity's, or the Note's own when it was fetched).
  const extras = mediaExtras(opts.raw ?? (await note.toJsonLd().catch(() => null)), uri);
  scanned = 0;
  for await (const a of note.getAttachments({ suppressError: true, documentLoader: NO_FETCH })) {
    if (++scanned > MAX_ATTACHMENTS_SCANNED || attachments.length >= opts.maxAttachments) break;
    if (!(a instanceof Document || a instanceof Image || a instanceof Video || a instanceof Audio)) continue;
    const href = safeHttpUrl(linkHref(a.url as URL | Link | null));
    if (!href) continue;
    const extra = extras.get(href);
    attachments.push({
      url: href,
      mediaType: a.mediaType && a.mediaType.length <= 255 && /^[\w.+-]+\/[\w.+-]+$/.test(a.mediaType) ? a.mediaType.toLowerCase() : null,
      // Mastodon's description: `summary`, else `name` (GoToSocial sends the alt text as `summary`).
      // Plain text, cut to Mastodon's description limit (persistRemoteMedia cuts to the configured one too).
      name: plainText(a.summary, 1_500).trim() || plainText(a.name, 1_500).trim() || null,
      // Checked when stored (persistRemoteMedia: the blurhash package decodes it, at most 5×5 components).
      blurhash: extra?.blurhash ?? null,
      width: typeof a.width === 'number' ? a.width : null,
      height: typeof a.height === 'number' ? a.height : null,
      focalPoint: extra?.focalPoint ?? null,
    });
  }
  const holder = rawNote(opts.raw ?? null, uri);
  // Misskey's `_misskey_content` and `source` carry the MFM/Markdown source beside the HTML
  // `content` it always sends too: the HTML is what is shown. A Note with no `content` at all
  // falls back to that source, as text.
  if (raw === null) raw = sourceAsHtml(holder);
  raw = withQuoteLink(raw ?? '', note.quoteUrl);
  const to = (note.toIds.length || note.ccIds.length ? note.toIds : (opts.fallback?.to ?? [])).map((u) => u.href);
  const cc = (note.toIds.length || note.ccIds.length ? note.ccIds : (opts.fallback?.cc ?? [])).map((u) => u.href);
  return {
    uri,
    url,
    content: sanitizeRemoteHtml(raw, STATUS_CONTENT_LIMIT),
    spoilerText: plainText(note.summary, SPOILER_LIMIT),
    sensitive: note.sensitive ?? false,
    language,
    published,
    updated: updated && updated.getTime() > published.getTime() ? updated : null,
    inReplyToUri: note.replyTargetId?.href ?? null,
    to,
    cc,
    mentionHrefs: [...new Set(mentionHrefs)],
    tags,
    attachments,
    emojis,
    quote: quoteOf(note),
    quoteApprovals: note.interactionPolicy?.canQuote ? note.interactionPolicy.canQuote.automaticApprovals.map((u) => u.href) : null,
  };
}

/** The quote a Note makes, as Mastodon reads it (the first of `quote`, `_misskey_quote`, `quoteUrl`, `quoteUri`). */
function quoteOf(note: StatusObject): NoteFields['quote'] {
  const fep = note.quoteId ? safeHttpUrl(note.quoteId) : null;
  const legacy = fep ? null : note.quoteUrl ? safeHttpUrl(note.quoteUrl) : null;
  const uri = fep ?? legacy;
  if (!uri) return null;
  const authorization = note.quoteAuthorizationId ? safeHttpUrl(note.quoteAuthorizationId) : null;
  return { uri, legacy: fep === null, authorization };
}

/** The Note `noteId` in the JSON as received: the document itself, or its embedded `object`. */
function rawNote(raw: unknown, noteId: string): Record<string, unknown> | null {
  if (!raw || typeof raw !== 'object') return null;
  const top = raw as Record<string, unknown>;
  const object = top.object && typeof top.object === 'object' && !Array.isArray(top.object) ? (top.object as Record<string, unknown>) : null;
  return top.id === noteId ? top : object && object.id === noteId ? object : null;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A Note's source text as HTML paragraphs (Misskey's `_misskey_content`, else `source.content`), or null. */
function sourceAsHtml(holder: Record<string, unknown> | null): string | null {
  if (!holder) return null;
  const source = holder.source && typeof holder.source === 'object' ? (holder.source as Record<string, unknown>).content : null;
  const text = typeof holder._misskey_content === 'string' ? holder._misskey_content : typeof source === 'string' ? source : null;
  if (!text) return null;
  return text
    .slice(0, STATUS_CONTENT_LIMIT)
    .split(/\n{2,}/)
    .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
    .join('');
}

/**
 * Quote posts (FEP-044f `quote`; Misskey's `_misskey_quote`, `quoteUrl`, Fedibird's and Pleroma's
 * `quoteUri`, which Fedify reads as `quoteUrl`): the quote itself is kept (`quote`, resolved by
 * federation/quotes.ts), and the quoted post also stays a link in the text, "RE: <url>", for
 * apps without quotes and for legacy quotes Mastodon does not show, the way Mastodon, Misskey and
 * Hollo write it into their own content — added only when the content does not link it already
 * (theirs do; Pleroma's and Akkoma's do not).
 */
function withQuoteLink(html: string, quote: URL | null): string {
  const href = quote ? safeHttpUrl(quote) : null;
  if (!href || html.includes(href) || html.includes(escapeHtml(href))) return html;
  const safe = escapeHtml(href);
  return `${html}<p class="quote-inline">RE: <a href="${safe}">${safe}</a></p>`;
}

const TOOT_NS = 'http://joinmastodon.org/ns#';

/** A JSON-LD value as a plain one: `{"@value": v}` (or a one-element array of it) → v. */
function literal(v: unknown): unknown {
  if (Array.isArray(v) && v.length === 1) v = v[0];
  return v && typeof v === 'object' && !Array.isArray(v) && '@value' in v ? (v as Record<string, unknown>)['@value'] : v;
}

/** Mastodon's blurhash and focalPoint of a Note's attachments, by attachment URL, from the JSON as received. */
function mediaExtras(raw: unknown, noteId: string): Map<string, { blurhash: string | null; focalPoint: [number, number] | null }> {
  const out = new Map<string, { blurhash: string | null; focalPoint: [number, number] | null }>();
  if (!raw || typeof raw !== 'object') return out;
  const top = raw as Record<string, unknown>;
  const object = top.object && typeof top.object === 'object' && !Array.isArray(top.object) ? (top.object as Record<string, unknown>) : null;
  const holder = top.id === noteId ? top : object && object.id === noteId ? object : null;
  if (!holder) return out;
  const list = Array.isArray(holder.attachment) ? holder.attachment : holder.attachment ? [holder.attachment] : [];
  for (const item of list.slice(0, MAX_ATTACHMENTS_SCANNED)) {
    if (!item || typeof item !== 'object') continue;
    const a = item as Record<string, unknown>;
    const rawUrl = Array.isArray(a.url) ? a.url[0] : a.url;
    const url = typeof rawUrl === 'string' ? rawUrl : rawUrl && typeof rawUrl === 'object' ? (rawUrl as Record<string, unknown>).href : null;
    const href = typeof url === 'string' ? safeHttpUrl(url) : null;
    if (!href) continue;
    // As sent (`blurhash`), or as Fedify hands over an activity whose linked-data signature it
    // verified: compacted against its own context, where Mastodon's terms are `toot:` or full IRIs.
    const hash = literal(a.blurhash ?? a['toot:blurhash'] ?? a[`${TOOT_NS}blurhash`]);
    let fp = a.focalPoint ?? a['toot:focalPoint'] ?? a[`${TOOT_NS}focalPoint`];
    if (fp && typeof fp === 'object' && !Array.isArray(fp)) fp = (fp as Record<string, unknown>)['@list'];
    if (Array.isArray(fp)) fp = fp.map(literal);
    const focalPoint =
      Array.isArray(fp) && fp.length === 2 && fp.every((n) => typeof n === 'number' && Number.isFinite(n) && n >= -1 && n <= 1) ? ([fp[0], fp[1]] as [number, number]) : null;
    out.set(href, { blurhash: typeof hash === 'string' && hash.length <= 100 ? hash : null, focalPoint });
  }
  return out;
}

// --- Polls: what a Question says of its poll --------------------------------------------------

/** At most this many options of a Question are looked at; a Question with more has no poll here. */
export const MAX_REMOTE_POLL_OPTIONS = 20;
/** Option titles are kept whole up to this length (a vote Note must repeat the title exactly). */
const POLL_OPTION_LIMIT = 1_000;

/** A remote poll as its Question states it. */
export interface QuestionPoll {
  options: string[];
  /** Votes per option, in order. */
  counts: number[];
  multiple: boolean;
  /** endTime (else the `closed` instant). */
  expiresAt: Date | null;
  /** `closed` is set (an instant or true). */
  closed: boolean;
  /** votersCount, when the server says it. */
  votersCount: number | null;
}

/**
 * The poll of a Question (Mastodon's PollParser): `anyOf` (multiple) or `oneOf` options, each a
 * Note whose `name` is the title and `replies.totalItems` its votes, read as embedded (nothing is
 * fetched); `endTime`, `closed`, `votersCount`. Null when it has no options, too many, blank or
 * duplicate titles (nothing a vote could name).
 */
export async function questionPoll(q: Question): Promise<QuestionPoll | null> {
  const multiple = q.inclusiveOptionIds.length > 0 || (await hasAny(q.getInclusiveOptions({ suppressError: true, documentLoader: NO_FETCH })));
  const items = multiple ? q.getInclusiveOptions({ suppressError: true, documentLoader: NO_FETCH }) : q.getExclusiveOptions({ suppressError: true, documentLoader: NO_FETCH });
  const options: string[] = [];
  const counts: number[] = [];
  for await (const o of items) {
    if (options.length >= MAX_REMOTE_POLL_OPTIONS) return null;
    const title = plainText(o.name, POLL_OPTION_LIMIT).trim();
    if (!title || options.includes(title)) return null;
    const replies = await o.getReplies({ suppressError: true, documentLoader: NO_FETCH }).catch(() => null);
    const n = replies?.totalItems;
    options.push(title);
    counts.push(typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : 0);
  }
  if (options.length === 0) return null;
  const closedAt = q.closed instanceof Object && 'epochMilliseconds' in q.closed ? new Date(q.closed.epochMilliseconds) : null;
  const end = q.endTime ? new Date(q.endTime.epochMilliseconds) : closedAt;
  const voters = q.voters;
  return {
    options,
    counts,
    multiple,
    expiresAt: end && Number.isFinite(end.getTime()) ? end : null,
    closed: q.closed === true || closedAt !== null,
    votersCount: typeof voters === 'number' && Number.isSafeInteger(voters) && voters >= 0 ? voters : null,
  };
}

/** The largest count a remote Note's `likes` / `shares` may claim (Mastodon's StatusStat::MAX_UNTRUSTED_COUNT). */
export const MAX_UNTRUSTED_COUNT = 100_000_000;

/**
 * A collection's `totalItems` as an untrusted count: a finite number, truncated to an integer and
 * clamped to [0, MAX_UNTRUSTED_COUNT] (-5 is 0, 1e12 is the cap, as Mastodon clamps); anything
 * else ("abc", null, a missing collection) is no count at all (null).
 */
export function untrustedCount(totalItems: unknown): number | null {
  if (typeof totalItems !== 'number' || !Number.isFinite(totalItems)) return null;
  return Math.min(MAX_UNTRUSTED_COUNT, Math.max(0, Math.trunc(totalItems)));
}

/**
 * What a remote Note says of its own favourites and reblogs: its `likes` and `shares`
 * collections' `totalItems`, read only when embedded (nothing is fetched), as Mastodon 4.3's
 * StatusParser reads them for status_stats' untrusted counts.
 */
export async function untrustedCounts(note: StatusObject): Promise<{ favourites: number | null; reblogs: number | null }> {
  const [likes, shares] = await Promise.all([
    note.getLikes({ suppressError: true, documentLoader: NO_FETCH }).catch(() => null),
    note.getShares({ suppressError: true, documentLoader: NO_FETCH }).catch(() => null),
  ]);
  return { favourites: untrustedCount(likes?.totalItems), reblogs: untrustedCount(shares?.totalItems) };
}

async function hasAny(items: AsyncIterable<unknown>): Promise<boolean> {
  for await (const _ of items) return true;
  return false;
}

/**
 * An `Emoji` tag as Mastodon reads one (process_emoji): `:name:` with a shortcode, an embedded
 * icon with an http(s) URL (never fetched), its id and `updated` when given; else null.
 */
export async function remoteEmoji(tag: Emoji): Promise<RemoteEmoji | null> {
  const shortcode = str(tag.name).trim().replace(/^:|:$/g, '');
  if (!SHORTCODE.test(shortcode)) return null;
  const icon = await tag.getIcon({ suppressError: true, documentLoader: NO_FETCH }).catch(() => null);
  const url = icon ? safeHttpUrl(linkHref(icon.url as URL | Link | null)) : null;
  if (!url) return null;
  const updated = tag.updated ? new Date(tag.updated.epochMilliseconds) : null;
  return { shortcode, url, uri: tag.id ? safeHttpUrl(tag.id) : null, updated };
}

/** The Emoji tags of an actor (its name, bio and fields use them), stored as its server's copies. */
async function persistActorEmojis(services: Services, actor: Actor, domain: string): Promise<void> {
  const emojis: RemoteEmoji[] = [];
  let scanned = 0;
  for await (const tag of actor.getTags({ suppressError: true, documentLoader: NO_FETCH })) {
    if (++scanned > MAX_TAGS_SCANNED) break;
    if (tag instanceof Emoji) {
      const emoji = await remoteEmoji(tag);
      if (emoji) emojis.push(emoji);
    }
  }
  await persistRemoteEmojis(services, domain, emojis);
}
