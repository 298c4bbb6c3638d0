/**
 * The per-account counters row (account_stats): followers, following, statuses, last status.
 * Written only here, always inside the transaction of the change it counts, so reading an account
 * never counts rows. An account without a row has zero of everything (rows appear on first use).
 */
import type { Sql } from '../db/sql.ts';

/**
 * A follow moved from `oldState` to `newState` (null: no row before): when that starts or ends an
 * accepted follow, the follower's following_count and the target's followers_count move by one.
 * Called by the follow step in its transaction. The two rows are updated in id order, so two
 * opposite follows committing at once cannot deadlock on them.
 */
export async function applyFollowStateToStats(
  sql: Sql,
  follow: { accountId: string; targetAccountId: string },
  oldState: string | null,
  newState: string,
): Promise<void> {
  const was = oldState === 'accepted';
  const is = newState === 'accepted';
  if (was === is) return;
  const delta = is ? 1 : -1;
  const rows: [string, number, number][] = [
    [follow.accountId, 0, delta], // follower: following + delta
    [follow.targetAccountId, delta, 0], // target: followers + delta
  ];
  rows.sort((a, b) => (BigInt(a[0]) < BigInt(b[0]) ? -1 : 1));
  await sql.query(
    `insert into account_stats as s (account_id, followers_count, following_count)
     values ($1, greatest($2::int, 0), greatest($3::int, 0)), ($4, greatest($5::int, 0), greatest($6::int, 0))
     on conflict (account_id) do update
       set followers_count = greatest(0, s.followers_count + case when s.account_id = $1 then $2::int else $5::int end),
           following_count = greatest(0, s.following_count + case when s.account_id = $1 then $3::int else $6::int end)`,
    rows.flat(),
  );
}

/**
 * An account is about to be deleted with its rows (its follows go by foreign key): the accounts on
 * the other side of its accepted follows lose one follower or one following. Call it in the
 * deleting transaction, before the delete.
 */
export async function forgetAccountInStats(sql: Sql, accountId: string): Promise<void> {
  await sql.query(
    `update account_stats s set followers_count = greatest(0, s.followers_count - 1)
      where s.account_id in (select f.target_account_id from follows f where f.account_id = $1 and f.state = 'accepted')`,
    [accountId],
  );
  await sql.query(
    `update account_stats s set following_count = greatest(0, s.following_count - 1)
      where s.account_id in (select f.account_id from follows f where f.target_account_id = $1 and f.state = 'accepted')`,
    [accountId],
  );
}

/** A status was created (+1) or deleted (-1) at `createdAt`: for the statuses service to come. */
export async function applyStatusToStats(sql: Sql, accountId: string, delta: 1 | -1, createdAt: Date): Promise<void> {
  await sql.query(
    `insert into account_stats as s (account_id, statuses_count, last_status_at)
     values ($1, greatest($2::int, 0), case when $2::int > 0 then $3::timestamptz end)
     on conflict (account_id) do update
       set statuses_count = greatest(0, s.statuses_count + $2::int),
           last_status_at = case when $2::int > 0 then greatest(s.last_status_at, $3::timestamptz) else s.last_status_at end`,
    [accountId, delta, createdAt],
  );
}
