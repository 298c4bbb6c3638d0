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
  counts: { replies: number; reblogs: number; favourites: number };
  /** Its link preview (null: none, or not fetched yet). */
  card: PreviewCardRow | null;
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
  replies_count: number;
  url: string | null;
  in_reply_to_id: string | null;
  in_reply_to_account_id: string | null;
  reblog: MastodonStatus | null;
  poll: MastodonPoll | null;
  card: MastodonPreviewCard | null;
  language: string | null;
  edited_at: string | null;
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

/** The status, or null when its author (or its reblogged original) is not in the view. */
export function serializeStatus(status: StatusRow, statuses: ReadonlyMap<string, StatusRow>, view: StatusView, opts: SerializeStatusOptions = {}): MastodonStatus | null {
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
    replies_count: status.counts.replies,
    url: status.url,
    in_reply_to_id: status.inReplyToId,
    in_reply_to_account_id: status.inReplyToAccountId,
    reblog,
    poll: pollOf(status, view),
    card: status.card ? serializePreviewCard(status.card) : null,
    language: status.language,
    edited_at: status.editedAt ? status.editedAt.toISOString() : null,
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
