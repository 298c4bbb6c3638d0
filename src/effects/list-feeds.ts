/**
 * Fan-out on write into list feeds, beside home's (effects/home-feeds.ts calls these from the same
 * outbox consumer): a committed status or reblog goes into `list_feeds` of every list that holds
 * its author (Mastodon's FanOutOnWriteService#deliver_to_lists!), and when a follow is accepted
 * (a member added while its request was pending) the followed account's latest statuses are
 * merged into the follower's lists that hold it. One INSERT … SELECT per event whatever the number
 * of lists. Candidates only: services/reads/user-lists.ts decides what a page shows.
 */
import type { Services } from '../context.ts';

/** As many of a newly followed member's statuses as home merges (home-feeds.ts MERGE_ON_FOLLOW). */
const MERGE_ON_FOLLOW = 200;

/** SQL: the status `s` reaches the list owner `o` (direct and limited ones only when mentioned). */
const reachesSql = (s: string, o: string) =>
  `(${s}.visibility in ('public', 'unlisted', 'private') or exists (select 1 from mentions m where m.status_id = ${s}.id and m.account_id = ${o}))`;

export async function pushToListFeeds(services: Services, statusId: string): Promise<void> {
  await services.db.sql.query(
    `insert into list_feeds (list_id, status_id)
     select la.list_id, s.id from statuses s
       join list_accounts la on la.account_id = s.account_id
       join lists l on l.id = la.list_id
      where s.id = $1 and s.deleted_at is null and ${reachesSql('s', 'l.account_id')}
     on conflict do nothing`,
    [statusId],
  );
}

export async function mergeIntoListFeeds(services: Services, followId: string): Promise<void> {
  await services.db.sql.query(
    `insert into list_feeds (list_id, status_id)
     select la.list_id, s.id from follows f
       join lists l on l.account_id = f.account_id
       join list_accounts la on la.list_id = l.id and la.account_id = f.target_account_id
       cross join lateral (
         select s.id from statuses s
          where s.account_id = f.target_account_id and s.deleted_at is null and ${reachesSql('s', 'f.account_id')}
          order by s.id desc limit ${MERGE_ON_FOLLOW}) s
      where f.id = $1 and f.state = 'accepted'
     on conflict do nothing`,
    [followId],
  );
}
