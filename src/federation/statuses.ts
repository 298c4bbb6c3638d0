/**
 * Local statuses as ActivityPub sees them: the rows a Note, an Announce or a Like is built from
 * (convert/to-as.ts builders), read in a fixed number of statements for any number of statuses.
 * Used by effects/dispatch.ts (what is sent) and by the object and outbox dispatchers in
 * ./index.ts (what is served), so both carry the same document.
 */
import type { Context } from '@fedify/fedify';
import type { Services } from '../context.ts';
import { visibleSql } from '../services/reads/statuses.ts';
import { mediaStorage } from '../services/media-storage.ts';
import type { AnnounceFacts, NoteFacts } from './convert/to-as.ts';
import { emojiFacts, loadEmojisFor } from '../services/reads/emojis.ts';
import { emojiShortcodes } from '../lib/emoji-shortcodes.ts';
import type { RemoteRecipientRow } from './audience.ts';

/** A status row with what its activities need besides the Note. */
export interface StatusAsRow {
  id: string;
  accountId: string;
  username: string;
  local: boolean;
  deleted: boolean;
  reblogOfId: string | null;
  inReplyToAccountId: string | null;
  /** Its poll (not deleted), if any: the status is a Question. */
  pollId: string | null;
  /** Remote accounts the status mentions (also silent ones): recipients of its activities. */
  mentioned: RemoteRecipientRow[];
  /** Its quote of another post (quotes row), if any. */
  quote: { id: string; state: string; activityUri: string | null; quotedAccountId: string | null; quotedUri: string } | null;
  note: NoteFacts;
}

/** The statuses `ids` (any that exist, deleted ones included) with their Notes (or Questions), media and polls, in five statements. */
export async function loadStatusesAs(services: Services, ctx: Context<unknown>, ids: readonly string[]): Promise<Map<string, StatusAsRow>> {
  const out = new Map<string, StatusAsRow>();
  if (ids.length === 0) return out;
  const sql = services.db.sql;
  const [rows, mentions, tags, media, polls] = await Promise.all([
    sql.query<{
      id: string; account_id: string; uri: string; url: string | null; content: string; spoiler_text: string; visibility: string;
      sensitive: boolean; language: string | null; created_at: string; edited_at: string | null; deleted_at: string | null;
      local: boolean; reblog_of_id: string | null; in_reply_to_account_id: string | null; author_uri: string; username: string; domain: string | null;
      followers_url: string | null; parent_uri: string | null; favourites_count: number; reblogs_count: number;
      conversation_id: string | null; conversation_uri: string | null; conversation_at: string | null; local_thread: boolean;
      quote_policy: string | null; quote_id: string | null; quote_state: string | null; quoted_uri: string | null; quote_approval_uri: string | null;
      quote_activity_uri: string | null; quoted_account_id: string | null;
    }>(
      `select s.id::text, s.account_id::text, s.uri, s.url, s.content, s.spoiler_text, s.visibility, s.sensitive, s.language,
              s.created_at, s.edited_at, s.deleted_at, s.local, s.reblog_of_id::text, s.in_reply_to_account_id::text,
              a.uri as author_uri, a.username, a.domain, a.followers_url, p.uri as parent_uri,
              coalesce(st.favourites_count, 0)::int as favourites_count, coalesce(st.reblogs_count, 0)::int as reblogs_count,
              c.id::text as conversation_id, c.uri as conversation_uri, c.created_at as conversation_at,
              coalesce(s.quote_policy, case when s.local then 'public' end) as quote_policy, q.id::text as quote_id, q.state as quote_state,
              q.quoted_uri, q.approval_uri as quote_approval_uri, q.activity_uri as quote_activity_uri, q.quoted_account_id::text,
              (c.id is not null and exists (select 1 from statuses cr where cr.conversation_id = c.id and cr.local
                                               and cr.in_reply_to_id is null and cr.reblog_of_id is null)) as local_thread
         from statuses s join accounts a on a.id = s.account_id left join statuses p on p.id = s.in_reply_to_id
         left join quotes q on q.status_id = s.id
         left join conversations c on c.id = s.conversation_id
         left join status_stats st on st.status_id = s.id
        where s.id = any($1::bigint[])`,
      [ids],
    ),
    sql.query<RemoteRecipientRow & { status_id: string; username: string; domain: string | null; silent: boolean }>(
      `select m.status_id::text, a.id::text, a.uri, a.username, a.domain, a.inbox_url, a.shared_inbox_url, m.silent
         from mentions m join accounts a on a.id = m.account_id
        where m.status_id = any($1::bigint[]) and a.suspended_at is null order by m.id`,
      [ids],
    ),
    sql.query<{ status_id: string; name: string }>(
      `select st.status_id::text, t.name from statuses_tags st join tags t on t.id = st.tag_id
        where st.status_id = any($1::bigint[]) order by lower(t.name)`,
      [ids],
    ),
    // Attachments in order: each a Document with its type, file, description, size, blurhash and focal point.
    sql.query<{
      status_id: string; file_key: string | null; remote_url: string | null; content_type: string | null; type: string; description: string | null;
      blurhash: string | null; focus_x: number | null; focus_y: number | null; meta: { original?: { width: number; height: number } } | string | null;
    }>(
      `select m.status_id::text, m.file_key, m.remote_url, m.content_type, m.type, m.description, m.blurhash, m.focus_x, m.focus_y, m.meta
         from media_attachments m where m.status_id = any($1::bigint[]) order by m.status_id, m.position, m.id`,
      [ids],
    ),
    // Their polls (not deleted ones): the status is a Question then, with the latest tallies.
    sql.query<{ id: string; status_id: string; options: string[]; multiple: boolean; expires_at: string | null; closed_at: string | null; cached_tallies: number[]; voters_count: number; hide_totals: boolean }>(
      `select id::text, status_id::text, options, multiple, expires_at, closed_at, cached_tallies, voters_count, hide_totals
         from polls where status_id = any($1::bigint[]) and state <> 'deleted'`,
      [ids],
    ),
  ]);
  const filesBase = mediaStorage(services).baseUrl;
  const attachmentsOf = (statusId: string) =>
    media
      .filter((m) => m.status_id === statusId && (m.file_key || m.remote_url))
      .map((m) => {
        const meta = (typeof m.meta === 'string' ? JSON.parse(m.meta) : m.meta) as { original?: { width: number; height: number } } | null;
        return {
          url: m.file_key ? `${filesBase}${m.file_key}` : m.remote_url!,
          mediaType: m.content_type,
          description: m.description,
          width: meta?.original?.width ?? null,
          height: meta?.original?.height ?? null,
          blurhash: m.blurhash,
          focalPoint: m.focus_x === null ? null : ([Number(m.focus_x), Number(m.focus_y)] as const),
        };
      });
  const base = services.config.publicUrl;
  // The local custom emojis local statuses use: one more statement, only when one names any.
  const emojis = await loadEmojisFor(
    services,
    rows.filter((r) => r.local).map((r) => ({ owner: r.id, domain: null, shortcodes: emojiShortcodes(r.spoiler_text, r.content) })),
  );
  for (const r of rows) {
    const mine = mentions.filter((m) => m.status_id === r.id);
    const poll = polls.find((p) => p.status_id === r.id);
    out.set(r.id, {
      id: r.id,
      accountId: r.account_id,
      username: r.username,
      local: r.local,
      deleted: r.deleted_at !== null,
      reblogOfId: r.reblog_of_id,
      inReplyToAccountId: r.in_reply_to_account_id,
      pollId: poll?.id ?? null,
      mentioned: mine.filter((m) => m.domain !== null),
      quote: r.quote_id
        ? { id: r.quote_id, state: r.quote_state!, activityUri: r.quote_activity_uri, quotedAccountId: r.quoted_account_id, quotedUri: r.quoted_uri! }
        : null,
      note: {
        uri: r.uri,
        url: r.url,
        authorUri: r.author_uri,
        followersUri: r.domain === null ? ctx.getFollowersUri(r.username).href : (r.followers_url ?? `${r.author_uri}/followers`),
        visibility: r.visibility,
        content: r.content,
        language: r.language,
        spoilerText: r.spoiler_text,
        sensitive: r.sensitive,
        inReplyToUri: r.parent_uri,
        conversation: conversationUri(services.config.domain, r),
        // A thread rooted here is served as a collection (FEP-7888; federation/collections.ts).
        context: r.local_thread && r.conversation_id ? `${base}/contexts/${r.conversation_id}` : null,
        published: new Date(r.created_at),
        editedAt: r.edited_at ? new Date(r.edited_at) : null,
        // A local status's own counts, as its Note's likes/shares (what peers take as untrusted counts).
        ...(r.local ? { counts: { likes: Number(r.favourites_count), shares: Number(r.reblogs_count) } } : {}),
        mentions: mine.filter((m) => !m.silent).map((m) => ({ uri: m.uri, acct: `${m.username}@${m.domain ?? services.config.domain}` })),
        hashtags: tags
          .filter((t) => t.status_id === r.id)
          .map((t) => ({ name: t.name, href: `${base}/tags/${encodeURIComponent(t.name)}` })),
        attachments: attachmentsOf(r.id),
        poll: poll
          ? {
              // Counts hidden until the end stay hidden from other servers too (Mastodon's show_totals_now?).
              options: poll.options.map((title, i) => ({ title, votes: poll.hide_totals && !poll.closed_at ? null : Number(poll.cached_tallies[i] ?? 0) })),
              multiple: poll.multiple,
              endTime: poll.expires_at ? new Date(poll.expires_at) : null,
              closedAt: poll.closed_at ? new Date(poll.closed_at) : null,
              votersCount: poll.voters_count,
            }
          : null,
        emojis: (emojis.get(r.id) ?? []).map((e) => emojiFacts(services, e)),
        // The quoted post as FEP-044f names it; the stamp once the quote is accepted.
        quote: r.quote_id ? { uri: r.quoted_uri!, authorization: r.quote_state === 'accepted' ? r.quote_approval_uri : null } : null,
        ...(r.local ? { quotePolicy: r.quote_policy } : {}),
      },
    });
  }
  return out;
}

/**
 * A thread's `conversation` as Mastodon names it (NoteSerializer#conversation): the URI its
 * server gave it when it came from elsewhere, else OStatus's tag URI for a local one
 * (`tag:<domain>,<its day>:objectId=<id>:objectType=Conversation`).
 */
function conversationUri(domain: string, r: { conversation_id: string | null; conversation_uri: string | null; conversation_at: string | null }): string | null {
  if (r.conversation_uri) return r.conversation_uri;
  if (!r.conversation_id || !r.conversation_at) return null;
  return `tag:${domain},${new Date(r.conversation_at).toISOString().slice(0, 10)}:objectId=${r.conversation_id}:objectType=Conversation`;
}

export async function loadStatusAs(services: Services, ctx: Context<unknown>, id: string): Promise<StatusAsRow | null> {
  return (await loadStatusesAs(services, ctx, [id])).get(id) ?? null;
}

/** A reblog and its original as an Announce (null when either is gone or the reblog is not one). */
export function announceFacts(reblog: StatusAsRow, original: StatusAsRow): AnnounceFacts {
  return {
    uri: reblog.note.uri,
    id: reblog.id,
    actorUri: reblog.note.authorUri,
    followersUri: reblog.note.followersUri,
    visibility: reblog.note.visibility,
    objectUri: original.note.uri,
    objectAuthorUri: original.note.authorUri,
    published: reblog.note.published,
  };
}

/** Items per page of an outbox (Mastodon's OutboxController LIMIT). */
export const OUTBOX_PAGE_SIZE = 20;

/**
 * One page of a local account's outbox: its public and unlisted statuses and reblogs (of statuses
 * still visible to all), newest first, before the status id `before` (null: the newest).
 */
export async function outboxPage(services: Services, accountId: string, before: string | null): Promise<{ ids: string[]; next: string | null }> {
  const rows = await services.db.sql.query<{ id: string }>(
    `select s.id::text from statuses s
      where s.account_id = $1 and s.deleted_at is null and s.visibility in ('public', 'unlisted')
        and ($2::bigint is null or s.id < $2::bigint)
        and (s.reblog_of_id is null or exists (
              select 1 from statuses o where o.id = s.reblog_of_id and o.deleted_at is null and o.visibility in ('public', 'unlisted')))
      order by s.id desc limit ${OUTBOX_PAGE_SIZE + 1}`,
    [accountId, before],
  );
  const page = rows.slice(0, OUTBOX_PAGE_SIZE).map((r) => r.id);
  return { ids: page, next: rows.length > OUTBOX_PAGE_SIZE ? page[page.length - 1]! : null };
}

/**
 * Whether the remote actor `actorUri` may see the status `statusId` (as visibleSql decides for a
 * signed-in viewer: followers for private statuses, the mentioned for direct and limited ones).
 */
export async function remoteMaySee(services: Services, statusId: string, actorUri: string): Promise<boolean> {
  const rows = await services.db.sql.query(
    `select 1 from statuses s, accounts v where s.id = $1 and v.uri = $2 and v.suspended_at is null and ${visibleSql('s', 'v.id')}`,
    [statusId, actorUri],
  );
  return rows.length > 0;
}
