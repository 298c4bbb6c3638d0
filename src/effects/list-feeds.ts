/**
 * Fan-out on write into list feeds, beside home's (effects/home-feeds.ts calls it from the same
 * outbox consumer): a committed status or reblog goes into `list_feeds` of every list that holds
 * its author (Mastodon's FanOutOnWriteService#deliver_to_lists!): one INSERT … SELECT per event
 * whatever the number of lists. A new member's earlier statuses are merged when it is added
 * (services/lists.ts), whether its follow is accepted yet or still pending. Candidates only:
 * services/reads/user-lists.ts decides what a page shows (a pending member's posts once accepted).
 */
import type { Services } from '../context.ts';

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
