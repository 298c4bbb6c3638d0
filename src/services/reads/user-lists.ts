/**
 * Read modules for Mastodon's lists (a user's named groups of followed accounts): the lists, their
 * members (paged by account id as Mastodon's Api::V1::Lists::AccountsController, or all at once),
 * the viewer's lists holding an account, and the list timeline. Not to be confused with
 * reads/lists.ts, the account lists (followers, blocks, mutes…).
 *
 * The list timeline is fan-out on write, as home is: effects/home-feeds.ts pushes the members'
 * statuses into `list_feeds` after commit, and a page is one walk down (list_id, status_id desc)
 * with every rule checked on the rows it meets: home's (reads/timelines.ts homeFilterSql: blocks,
 * mutes, domain blocks, reblog settings, visibility, replies to accounts not followed), the list's
 * `replies_policy`, and the membership itself (a member removed, or whose follow ended, drops out
 * at once). One statement per page whatever its size.
 */
import type { Services } from '../../context.ts';
import type { ListRow, RepliesPolicy } from '../../serializers/list.ts';
import { isId, newestFirst, pageSql, type PageParams } from './page.ts';
import { authorShownSql, homeFilterSql, type TimelinePage } from './timelines.ts';

const LIST_COLUMNS = `l.id::text as id, l.title, l.replies_policy, l.exclusive`;

interface ListSqlRow {
  id: string;
  title: string;
  replies_policy: RepliesPolicy;
  exclusive: boolean;
}

export const listRow = (r: ListSqlRow): ListRow => ({ id: r.id, title: r.title, repliesPolicy: r.replies_policy, exclusive: r.exclusive });

/** The lists `ownerId` owns, oldest first (as Mastodon lists them). */
export async function listsOf(services: Services, ownerId: string): Promise<ListRow[]> {
  const rows = await services.db.sql.query<ListSqlRow>(`select ${LIST_COLUMNS} from lists l where l.account_id = $1 order by l.id`, [ownerId]);
  return rows.map(listRow);
}

/** The list `listId` if `ownerId` owns it (another's list, like a missing one, is null: a 404). */
export async function listOf(services: Services, ownerId: string, listId: string): Promise<ListRow | null> {
  if (!isId(listId)) return null;
  const [row] = await services.db.sql.query<ListSqlRow>(`select ${LIST_COLUMNS} from lists l where l.id = $1 and l.account_id = $2`, [listId, ownerId]);
  return row ? listRow(row) : null;
}

/**
 * `ownerId`'s lists that hold `accountId`, oldest first (GET /api/v1/accounts/:id/lists); null
 * when no account has that id, none for a suspended one (as Mastodon).
 */
export async function listsContaining(services: Services, ownerId: string, accountId: string): Promise<ListRow[] | null> {
  if (!isId(accountId)) return null;
  const rows = await services.db.sql.query<ListSqlRow & { suspended: boolean }>(
    `select a.suspended_at is not null as suspended, ${LIST_COLUMNS} from accounts a
       left join lists l on l.account_id = $1 and exists (select 1 from list_accounts la where la.list_id = l.id and la.account_id = a.id)
      where a.id = $2
      order by l.id`,
    [ownerId, accountId],
  );
  if (rows.length === 0) return null;
  if (rows[0].suspended) return [];
  return rows.filter((r) => r.id !== null).map(listRow);
}

/**
 * A page of a list's members, suspended accounts left out, by account id newest first (Mastodon
 * pages list members by account id); `p` null: all of them (`limit=0`).
 */
export async function listMembersPage(services: Services, listId: string, p: PageParams | null): Promise<string[]> {
  const page = p ? pageSql('a.id', p, 2) : { where: '', order: 'a.id desc', params: [] };
  const rows = await services.db.sql.query<{ id: string }>(
    `select a.id::text as id from list_accounts la join accounts a on a.id = la.account_id
      where la.list_id = $1 and a.suspended_at is null${page.where} order by ${page.order}${p ? ` limit ${p.limit}` : ''}`,
    [listId, ...page.params],
  );
  return (p ? newestFirst(rows, p) : rows).map((r) => r.id);
}

/**
 * SQL: the list `l`'s replies_policy lets the status `s` through (Mastodon's
 * FeedManager#filter_from_list?): not a reply to another account, or a reply to the list's owner,
 * or (`followed`) to anyone the owner follows (home's rule, checked beside it), or (`list`) to a
 * member of the list. `none` shows replies to the owner only.
 */
export function repliesPolicySql(s: string, l: string): string {
  return `(${s}.in_reply_to_id is null or ${s}.in_reply_to_account_id = ${s}.account_id or ${s}.in_reply_to_account_id = ${l}.account_id
    or ${l}.replies_policy = 'followed'
    or (${l}.replies_policy = 'list' and exists (select 1 from list_accounts rl where rl.list_id = ${l}.id and rl.account_id = ${s}.in_reply_to_account_id)))`;
}

/**
 * A page of the list timeline of `list` (owned by `ownerId`): statuses of its members pushed into
 * the list's feed, each passing home's rules as the owner sees them (followed members) or being the
 * owner's own (an owner may put itself in its list, as Mastodon allows), and the replies policy.
 */
export async function listTimelinePage(services: Services, ownerId: string, listId: string, p: PageParams): Promise<TimelinePage> {
  const page = pageSql('lf.status_id', p, 4);
  const rows = await services.db.sql.query<{ id: string }>(
    `select lf.status_id::text as id from list_feeds lf
       join lists l on l.id = lf.list_id
       join statuses s on s.id = lf.status_id
       join list_accounts la on la.list_id = lf.list_id and la.account_id = s.account_id
       left join follows f on f.account_id = $1 and f.target_account_id = s.account_id and f.state = 'accepted'
       left join statuses o on o.id = s.reblog_of_id
      where lf.list_id = $2 and l.account_id = $1${page.where}
        and ${repliesPolicySql('s', 'l')}
        and ((f.id is not null and ${homeFilterSql('s', 'o', 'f', '$1::bigint', '$3::timestamptz')})
          or (s.account_id = $1 and s.deleted_at is null
            and (s.reblog_of_id is null or (o.deleted_at is null and ${authorShownSql('o.account_id', '$1::bigint', '$3::timestamptz')}))))
      order by ${page.order} limit ${p.limit}`,
    [ownerId, listId, services.clock.now(), ...page.params],
  );
  return { statusIds: newestFirst(rows, p).map((r) => r.id) };
}
