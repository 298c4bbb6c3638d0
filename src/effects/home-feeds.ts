/**
 * Fan-out on write, the "surface" side of the outbox: after a status or a reblog is committed,
 * its id goes into the `home_feeds` of the author's local followers (direct and limited ones:
 * the mentioned followers only), as Mastodon's FanOutOnWriteService; when a follow is accepted,
 * the followed account's latest statuses are merged into the follower's feed (MergeWorker).
 * Posting never waits for this: POST /api/v1/statuses commits and answers, this runs from the
 * outbox after commit, ONE statement per event whatever the follower count: the followers' home
 * feeds, the `list_feeds` of every list that holds the author (Mastodon's
 * FanOutOnWriteService#deliver_to_lists!) and, for a new status, the tag home feeds of those who
 * follow one of its tags (./tag-feeds.ts), each an INSERT … SELECT in a CTE of its own. A new list
 * member's earlier statuses are merged when it is added (services/lists.ts).
 *
 * The feeds hold candidates only: who may see what is decided when the page is read
 * (services/reads/timelines.ts homeFilterSql, services/reads/user-lists.ts), so nothing here needs
 * undoing on a block, a mute or an unfollow, and a deleted status simply stops showing.
 */
import type { Services } from '../context.ts';
import type { ConsumerHandler } from './registry.ts';
import { prepared } from '../db/prepared.ts';
import { tagFeedsInsertSql } from './tag-feeds.ts';

/** How many of a newly followed account's statuses are merged into the follower's feed (Mastodon: 800 / 4). */
export const MERGE_ON_FOLLOW = 200;

/** SQL: the status `s` reaches the reader `f` (a follower, a list's owner; direct and limited ones only the mentioned). */
const reachesSql = (s: string, f: string) =>
  `(${s}.visibility in ('public', 'unlisted', 'private') or exists (select 1 from mentions m where m.status_id = ${s}.id and m.account_id = ${f}))`;

/** The fan-out of status $1 (a new status with `tags`, a reblog without): one statement, counting what each feed took. */
const fanOutSql = (tags: boolean) =>
  prepared(`with pushed as (
     insert into home_feeds (account_id, status_id)
     select f.account_id, s.id from statuses s
       join follows f on f.target_account_id = s.account_id and f.state = 'accepted'
       join accounts a on a.id = f.account_id and a.domain is null
      where s.id = $1 and s.deleted_at is null and ${reachesSql('s', 'f.account_id')}
     on conflict do nothing
     returning 1
   ), listed as (
     insert into list_feeds (list_id, status_id)
     select la.list_id, s.id from statuses s
       join list_accounts la on la.account_id = s.account_id
       join lists l on l.id = la.list_id
      where s.id = $1 and s.deleted_at is null and ${reachesSql('s', 'l.account_id')}
     on conflict do nothing
     returning 1
   )${tags ? `, tagged as (${tagFeedsInsertSql('$1')} returning 1)` : ''}
   select (select count(*) from pushed)::text as n, (select count(*) from listed)::text as listed,
          ${tags ? '(select count(*) from tagged)' : '0'}::text as by_tag`);
const FAN_OUT_STATUS = fanOutSql(true);
const FAN_OUT_REBLOG = fanOutSql(false);

export function homeFeedConsumer(services: Services): ConsumerHandler<'home-feeds'> {
  const log = services.log.child({ module: 'home-feeds' });
  return async function fanOut(record): Promise<void> {
    const event = record.event;
    switch (event.type) {
      case 'status.created':
      case 'status.reblogged': {
        const [row] = await services.db.sql.query<{ n: string; listed: string; by_tag: string }>(
          event.type === 'status.created' ? FAN_OUT_STATUS : FAN_OUT_REBLOG,
          [event.statusId],
        );
        log.debug({ statusId: event.statusId, feeds: Number(row?.n ?? 0), lists: Number(row?.listed ?? 0), byTag: Number(row?.by_tag ?? 0) }, 'status pushed to home feeds');
        return;
      }
      case 'follow.accepted': {
        await services.db.sql.query(
          `insert into home_feeds (account_id, status_id)
           select f.account_id, s.id from follows f
             join accounts a on a.id = f.account_id and a.domain is null
             cross join lateral (
               select s.id from statuses s
                where s.account_id = f.target_account_id and s.deleted_at is null and ${reachesSql('s', 'f.account_id')}
                order by s.id desc limit ${MERGE_ON_FOLLOW}) s
            where f.id = $1 and f.state = 'accepted'
           on conflict do nothing`,
          [record.actorId],
        );
        return;
      }
      default:
        event satisfies never;
    }
  };
}
