/**
 * Lists (Mastodon's methods/lists.md): a user's named groups of accounts it follows, each with a
 * timeline. One use case, one transaction; a refusal writes nothing.
 *
 *  - createList / updateList / deleteList: `title` (required, not blank), `replies_policy`
 *    (followed / list / none, default list), `exclusive`; at most LISTS_PER_ACCOUNT lists.
 *  - addListAccounts: every id must name an account (else 404 "Record not found", as
 *    Account.find), followed by the owner or asked to follow (a pending request counts, as in
 *    Mastodon 4.3's ListAccount), or the owner itself; else 422 "Validation failed: Account must be
 *    a followed account". Already a member: 422 "Validation failed: Account has already been
 *    taken". The new members' latest statuses are merged into the list's feed (Mastodon's
 *    MergeWorker for lists), in the same transaction.
 *  - removeListAccounts: ids not in the list are no error.
 *  - dropFromLists: a follow that ends (unfollow, rejection, removal, block) takes the account
 *    out of the follower's lists; services/follows.ts calls it where it projects the follow.
 */
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import { RoostError, notFound } from '../lib/errors.ts';
import type { ListRow, RepliesPolicy } from '../serializers/list.ts';
import { isId } from './reads/page.ts';
import { listRow } from './reads/user-lists.ts';

/** Mastodon's List::MAX_PER_ACCOUNT. */
export const LISTS_PER_ACCOUNT = 50;
/** How many of a new member's latest statuses go into the list's feed (home merges as many). */
export const MERGE_ON_ADD = 200;

const REPLIES_POLICIES: readonly RepliesPolicy[] = ['followed', 'list', 'none'];

export interface ListInput {
  title?: string;
  repliesPolicy?: string;
  exclusive?: boolean;
}

const invalid = (message: string) => new RoostError(422, `Validation failed: ${message}`);

/** The title and policy as given, or Mastodon's 422 (an unknown policy is an ArgumentError there). */
function validated(input: ListInput, creating: boolean): { title?: string; repliesPolicy?: RepliesPolicy } {
  let repliesPolicy: RepliesPolicy | undefined;
  if (input.repliesPolicy !== undefined && input.repliesPolicy !== '') {
    if (!(REPLIES_POLICIES as readonly string[]).includes(input.repliesPolicy)) {
      throw new RoostError(422, `'${input.repliesPolicy}' is not a valid replies_policy`);
    }
    repliesPolicy = input.repliesPolicy as RepliesPolicy;
  }
  if ((creating || input.title !== undefined) && (input.title ?? '').trim() === '') throw invalid("Title can't be blank");
  return { title: input.title, repliesPolicy };
}

const RETURNING = `returning id::text as id, title, replies_policy, exclusive`;

export async function createList(services: Services, ownerId: string, input: ListInput): Promise<ListRow> {
  const v = validated(input, true);
  return services.db.sql.transaction(async (sql) => {
    // The owner's row is the lock that keeps two creations from both passing the limit.
    await sql.query(`select 1 from accounts where id = $1 for update`, [ownerId]);
    const [{ n }] = await sql.query<{ n: number }>(`select count(*)::int as n from lists where account_id = $1`, [ownerId]);
    if (n >= LISTS_PER_ACCOUNT) throw invalid('You have reached the maximum number of lists');
    const now = services.clock.now();
    const [row] = await sql.query<Parameters<typeof listRow>[0]>(
      `insert into lists (id, account_id, title, replies_policy, exclusive, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $6) ${RETURNING}`,
      [services.ids.next(), ownerId, v.title, v.repliesPolicy ?? 'list', input.exclusive ?? false, now],
    );
    return listRow(row);
  });
}

/** Changes what is given; another's list, like a missing one, is a 404. */
export async function updateList(services: Services, ownerId: string, listId: string, input: ListInput): Promise<ListRow> {
  if (!isId(listId)) throw notFound();
  const v = validated(input, false);
  const [row] = await services.db.sql.query<Parameters<typeof listRow>[0]>(
    `update lists set title = coalesce($3, title), replies_policy = coalesce($4, replies_policy),
            exclusive = coalesce($5, exclusive), updated_at = $6
      where id = $1 and account_id = $2 ${RETURNING}`,
    [listId, ownerId, v.title ?? null, v.repliesPolicy ?? null, input.exclusive ?? null, services.clock.now()],
  );
  if (!row) throw notFound();
  return listRow(row);
}

export async function deleteList(services: Services, ownerId: string, listId: string): Promise<void> {
  if (!isId(listId)) throw notFound();
  const rows = await services.db.sql.query(`delete from lists where id = $1 and account_id = $2 returning 1`, [listId, ownerId]);
  if (rows.length === 0) throw notFound();
}

/** The owner's list, locked for the change, or a 404. */
async function lockedList(sql: Sql, ownerId: string, listId: string): Promise<void> {
  if (!isId(listId)) throw notFound();
  const rows = await sql.query(`select 1 from lists where id = $1 and account_id = $2 for update`, [listId, ownerId]);
  if (rows.length === 0) throw notFound();
}

export async function addListAccounts(services: Services, ownerId: string, listId: string, accountIds: readonly string[]): Promise<void> {
  // An id no account can have names no account: Account.find's 404.
  if (accountIds.some((id) => !isId(id))) throw notFound();
  const ids = [...new Set(accountIds)];
  await services.db.sql.transaction(async (sql) => {
    await lockedList(sql, ownerId, listId);
    if (ids.length === 0) return;
    const facts = await sql.query<{ id: string; followed: boolean; member: boolean }>(
      `select a.id::text as id,
              (a.id = $2 or exists (select 1 from follows f where f.account_id = $2 and f.target_account_id = a.id
                 and f.state in ('accepted', 'requested'))) as followed,
              exists (select 1 from list_accounts la where la.list_id = $3 and la.account_id = a.id) as member
         from accounts a where a.id = any($1::bigint[])`,
      [ids, ownerId, listId],
    );
    if (facts.length < ids.length) throw notFound();
    if (facts.some((f) => !f.followed)) throw invalid('Account must be a followed account');
    if (facts.some((f) => f.member)) throw invalid('Account has already been taken');
    const now = services.clock.now();
    await sql.query(
      `insert into list_accounts (id, list_id, account_id, created_at)
       select ids.id, $2::bigint, ids.account_id, $3::timestamptz from unnest($1::bigint[], $4::bigint[]) as ids (account_id, id)`,
      [ids, listId, now, ids.map(() => services.ids.next())],
    );
    // The feed: each new member's latest statuses that reach the owner (direct ones: if mentioned).
    await sql.query(
      `insert into list_feeds (list_id, status_id)
       select $2::bigint, s.id from unnest($1::bigint[]) as m (account_id)
         cross join lateral (
           select s.id from statuses s
            where s.account_id = m.account_id and s.deleted_at is null
              and (s.visibility in ('public', 'unlisted', 'private') or exists (select 1 from mentions sm where sm.status_id = s.id and sm.account_id = $3::bigint))
            order by s.id desc limit ${MERGE_ON_ADD}) s
       on conflict do nothing`,
      [ids, listId, ownerId],
    );
  });
}

export async function removeListAccounts(services: Services, ownerId: string, listId: string, accountIds: readonly string[]): Promise<void> {
  await services.db.sql.transaction(async (sql) => {
    await lockedList(sql, ownerId, listId);
    const ids = accountIds.filter(isId);
    if (ids.length) await sql.query(`delete from list_accounts where list_id = $1 and account_id = any($2::bigint[])`, [listId, ids]);
  });
}

/** The follow of `followerId` to `targetId` ended: `targetId` leaves the follower's lists (in the caller's transaction). */
export async function dropFromLists(sql: Sql, followerId: string, targetId: string): Promise<void> {
  await sql.query(
    `delete from list_accounts la using lists l where l.id = la.list_id and l.account_id = $1 and la.account_id = $2`,
    [followerId, targetId],
  );
}
