/**
 * The reads behind a few collections the dispatchers in ./index.ts serve, each in one statement:
 *
 * - featured (Mastodon's /collections/featured): the account's pinned statuses, public and
 *   unlisted ones only, most recently pinned first, as Notes;
 * - a Note's `replies` (a Collection whose first page is embedded in the Note, as Mastodon's),
 *   `likes` and `shares` (Collections with their totalItems only, as Mastodon 4.3 publishes them);
 * - the replies collection's pages: the URIs of the status's public and unlisted replies, oldest
 *   first.
 */
import { Collection, CollectionPage, type Note, type Question } from '@fedify/vocab';
import type { Services } from '../context.ts';

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
 * One page of a status's public and unlisted replies (URIs, oldest first) after the reply id
 * `after` (null: from the first).
 */
export async function repliesPage(services: Services, statusId: string, after: string | null): Promise<{ uris: string[]; next: string | null }> {
  const rows = await services.db.sql.query<{ id: string; uri: string }>(
    `select r.id::text, r.uri from statuses r
      where r.in_reply_to_id = $1 and r.deleted_at is null and r.visibility in ('public', 'unlisted')
        and ($2::bigint is null or r.id > $2::bigint)
      order by r.id limit ${REPLIES_PAGE_SIZE + 1}`,
    [statusId, after],
  );
  const page = rows.slice(0, REPLIES_PAGE_SIZE);
  return { uris: page.map((r) => r.uri), next: rows.length > REPLIES_PAGE_SIZE ? page[page.length - 1]!.id : null };
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
  const [first, counts] = await Promise.all([repliesPage(services, statusId, null), statusCounters(services, statusId)]);
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
