/**
 * Mastodon's Status entity (entities/Status.md), pure: a status row and the page's view in, JSON
 * out. The internal `limited` visibility is shown as `private`. `text` (the source) replaces
 * `content` when the source is asked for (the answer to DELETE, as Mastodon's source_requested).
 */
import type { Account } from '../db/entities/index.ts';
import { serializeAccount, type AccountView, type MastodonAccount } from './account.ts';
import { serializeMediaAttachment, type MastodonMediaAttachment, type MediaAttachmentRow } from './media-attachment.ts';
import { serializePoll, type MastodonPoll, type PollRow } from './poll.ts';
import { serializeCustomEmoji, type CustomEmojiRow, type MastodonCustomEmoji } from './custom-emoji.ts';
import { serializePreviewCard, type MastodonPreviewCard, type PreviewCardRow } from './preview-card.ts';
import type { MastodonFilterResult } from './filter.ts';
import { automaticApproval, quoteDecision } from '../lib/quote-policy.ts';

export interface StatusRow {
  id: string;
  accountId: string;
  uri: string;
  url: string | null;
  text: string;
  content: string;
  spoilerText: string;
  visibility: 'public' | 'unlisted' | 'private' | 'direct' | 'limited';
  sensitive: boolean;
  language: string | null;
  inReplyToId: string | null;
  inReplyToAccountId: string | null;
  reblogOfId: string | null;
  createdAt: Date;
  editedAt: Date | null;
  application: { name: string; website: string | null } | null;
  counts: { replies: number; reblogs: number; favourites: number; quotes?: number };
  /** Its link preview (null: none, or not fetched yet). */
  card: PreviewCardRow | null;
  /** Who may quote it (public, followers, nobody; null: unsaid, nobody). */
  quotePolicy?: string | null;
  /** The viewer follows its author (a followers policy lets them quote). */
  viewerFollows?: boolean;
  /** Its quote of another post (null: none). */
  quote?: StatusQuoteRow | null;
}

/** A status's quote, with what its rendering needs to know of the quoted post for the viewer. */
export interface StatusQuoteRow {
  state: string;
  /** Carried only by the legacy names: not shown unless accepted (Mastodon's Quote#acceptable?). */
  legacy: boolean;
  quotedStatusId: string | null;
  /** The quoted post is deleted, or was never found. */
  gone: boolean;
  /** The viewer may see the quoted post. */
  visible: boolean;
  /** The viewer blocks its author, the author's domain, mutes the author. */
  blocked: boolean;
  domainBlocked: boolean;
  muted: boolean;
}

/** Mastodon's Quote (the status's own) and ShallowQuote (a quoted status's quote). */
export interface MastodonQuote {
  state: string;
  quoted_status: MastodonStatus | null;
}
export interface MastodonShallowQuote {
  state: string;
  quoted_status_id: string | null;
}
export interface MastodonQuoteApproval {
  automatic: string[];
  manual: string[];
  current_user: 'automatic' | 'manual' | 'denied' | 'unknown';
}

export interface StatusMentionRow {
  id: string;
  username: string;
  domain: string | null;
  url: string;
}

export interface ViewerFlags {
  favourited: boolean;
  reblogged: boolean;
  bookmarked: boolean;
  pinned: boolean;
  muted: boolean;
}

export interface StatusView {
  baseUrl: string;
  /** The signed-in viewer's account id (null: nobody): the flags and `application` depend on it. */
  viewerId: string | null;
  accounts: Map<string, Account>;
  accountView: AccountView;
  mentions: Map<string, StatusMentionRow[]>;
  tags: Map<string, string[]>;
  flags: Map<string, ViewerFlags>;
  /** The page's media attachments by status id, each list in its order (none: no media). */
  media?: Map<string, MediaAttachmentRow[]>;
  /** The media storage's public base URL (MediaStorage.baseUrl). */
  mediaBaseUrl?: string;
  /** The page's polls by status id, with the viewer's votes (reads/polls.ts). */
  polls?: Map<string, PollRow>;
  /** When the page is rendered (a poll's `expired`): read by the loader, never here. */
  now?: Date;
  /** Per status id: the custom emojis its text and content warning use; per poll id, its options' (reads/emojis.ts). */
  emojis?: Map<string, CustomEmojiRow[]>;
  /** The viewer's filter results by status id (services/filter-engine.ts), for `filtered`; none: empty. */
  filtered?: Map<string, MastodonFilterResult[]>;
  /** The statuses a `hide` filter of the viewer's removes from the page. */
  hidden?: Set<string>;
}

export interface MastodonStatus {
  id: string;
  uri: string;
  created_at: string;
  account: MastodonAccount;
  content?: string;
  text?: string;
  visibility: 'public' | 'unlisted' | 'private' | 'direct';
  sensitive: boolean;
  spoiler_text: string;
  media_attachments: MastodonMediaAttachment[];
  application?: { name: string; website: string | null };
  mentions: { id: string; username: string; url: string; acct: string }[];
  tags: { name: string; url: string }[];
  emojis: MastodonCustomEmoji[];
  reblogs_count: number;
  favourites_count: number;
  quotes_count: number;
  replies_count: number;
  url: string | null;
  in_reply_to_id: string | null;
  in_reply_to_account_id: string | null;
  reblog: MastodonStatus | null;
  poll: MastodonPoll | null;
  card: MastodonPreviewCard | null;
  language: string | null;
  edited_at: string | null;
  quote: MastodonQuote | MastodonShallowQuote | null;
  quote_approval: MastodonQuoteApproval;
  favourited?: boolean;
  reblogged?: boolean;
  muted?: boolean;
  bookmarked?: boolean;
  pinned?: boolean;
  filtered?: MastodonFilterResult[];
}

export interface SerializeStatusOptions {
  /** Show the source `text` instead of the HTML `content` (DELETE's answer). */
  source?: boolean;
}

function pollOf(status: StatusRow, view: StatusView): MastodonPoll | null {
  const poll = view.polls?.get(status.id);
  return poll && view.now ? serializePoll(poll, view.viewerId, view.now, emojisOf(`poll ${poll.id}`, view)) : null;
}

function emojisOf(key: string, view: StatusView): MastodonCustomEmoji[] {
  return (view.emojis?.get(key) ?? []).map((e) => serializeCustomEmoji(e, view.mediaBaseUrl ?? `${view.baseUrl}/system/`));
}

/** The states in which a quote shows the quoted post (Mastodon's Quote entity). */
const SHOWN_STATES = new Set(['accepted', 'blocked_account', 'blocked_domain', 'muted_account']);

/**
 * A status's `quote` as Mastodon 4.5 renders it: a legacy quote never accepted is none; an
 * accepted one is `deleted` when its post is gone, `unauthorized` when the viewer may not see it,
 * `blocked_account`, `blocked_domain` or `muted_account` by the viewer's relations. The quoted
 * post is a full Status whose own quote is shallow (one level deep).
 */
function quoteOf(status: StatusRow, statuses: ReadonlyMap<string, StatusRow>, view: StatusView, shallow: boolean): MastodonQuote | MastodonShallowQuote | null {
  const q = status.quote;
  if (!q || (q.legacy && q.state !== 'accepted')) return null;
  let state = q.state;
  if (state === 'accepted') {
    if (q.gone) state = 'deleted';
    else if (!q.visible) state = 'unauthorized';
    else if (q.blocked) state = 'blocked_account';
    else if (q.domainBlocked) state = 'blocked_domain';
    else if (q.muted) state = 'muted_account';
  }
  const shown = SHOWN_STATES.has(state) && q.quotedStatusId !== null;
  if (shallow) return { state, quoted_status_id: shown ? q.quotedStatusId : null };
  const quoted = shown ? statuses.get(q.quotedStatusId!) : undefined;
  const json = quoted ? serializeStatus(quoted, statuses, view, {}, true) : null;
  return { state: shown && !json ? 'deleted' : state, quoted_status: json };
}

/** Mastodon's QuoteApproval: the policy's automatic list and how it applies to the viewer (a reblog: nobody). */
function quoteApprovalOf(status: StatusRow, view: StatusView): MastodonQuoteApproval {
  if (status.reblogOfId) return { automatic: [], manual: [], current_user: 'denied' };
  const policy = status.quotePolicy ?? null;
  return {
    automatic: automaticApproval(policy, status.visibility),
    manual: [],
    current_user: quoteDecision({
      policy, visibility: status.visibility, own: view.viewerId === status.accountId, follows: status.viewerFollows ?? false, known: view.viewerId !== null,
    }),
  };
}

/** The status, or null when its author (or its reblogged original) is not in the view. */
export function serializeStatus(status: StatusRow, statuses: ReadonlyMap<string, StatusRow>, view: StatusView, opts: SerializeStatusOptions = {}, shallow = false): MastodonStatus | null {
  const author = view.accounts.get(status.accountId);
  if (!author) return null;
  let reblog: MastodonStatus | null = null;
  if (status.reblogOfId) {
    const original = statuses.get(status.reblogOfId);
    reblog = original ? serializeStatus(original, statuses, view) : null;
    if (!reblog) return null;
  }
  const json: MastodonStatus = {
    id: status.id,
    uri: status.uri,
    created_at: status.createdAt.toISOString(),
    account: serializeAccount(author, view.accountView),
    ...(opts.source ? { text: status.text } : { content: status.content }),
    visibility: status.visibility === 'limited' ? 'private' : status.visibility,
    sensitive: status.sensitive,
    spoiler_text: status.spoilerText,
    media_attachments: (view.media?.get(status.id) ?? []).map((m) => serializeMediaAttachment(m, view.mediaBaseUrl ?? `${view.baseUrl}/system/`)),
    mentions: (view.mentions.get(status.id) ?? []).map((m) => ({
      id: m.id,
      username: m.username,
      url: m.url,
      acct: m.domain ? `${m.username}@${m.domain}` : m.username,
    })),
    tags: (view.tags.get(status.id) ?? []).map((name) => ({ name: name.toLowerCase(), url: `${view.baseUrl}/tags/${encodeURIComponent(name.toLowerCase())}` })),
    emojis: emojisOf(status.id, view),
    reblogs_count: status.counts.reblogs,
    favourites_count: status.counts.favourites,
    quotes_count: status.counts.quotes ?? 0,
    replies_count: status.counts.replies,
    url: status.url,
    in_reply_to_id: status.inReplyToId,
    in_reply_to_account_id: status.inReplyToAccountId,
    reblog,
    poll: pollOf(status, view),
    card: status.card ? serializePreviewCard(status.card) : null,
    language: status.language,
    edited_at: status.editedAt ? status.editedAt.toISOString() : null,
    quote: quoteOf(status, statuses, view, shallow),
    quote_approval: quoteApprovalOf(status, view),
  };
  const own = view.viewerId !== null && view.viewerId === status.accountId;
  // As Mastodon: the application is shown to the author only.
  if (own && status.application) json.application = status.application;
  if (view.viewerId !== null) {
    // A reblog shows the viewer's flags of the status it reblogs (as Mastodon's example answers).
    const f = view.flags.get(status.reblogOfId ?? status.id);
    json.favourited = f?.favourited ?? false;
    json.reblogged = f?.reblogged ?? false;
    json.muted = f?.muted ?? false;
    json.bookmarked = f?.bookmarked ?? false;
    // `pinned` only where the viewer could pin (Mastodon's pinnable?): their own non-reblog, not direct.
    if (own && !status.reblogOfId && status.visibility !== 'direct') json.pinned = f?.pinned ?? false;
    json.filtered = view.filtered?.get(status.id) ?? [];
  }
  return json;
}
