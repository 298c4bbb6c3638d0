/**
 * Read modules for the account lists: followers/following, follow requests, the viewer's blocks,
 * mutes, endorsements and domain blocks, familiar followers. Each returns one page of rows (ids
 * newest first, and the cursor ids for the Link header); the route renders the accounts with
 * reads/accounts.ts renderAccounts, one batched view per page.
 */
import type { Services } from '../../context.ts';
import { isId, newestFirst, pageSql, type PageParams } from './page.ts';
import { blocksSql, muteInForceSql } from '../../db/audience.ts';

/** A page of accounts: the ids to render, in order, and the row ids that page by. */
export interface AccountIdPage {
  accountIds: string[];
  cursorIds: string[];
}

/** Whose collection GET /api/v1/accounts/:id/followers|following shows, as the viewer may see it. */
export async function collectionOwner(
  services: Services,
  accountId: string,
  viewerId: string | null,
): Promise<'missing' | 'blocks-viewer' | 'visible'> {
  if (!isId(accountId)) return 'missing';
  const [row] = await services.db.sql.query<{ suspended: boolean; blocks_viewer: boolean }>(
    `select a.suspended_at is not null as suspended,
            ($2::bigint is not null and $2::bigint <> a.id
               and ${blocksSql('a.id', '$2::bigint')}) as blocks_viewer
       from accounts a where a.id = $1`,
    [accountId, viewerId],
  );
  if (!row || row.suspended) return 'missing';
  return row.blocks_viewer ? 'blocks-viewer' : 'visible';
}

/** Whether an account exists and is not suspended. */
export async function accountShown(services: Services, accountId: string): Promise<boolean> {
  if (!isId(accountId)) return false;
  const rows = await services.db.sql.query(`select 1 from accounts where id = $1 and suspended_at is null`, [accountId]);
  return rows.length > 0;
}

/** An account's accepted followers (`followers`) or the accounts it follows (`following`), by follow id. */
export async function followCollectionPage(services: Services, accountId: string, which: 'followers' | 'following', p: PageParams): Promise<AccountIdPage> {
  const page = pageSql('f.id', p, 2);
  const [mine, other] = which === 'followers' ? ['target_account_id', 'account_id'] : ['account_id', 'target_account_id'];
  const rows = await services.db.sql.query<{ id: string; other_id: string }>(
    `select f.id::text as id, f.${other}::text as other_id from follows f
      where f.${mine} = $1 and f.state = 'accepted'${page.where} order by ${page.order} limit ${p.limit}`,
    [accountId, ...page.params],
  );
  newestFirst(rows, p);
  return { accountIds: rows.map((r) => r.other_id), cursorIds: rows.map((r) => r.id) };
}

/** The pending requests to follow `accountId`, by follow id. */
export async function followRequestsPage(services: Services, accountId: string, p: PageParams): Promise<AccountIdPage> {
  const page = pageSql('f.id', p, 2);
  const rows = await services.db.sql.query<{ id: string; account_id: string }>(
    `select f.id::text as id, f.account_id::text as account_id from follows f
      where f.target_account_id = $1 and f.state = 'requested'${page.where} order by ${page.order} limit ${p.limit}`,
    [accountId, ...page.params],
  );
  newestFirst(rows, p);
  return { accountIds: rows.map((r) => r.account_id), cursorIds: rows.map((r) => r.id) };
}

/** The viewer's blocks or endorsements (account_pins), by row id. */
export async function viewerAccountListPage(services: Services, list: 'blocks' | 'account_pins', viewerId: string, p: PageParams): Promise<AccountIdPage> {
  const page = pageSql('t.id', p, 2);
  const rows = await services.db.sql.query<{ id: string; target_account_id: string }>(
    `select t.id::text as id, t.target_account_id::text as target_account_id from ${list} t
      where t.account_id = $1${page.where} order by ${page.order} limit ${p.limit}`,
    [viewerId, ...page.params],
  );
  newestFirst(rows, p);
  return { accountIds: rows.map((r) => r.target_account_id), cursorIds: rows.map((r) => r.id) };
}

/** The viewer's mutes still in force, by row id, with when each ends. */
export async function viewerMutesPage(services: Services, viewerId: string, p: PageParams): Promise<AccountIdPage & { expiresAt: Map<string, Date | null> }> {
  const page = pageSql('t.id', p, 3);
  const rows = await services.db.sql.query<{ id: string; target_account_id: string; expires_at: Date | string | null }>(
    `select t.id::text as id, t.target_account_id::text as target_account_id, t.expires_at from mutes t
      where t.account_id = $1 and ${muteInForceSql('t', '$2')}${page.where} order by ${page.order} limit ${p.limit}`,
    [viewerId, services.clock.now(), ...page.params],
  );
  newestFirst(rows, p);
  return {
    accountIds: rows.map((r) => r.target_account_id),
    cursorIds: rows.map((r) => r.id),
    expiresAt: new Map(rows.map((r) => [r.target_account_id, r.expires_at ? new Date(r.expires_at) : null])),
  };
}

/** The viewer's user-level domain blocks, by row id. */
export async function viewerDomainBlocksPage(services: Services, viewerId: string, p: PageParams): Promise<{ domains: string[]; cursorIds: string[] }> {
  const page = pageSql('t.id', p, 2);
  const rows = await services.db.sql.query<{ id: string; domain: string }>(
    `select t.id::text as id, t.domain from account_domain_blocks t
      where t.account_id = $1${page.where} order by ${page.order} limit ${p.limit}`,
    [viewerId, ...page.params],
  );
  newestFirst(rows, p);
  return { domains: rows.map((r) => r.domain), cursorIds: rows.map((r) => r.id) };
}

/** For each of `ids`: the accounts the viewer follows that follow it too, newest follow first. */
export async function familiarFollowers(services: Services, viewerId: string, ids: readonly string[]): Promise<Map<string, string[]>> {
  const rows = await services.db.sql.query<{ target: string; follower: string }>(
    `select theirs.target_account_id::text as target, theirs.account_id::text as follower
       from follows theirs
       join follows mine on mine.target_account_id = theirs.account_id and mine.account_id = $1 and mine.state = 'accepted'
      where theirs.state = 'accepted' and theirs.target_account_id = any($2::bigint[]) and theirs.account_id <> $1
      order by theirs.id desc`,
    [viewerId, ids.filter(isId)],
  );
  const out = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const r of rows) out.get(r.target)?.push(r.follower);
  return out;
}
