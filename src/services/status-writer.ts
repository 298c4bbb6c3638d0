/**
 * The one writer of a status's rows, for local posts (statuses.ts), remote ones
 * (remote-statuses.ts) and the edits of both (status-edits.ts, remote-statuses.ts), in the
 * caller's transaction: the status row, its mentions, hashtags, media links, poll, conversation,
 * card job and counters, and its fact in the outbox (`status.created`, `status.updated`,
 * `status.reblogged`). The callers keep only what differs: a local post's text formatting and
 * Idempotency-Key, a remote one's URIs and counts from its server, an edit's checks, diffing and
 * original version (services/status-versions.ts).
 */
import type { Services } from '../context.ts';
import type { StatusVisibility } from '../db/entities/status.entity.ts';
import type { Sql } from '../db/sql.ts';
import { applyStatusToStats } from './account-stats.ts';
import { recordEvent, type Origin } from './actor-store.ts';
import { joinConversation } from './conversations.ts';
import { attachMedia, persistRemoteMedia, type RemoteMediaItem } from './media.ts';
import { createPoll, type NewPoll } from './polls.ts';
import { schedulePreviewCard } from './preview-cards.ts';
import { recordStatusVersion } from './status-versions.ts';

/** A mentioned account; a silent mention puts it in the audience without naming it. */
export interface MentionRow {
  accountId: string;
  silent: boolean;
}

/** A remote status's counts as its own server states them (status_stats' untrusted columns). */
export interface UntrustedCounts {
  favourites: number | null;
  reblogs: number | null;
}

/** A status to store, local or remote. */
export interface NewStatus {
  id: string;
  accountId: string;
  local: boolean;
  uri: string;
  url: string | null;
  /** The source text: a local status's; '' for a remote one (its server sends only the HTML). */
  text: string;
  content: string;
  spoilerText: string;
  visibility: StatusVisibility;
  sensitive: boolean;
  language: string | null;
  /** The status replied to, a live row (null: none). */
  parent: { id: string; accountId: string } | null;
  /** The OAuth application it was posted with (null: none, or remote). */
  applicationId: string | null;
  createdAt: Date;
  editedAt: Date | null;
  mentions: MentionRow[];
  /** Hashtag names, without '#'. */
  tags: string[];
  /** The author's attachments, checked and locked (media.ts mediaForNewStatus), or a remote Note's. */
  media: { attach: readonly string[] } | { remote: readonly RemoteMediaItem[] };
  poll: Omit<NewPoll, 'statusId' | 'accountId' | 'local'> | null;
  /** What a remote status's server says of its favourites and reblogs. */
  untrusted?: UntrustedCounts;
  /** Who may quote it (public, followers, nobody; null: a remote status whose server said nothing). */
  quotePolicy?: string | null;
  /** The post it quotes (services/quotes.ts decided the state). */
  quote?: NewQuote | null;
}

/** A status's quote of another, as its writer decided it (services/quotes.ts). */
export interface NewQuote {
  /** The status quoted, when known (null: a URI that could not be resolved). */
  quotedStatusId: string | null;
  quotedAccountId: string | null;
  quotedLocal: boolean;
  /** The quoted post's author's URI (a local one names the authorization Roost serves). */
  quotedAuthorUri: string | null;
  quotedUri: string;
  state: 'pending' | 'accepted' | 'rejected';
  /** Only the legacy names carried it (no FEP-044f `quote`): not shown unless accepted, as Mastodon. */
  legacy: boolean;
  /** The authorization's URI (ours for a local quoted post; the remote stamp otherwise). */
  approvalUri: string | null;
}

export interface InsertStatusOptions {
  origin: Origin;
  /** Runs once the rows are written, before the fact (a scheduled status steps its actor there). */
  beforeFact?: (statusId: string) => Promise<void>;
}

/**
 * Stores a new status with everything it carries and records `status.created`. A uri already
 * taken (a remote status known already) writes nothing: false.
 */
export async function insertStatus(services: Services, sql: Sql, s: NewStatus, now: Date, opts: InsertStatusOptions): Promise<boolean> {
  const inserted = await sql.query(
    `insert into statuses (id, account_id, uri, url, text, content, spoiler_text, visibility, sensitive, language, local,
                           in_reply_to_id, in_reply_to_account_id, application_id, created_at, updated_at, edited_at, quote_policy)
     values ($1, $2, $3, $4, $5, $6, $7, $8,
             -- A moderator forced the author's media sensitive (accounts.sensitized_at): every new status is.
             $9::boolean or exists (select 1 from accounts where id = $2 and sensitized_at is not null),
             $10, $11, $12, $13, $14, $15, $16, $17, $18)
     on conflict (uri) do nothing returning id`,
    [
      s.id, s.accountId, s.uri, s.url, s.text, s.content, s.spoilerText, s.visibility, s.sensitive, s.language, s.local,
      s.parent?.id ?? null, s.parent?.accountId ?? null, s.applicationId, s.createdAt, now, s.editedAt, s.quotePolicy ?? null,
    ],
  );
  if (inserted.length === 0) return false;
  await upsertMentions(services, sql, s.id, s.mentions, now);
  await insertTags(services, sql, s.id, s.tags, now);
  if ('attach' in s.media) await attachMedia(sql, s.id, s.media.attach, now);
  // Stored as remote attachments (shown at their URL; nothing fetched), checked on the way in.
  else await persistRemoteMedia(sql, services, s.id, s.accountId, s.media.remote);
  await applyStatusToStats(sql, s.accountId, 1, s.createdAt);
  if (s.parent) await bumpStatusStats(sql, s.parent.id, 'replies_count', 1);
  if (s.untrusted) await setUntrustedStatusCounts(sql, s.id, s.untrusted);
  const pollId = s.poll ? await createPoll(services, sql, { ...s.poll, statusId: s.id, accountId: s.accountId, local: s.local }, opts.origin) : null;
  // Its thread (a direct one is then kept in conversations: effects/conversations.ts).
  await joinConversation(services, sql, s.id, s.parent?.id ?? null, now);
  await scheduleCard(services, sql, s.id, s);
  await opts.beforeFact?.(s.id);
  await recordEvent(services, sql, {
    actorKind: 'status',
    actorId: s.id,
    origin: opts.origin,
    event: {
      type: 'status.created', statusId: s.id, accountId: s.accountId, local: s.local, visibility: s.visibility, inReplyToId: s.parent?.id ?? null,
      ...(pollId ? { pollId } : {}),
      // Whether it names hashtags: the trends consumer skips a status that names none.
      tagged: s.tags.length > 0,
    },
  });
  if (s.quote) await insertQuote(services, sql, { statusId: s.id, accountId: s.accountId, local: s.local }, s.quote, now, opts.origin);
  return true;
}

/** The URI of the QuoteAuthorization a local author gives a quote (Mastodon's approval_uri_for). */
export function localApprovalUri(quotedAuthorUri: string, quoteId: string): string {
  return `${quotedAuthorUri}/quote_authorizations/${quoteId}`;
}

/** The id of the QuoteRequest a local quote sends. */
export function quoteRequestUri(publicUrl: string, quoteId: string): string {
  return `${publicUrl}/quote_requests/${quoteId}`;
}

/**
 * The quotes row of a new status (after its status.created, so effects see the status first); an
 * accepted one counts on the quoted post and records `quote.accepted`.
 */
async function insertQuote(services: Services, sql: Sql, s: { statusId: string; accountId: string; local: boolean }, q: NewQuote, now: Date, origin: Origin): Promise<void> {
  const quoteId = services.ids.next();
  // Roost's own stamp for a quote of a local post it accepts (served by federation/index.ts).
  const approvalUri = q.approvalUri ?? (q.state === 'accepted' && q.quotedLocal && q.quotedAuthorUri ? localApprovalUri(q.quotedAuthorUri, quoteId) : null);
  // A local quote of a remote post asks its author: the QuoteRequest's id (effects/federate.ts sends it).
  const activityUri = s.local && !q.quotedLocal && q.state === 'pending' ? quoteRequestUri(services.config.publicUrl, quoteId) : null;
  await sql.query(
    `insert into quotes (id, status_id, account_id, quoted_status_id, quoted_account_id, quoted_uri, state, legacy, approval_uri, activity_uri, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
    [quoteId, s.statusId, s.accountId, q.quotedStatusId, q.quotedAccountId, q.quotedUri, q.state, q.legacy, approvalUri, activityUri, now],
  );
  if (q.state !== 'accepted' || !q.quotedStatusId || !q.quotedAccountId) return;
  await bumpStatusStats(sql, q.quotedStatusId, 'quotes_count', 1);
  await recordEvent(services, sql, {
    actorKind: 'status',
    actorId: s.statusId,
    origin,
    event: {
      type: 'quote.accepted', quoteId, statusId: s.statusId, accountId: s.accountId, quotedStatusId: q.quotedStatusId,
      quotedAccountId: q.quotedAccountId, local: s.local, quotedLocal: q.quotedLocal,
    },
  });
}

/** A reblog to store, local or remote (one per account and status: the caller has looked). */
export interface NewReblog {
  id: string;
  accountId: string;
  local: boolean;
  uri: string;
  visibility: StatusVisibility;
  /** The status reblogged and its author. */
  reblogOf: { id: string; accountId: string };
  applicationId: string | null;
  createdAt: Date;
}

/** Stores a reblog with its counters and records `status.reblogged`. */
export async function insertReblog(services: Services, sql: Sql, r: NewReblog, now: Date, origin: Origin): Promise<void> {
  await sql.query(
    `insert into statuses (id, account_id, uri, url, visibility, local, reblog_of_id, application_id, created_at, updated_at)
     values ($1, $2, $3, null, $4, $5, $6, $7, $8, $9)`,
    [r.id, r.accountId, r.uri, r.visibility, r.local, r.reblogOf.id, r.applicationId, r.createdAt, now],
  );
  await applyStatusToStats(sql, r.accountId, 1, r.createdAt);
  await bumpStatusStats(sql, r.reblogOf.id, 'reblogs_count', 1);
  await recordEvent(services, sql, {
    actorKind: 'status',
    actorId: r.id,
    origin,
    event: { type: 'status.reblogged', statusId: r.id, reblogOfId: r.reblogOf.id, accountId: r.accountId, visibility: r.visibility, statusAccountId: r.reblogOf.accountId },
  });
}

/** A status's new version, local or remote, as its edit decided it. */
export interface StatusRewrite {
  id: string;
  accountId: string;
  local: boolean;
  /** The status's visibility (named in a local edit's fact). */
  visibility: StatusVisibility;
  /** The new source text; null keeps it (a remote status has none). */
  text: string | null;
  content: string;
  spoilerText: string;
  sensitive: boolean;
  language: string | null;
  editedAt: Date;
  /**
   * The version's mentions. One the version drops stays silent on a local status (the account
   * keeps its access and is not notified again, as Mastodon's ProcessMentionsService) and goes on
   * a remote one (its Note states them all).
   */
  mentions: MentionRow[];
  tags: string[];
  /** Whether the text changed: the status's card is dropped and looked for again. */
  textChanged: boolean;
}

/**
 * Writes a status's new version over its row (text, spoiler, sensitivity, language, edited_at),
 * stores that version (status_edits), replaces its mentions and hashtags, looks for its card again
 * when the text changed, and records `status.updated` (a local edit's names the accounts it
 * mentions anew: new recipients). The caller has stored the original version and applied the
 * media and poll changes.
 */
export async function rewriteStatus(services: Services, sql: Sql, e: StatusRewrite, now: Date, origin: Origin): Promise<void> {
  await sql.query(
    `update statuses set text = coalesce($2, text), content = $3, spoiler_text = $4, sensitive = $5, language = $6, edited_at = $7, updated_at = $8
      where id = $1`,
    [e.id, e.text, e.content, e.spoilerText, e.sensitive, e.language, e.editedAt, now],
  );
  await recordStatusVersion(services, sql, e.id, e.accountId, e.editedAt);
  const kept = [...new Set(e.mentions.map((m) => m.accountId))];
  await sql.query(
    e.local
      ? `update mentions set silent = true where status_id = $1 and not silent and not (account_id = any($2::bigint[]))`
      : `delete from mentions where status_id = $1 and not (account_id = any($2::bigint[]))`,
    [e.id, kept],
  );
  const added = await upsertMentions(services, sql, e.id, e.mentions, now);
  await sql.query(
    `delete from statuses_tags st using tags t where st.status_id = $1 and t.id = st.tag_id and not (lower(t.name) = any($2::text[]))`,
    [e.id, distinctTags(e.tags).map((t) => t.toLowerCase())],
  );
  await insertTags(services, sql, e.id, e.tags, now);
  if (e.textChanged) {
    await sql.query(`delete from preview_cards_statuses where status_id = $1`, [e.id]);
    await scheduleCard(services, sql, e.id, { local: e.local, text: e.text ?? '', content: e.content });
  }
  await recordEvent(services, sql, {
    actorKind: 'status',
    actorId: e.id,
    origin,
    event: {
      type: 'status.updated', statusId: e.id, accountId: e.accountId, local: e.local,
      // Accounts mentioned by this version and not before (or only silently): new recipients.
      ...(e.local ? { visibility: e.visibility, editedAt: e.editedAt.toISOString(), addedMentionAccountIds: added } : {}),
    },
  });
}

/**
 * Writes the mentions (each account once; a silent one made loud, or the reverse, as stated).
 * Returns the accounts newly mentioned or no longer silently.
 */
async function upsertMentions(services: Services, sql: Sql, statusId: string, mentions: readonly MentionRow[], now: Date): Promise<string[]> {
  const unique = [...new Map(mentions.map((m) => [m.accountId, m])).values()];
  if (unique.length === 0) return [];
  const rows = await sql.query<{ account_id: string }>(
    `insert into mentions (id, status_id, account_id, silent, created_at)
     select x.id, $1, x.account_id, x.silent, $2 from unnest($3::bigint[], $4::bigint[], $5::boolean[]) as x(id, account_id, silent)
     on conflict (status_id, account_id) do update set silent = excluded.silent where mentions.silent <> excluded.silent
     returning account_id::text`,
    [statusId, now, unique.map(() => services.ids.next()), unique.map((m) => m.accountId), unique.map((m) => m.silent)],
  );
  const silent = new Set(unique.filter((m) => m.silent).map((m) => m.accountId));
  return rows.map((r) => r.account_id).filter((id) => !silent.has(id));
}

/** Each name once whatever its case (named twice: its last spelling). */
function distinctTags(tags: readonly string[]): string[] {
  return [...new Map(tags.map((t) => [t.toLowerCase(), t])).values()];
}

/** The hashtags of the status (a tag row created as first written when there is none). */
async function insertTags(services: Services, sql: Sql, statusId: string, tags: readonly string[], now: Date): Promise<void> {
  const names = distinctTags(tags);
  if (names.length === 0) return;
  await sql.query(
    `insert into tags (id, name, created_at) select x.id, x.name, $1 from unnest($2::bigint[], $3::text[]) as x(id, name)
     on conflict (lower(name)) do nothing`,
    [now, names.map(() => services.ids.next()), names],
  );
  await sql.query(
    `insert into statuses_tags (status_id, tag_id) select $1, t.id from tags t where lower(t.name) = any($2::text[]) on conflict do nothing`,
    [statusId, names.map((t) => t.toLowerCase())],
  );
}

/** A card job for the status's first link that is not a mention or a hashtag (queued only when there is one): a local status's text, a remote one's HTML. */
async function scheduleCard(services: Services, sql: Sql, statusId: string, s: { local: boolean; text: string; content: string }): Promise<void> {
  await schedulePreviewCard(services, sql, statusId, s.local ? { text: s.text } : { html: s.content });
}

export async function bumpStatusStats(sql: Sql, statusId: string, column: 'replies_count' | 'reblogs_count' | 'favourites_count' | 'quotes_count', delta: 1 | -1): Promise<void> {
  // A remote status's untrusted count (its server's figure) moves with ours, as Mastodon's increment_count!.
  const untrusted = column === 'replies_count' || column === 'quotes_count' ? null : `untrusted_${column}`;
  await sql.query(
    `insert into status_stats as s (status_id, ${column}) values ($1, greatest($2::int, 0))
     on conflict (status_id) do update set ${column} = greatest(0, s.${column} + $2::int)${
       untrusted ? `, ${untrusted} = case when s.${untrusted} is null then null else greatest(0, s.${untrusted} + $2::int) end` : ''
     }`,
    [statusId, delta],
  );
}

/**
 * Sets a remote status's untrusted counts (what its Note's likes/shares say, already clamped);
 * a null leaves that count as it was. Nothing is written when both are null.
 */
export async function setUntrustedStatusCounts(sql: Sql, statusId: string, counts: UntrustedCounts): Promise<void> {
  if (counts.favourites === null && counts.reblogs === null) return;
  await sql.query(
    `insert into status_stats as s (status_id, untrusted_favourites_count, untrusted_reblogs_count) values ($1, $2::int, $3::int)
     on conflict (status_id) do update set untrusted_favourites_count = coalesce($2::int, s.untrusted_favourites_count),
                                           untrusted_reblogs_count = coalesce($3::int, s.untrusted_reblogs_count)`,
    [statusId, counts.favourites, counts.reblogs],
  );
}

/**
 * Removes one status (soft: deleted_at) with its counters; a reblog's original loses one reblog.
 * Its replies keep their in_reply_to_account_id and lose their in_reply_to_id.
 */
export async function discardStatus(sql: Sql, s: { id: string; accountId: string; createdAt: Date; inReplyToId: string | null; reblogOfId: string | null }, now: Date): Promise<void> {
  await sql.query(`update statuses set deleted_at = $2, updated_at = $2 where id = $1`, [s.id, now]);
  // Its replies stay, replying to nothing (Mastodon's in_reply_to_id foreign key nullifies them).
  if (!s.reblogOfId) await sql.query(`update statuses set in_reply_to_id = null where in_reply_to_id = $1`, [s.id]);
  await sql.query(`delete from status_pins where status_id = $1`, [s.id]);
  await applyStatusToStats(sql, s.accountId, -1, s.createdAt);
  if (s.inReplyToId) await bumpStatusStats(sql, s.inReplyToId, 'replies_count', -1);
  if (s.reblogOfId) await bumpStatusStats(sql, s.reblogOfId, 'reblogs_count', -1);
  // An accepted quote no longer counts on the post it quoted.
  else await sql.query(
    `update status_stats set quotes_count = greatest(0, quotes_count - 1)
      where status_id = (select quoted_status_id from quotes where status_id = $1 and state = 'accepted')`,
    [s.id],
  );
}
