/**
 * Account rows → Mastodon's Account entity (the attributes of Mastodon 4.3, the level Roost
 * reports). Pure: counts, highlighted roles and moved-to accounts come in with the view, loaded
 * once per page. Works for remote accounts (no user) as well as local ones.
 */
import type { Account } from '../db/entities/index.ts';
import { formatFieldValue, formatPlainText, handleKey, type FormatOptions, type MentionTarget } from '../lib/text-format.ts';
import { serializeCustomEmoji, type CustomEmojiRow, type MastodonCustomEmoji } from './custom-emoji.ts';

export interface MastodonField {
  name: string;
  value: string;
  verified_at: string | null;
}

export interface MastodonAccountRole {
  id: string;
  name: string;
  color: string;
}

export interface MastodonAccount {
  id: string;
  username: string;
  acct: string;
  url: string;
  uri: string;
  display_name: string;
  note: string;
  avatar: string;
  avatar_static: string;
  header: string;
  header_static: string;
  locked: boolean;
  fields: MastodonField[];
  emojis: MastodonCustomEmoji[];
  bot: boolean;
  group: boolean;
  discoverable: boolean | null;
  indexable: boolean;
  /** Local accounts only. */
  noindex?: boolean;
  hide_collections: boolean | null;
  /** Only when silenced. */
  limited?: boolean;
  /** Only when the account moved; the moved-to account carries no `moved` of its own. */
  moved?: MastodonAccount | null;
  /** Only when suspended. */
  suspended?: boolean;
  roles: MastodonAccountRole[];
  created_at: string;
  last_status_at: string | null;
  statuses_count: number;
  followers_count: number;
  following_count: number;
}

export interface AccountCounts {
  followers: number;
  following: number;
  statuses: number;
  lastStatusAt: Date | null;
}

export interface AccountView {
  baseUrl: string;
  /** Per account id: follower/following/status counts (0 when absent). */
  counts?: Map<string, AccountCounts>;
  /** Per account id: the highlighted roles shown on the profile (local accounts). */
  roles?: Map<string, MastodonAccountRole[]>;
  /** Moved-to accounts by id, so `moved` can nest one level. */
  accounts?: Map<string, Account>;
  /** The local domain (`user@DOMAIN`); the host of baseUrl when absent. */
  localDomain?: string;
  /** Known accounts mentioned in local bios and fields, by handleKey (services/account-views.ts). */
  mentions?: Map<string, MentionTarget>;
  /** Per account id: the custom emojis its name, bio and fields use (reads/emojis.ts). */
  emojis?: Map<string, CustomEmojiRow[]>;
  /** The media storage's public base URL (local emojis' images). */
  mediaBaseUrl?: string;
}

/** How local profile text is rendered for this view: tags on this server, mentions of known accounts. */
export function profileFormat(view: Pick<AccountView, 'baseUrl' | 'localDomain' | 'mentions'>): FormatOptions {
  return {
    baseUrl: view.baseUrl,
    localDomain: view.localDomain,
    resolveMention: (username, domain) => view.mentions?.get(handleKey(username, domain)),
  };
}

/** Date-only, as Mastodon renders created_at for accounts (midnight UTC). */
function midnight(d: Date): string {
  return `${d.toISOString().slice(0, 10)}T00:00:00.000Z`;
}

/** Local bios are stored as typed and rendered here; remote ones arrive as HTML. */
export function accountNoteHtml(account: Account, view: Pick<AccountView, 'baseUrl' | 'localDomain' | 'mentions'>): string {
  return account.domain === null ? formatPlainText(account.note, profileFormat(view)) : account.note;
}

/** Profile fields as served: local values rendered (links with rel="me"), remote ones as received. */
export function accountFields(account: Account, view: Pick<AccountView, 'baseUrl' | 'localDomain' | 'mentions'>): MastodonField[] {
  const local = account.domain === null;
  const opts = profileFormat(view);
  return account.fields.map((f) => ({ name: f.name, value: local ? formatFieldValue(f.value, opts) : f.value, verified_at: f.verified_at ?? null }));
}

/**
 * `depth` is 0 for the account asked for; its moved-to account is serialized at depth 1 and
 * carries no `moved` (Mastodon cuts the nesting there, whatever that account did next).
 */
export function serializeAccount(account: Account, view: AccountView, depth = 0): MastodonAccount {
  const local = account.domain === null;
  const suspended = !!account.suspendedAt;
  const missingAvatar = `${view.baseUrl}/avatars/original/missing.png`;
  const missingHeader = `${view.baseUrl}/headers/original/missing.png`;
  const avatar = !suspended && account.avatarUrl ? account.avatarUrl : missingAvatar;
  const header = !suspended && account.headerUrl ? account.headerUrl : missingHeader;
  const counts = view.counts?.get(account.id);
  const json: MastodonAccount = {
    id: account.id,
    username: account.username,
    acct: local ? account.username : `${account.username}@${account.domain}`,
    url: account.url ?? account.uri,
    uri: account.uri,
    display_name: suspended ? '' : account.displayName,
    note: suspended ? '' : accountNoteHtml(account, view),
    avatar,
    avatar_static: avatar,
    header,
    header_static: header,
    locked: suspended ? false : account.locked,
    fields: suspended ? [] : accountFields(account, view),
    emojis: suspended ? [] : (view.emojis?.get(account.id) ?? []).map((e) => serializeCustomEmoji(e, view.mediaBaseUrl ?? `${view.baseUrl}/system/`)),
    bot: !suspended && (account.actorType === 'Service' || account.actorType === 'Application'),
    group: account.actorType === 'Group',
    discoverable: suspended ? false : (account.discoverable ?? null),
    indexable: suspended ? false : account.indexable,
    hide_collections: account.hideCollections ?? (local ? false : null),
    roles: suspended ? [] : (view.roles?.get(account.id) ?? []),
    created_at: midnight(account.createdAt),
    last_status_at: counts?.lastStatusAt ? counts.lastStatusAt.toISOString().slice(0, 10) : null,
    statuses_count: counts?.statuses ?? 0,
    followers_count: counts?.followers ?? 0,
    following_count: counts?.following ?? 0,
  };
  // The mission's rule: noindex follows discoverable (no opt-in to discovery → not indexed).
  if (local) json.noindex = !(account.discoverable ?? false);
  if (account.silencedAt) json.limited = true;
  if (suspended) json.suspended = true;
  if (account.movedToAccountId && depth === 0) {
    const moved = suspended ? undefined : view.accounts?.get(account.movedToAccountId);
    json.moved = moved ? serializeAccount(moved, view, depth + 1) : null;
  }
  return json;
}
