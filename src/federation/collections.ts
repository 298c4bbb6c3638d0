/**
 * The reads behind a few collections the dispatchers in ./index.ts serve, each in one statement:
 *
 * - featured (Mastodon's /collections/featured): the account's pinned statuses, public and
 *   unlisted ones only, most recently pinned first, as Notes;
 * - a Note's `replies` (a Collection whose first page is embedded in the Note, as Mastodon's),
 *   `likes` and `shares` (Collections with their totalItems only, as Mastodon 4.3 publishes them);
 * - the replies collection's pages: the URIs of the status's public and unlisted replies, oldest
 *   first, with their count (totalItems: what a peer measures a thread's completeness by);
 * - a local thread's context collection (FEP-7888, Mastodon 4.5's /contexts): the URIs of the
 *   thread's statuses anybody may see, oldest first.
 */
import { Collection, CollectionPage, type Note, type Question } from '@fedify/vocab';
import type { Services } from '../context.ts';
import { visibleSql } from '../services/reads/statuses.ts';
import { accountDomainBlockedBySql } from '../db/audience.ts';

/** Items on a replies page (and on the first page embedded in a Note). */
export const REPLIES_PAGE_SIZE = 20;
/** The cursor of a replies collection's first page; later ones are the last reply's id. */
export const FIRST_REPLIES_PAGE = 'first';

/** The ids of the statuses `accountId` pinned that everybody may see, most recently pinned first. */
export async function featuredStatusIds(services: Services, accountId: string, limit: number): Promise<string[]> {
  const rows = await services.db.sql.query<{ id: string }>(
    `select s.id::text from status_pins sp join statuses s on s.id = sp.status_id
      where sp.account_id = $1 and s.account_id = $1 and s.deleted_at is null and s.reblog_of_id is null
        and s.visibility in ('public', 'unlisted')
      order by sp.id desc limit ${Math.max(0, Math.floor(limit))}`,
    [accountId],
  );
  return rows.map((r) => r.id);
}

/**
 * The replies of a status a requester may be shown: public and unlisted ones, not deleted, by
 * accounts not suspended; for a known remote requester (authorized fetch), also not by accounts
 * that block it or its domain. SQL on the reply row `r`, `$requester` the requester's account id.
 */
function servedReplySql(requester: string): string {
  return `r.deleted_at is null and r.visibility in ('public', 'unlisted')
        and ${visibleSql('r', requester)}
        and (${requester} is null or not ${accountDomainBlockedBySql('r.account_id', requester)})`;
}

/**
 * One page of a status's replies (URIs, oldest first) after the reply id `after` (null: from the
 * first), as `requesterId` (a remote account signing the fetch, or null) may be shown them.
 */
export async function repliesPage(
  services: Services,
  statusId: string,
  after: string | null,
  requesterId: string | null = null,
): Promise<{ uris: string[]; next: string | null }> {
  const rows = await services.db.sql.query<{ id: string; uri: string }>(
    `select r.id::text, r.uri from statuses r
      where r.in_reply_to_id = $1 and ${servedReplySql('$3::bigint')}
        and ($2::bigint is null or r.id > $2::bigint)
      order by r.id limit ${REPLIES_PAGE_SIZE + 1}`,
    [statusId, after, requesterId],
  );
  const page = rows.slice(0, REPLIES_PAGE_SIZE);
  return { uris: page.map((r) => r.uri), next: rows.length > REPLIES_PAGE_SIZE ? page[page.length - 1]!.id : null };
}

/** How many replies anybody may be shown (the replies collection's totalItems, what peers count a thread's completeness by). */
export async function repliesCount(services: Services, statusId: string): Promise<number> {
  const [row] = await services.db.sql.query<{ n: number }>(
    `select count(*)::int as n from statuses r where r.in_reply_to_id = $1 and ${servedReplySql('null::bigint')}`,
    [statusId],
  );
  return Number(row?.n ?? 0);
}

/** Items on a page of a thread's context collection (Mastodon's ContextsController DESCENDANTS_LIMIT). */
export const CONTEXT_PAGE_SIZE = 60;

/**
 * The conversation `conversationId` when it is a thread rooted here (a local status that replies
 * to nothing is in it): only those have a context collection (FEP-7888), as on Mastodon.
 */
export async function localThread(services: Services, conversationId: string): Promise<boolean> {
  if (!/^\d{1,19}$/.test(conversationId)) return false;
  const rows = await services.db.sql.query(
    `select 1 from statuses s where s.conversation_id = $1 and s.local and s.in_reply_to_id is null and s.reblog_of_id is null limit 1`,
    [conversationId],
  );
  return rows.length > 0;
}

/** One page of a thread's statuses (URIs, oldest first) after the status id `after`, as `requesterId` may be shown them (repliesPage). */
export async function contextPage(
  services: Services,
  conversationId: string,
  after: string | null,
  requesterId: string | null = null,
): Promise<{ uris: string[]; next: string | null }> {
  const rows = await services.db.sql.query<{ id: string; uri: string }>(
    `select r.id::text, r.uri from statuses r
      where r.conversation_id = $1 and r.reblog_of_id is null and ${servedReplySql('$3::bigint')}
        and ($2::bigint is null or r.id > $2::bigint)
      order by r.id limit ${CONTEXT_PAGE_SIZE + 1}`,
    [conversationId, after, requesterId],
  );
  const page = rows.slice(0, CONTEXT_PAGE_SIZE);
  return { uris: page.map((r) => r.uri), next: rows.length > CONTEXT_PAGE_SIZE ? page[page.length - 1]!.id : null };
}

/** How many statuses of the thread anybody may see (its context collection's totalItems). */
export async function contextCount(services: Services, conversationId: string): Promise<number> {
  const [row] = await services.db.sql.query<{ n: number }>(
    `select count(*)::int as n from statuses r where r.conversation_id = $1 and r.reblog_of_id is null and ${servedReplySql('null::bigint')}`,
    [conversationId],
  );
  return Number(row?.n ?? 0);
}

/** The counters a Note carries: favourites (likes) and reblogs (shares). */
export async function statusCounters(services: Services, statusId: string): Promise<{ likes: number; shares: number }> {
  const [row] = await services.db.sql.query<{ likes: number; shares: number }>(
    `select coalesce(favourites_count, 0)::int as likes, coalesce(reblogs_count, 0)::int as shares from status_stats where status_id = $1`,
    [statusId],
  );
  return { likes: row?.likes ?? 0, shares: row?.shares ?? 0 };
}

/**
 * `note` with `replies` (its first page embedded, `next` to the rest), `likes` and `shares`
 * (totalItems), as Mastodon's NoteSerializer: what the object dispatcher serves.
 */
export async function withNoteCollections<T extends Note | Question>(services: Services, note: T, statusId: string): Promise<T> {
  const [first, total, counts] = await Promise.all([repliesPage(services, statusId, null), repliesCount(services, statusId), statusCounters(services, statusId)]);
  const base = note.id!.href;
  const repliesId = new URL(`${base}/replies`);
  const pageUrl = (cursor: string) => {
    const u = new URL(repliesId);
    u.searchParams.set('cursor', cursor);
    return u;
  };
  return (note as unknown as Note).clone({
    replies: new Collection({
      id: repliesId,
      totalItems: total,
      first: new CollectionPage({
        id: pageUrl(FIRST_REPLIES_PAGE),
        partOf: repliesId,
        items: first.uris.map((u) => new URL(u)),
        next: first.next ? pageUrl(first.next) : null,
      }),
    }),
    likes: new Collection({ id: new URL(`${base}/likes`), totalItems: counts.likes }),
    shares: new Collection({ id: new URL(`${base}/shares`), totalItems: counts.shares }),
  }) as unknown as T;
}
