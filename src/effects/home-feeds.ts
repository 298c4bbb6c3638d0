/**
 * Fan-out on write, the "surface" side of the outbox: after a status or a reblog is committed,
 * its id goes into the `home_feeds` of the author's local followers (direct and limited ones:
 * the mentioned followers only), as Mastodon's FanOutOnWriteService; when a follow is accepted,
 * the followed account's latest statuses are merged into the follower's feed (MergeWorker).
 * Posting never waits for this: POST /api/v1/statuses commits and answers, this runs from the
 * outbox after commit, one INSERT … SELECT per event whatever the follower count.
 *
 * The feed holds candidates only: who may see what is decided when the page is read
 * (services/reads/timelines.ts homeFilterSql), so nothing here needs undoing on a block, a mute
 * or an unfollow, and a deleted status simply stops showing.
 */
import type { Services } from '../context.ts';
import type { OutboxRecord } from './outbox.ts';
import { pushToListFeeds } from './list-feeds.ts';
import { pushToTagFollowers } from './tag-feeds.ts';

/** How many of a newly followed account's statuses are merged into the follower's feed (Mastodon: 800 / 4). */
export const MERGE_ON_FOLLOW = 200;

/** SQL: the status `s` reaches the follower `f` (direct and limited ones only the mentioned). */
const reachesSql = (s: string, f: string) =>
  `(${s}.visibility in ('public', 'unlisted', 'private') or exists (select 1 from mentions m where m.status_id = ${s}.id and m.account_id = ${f}))`;

export function homeFeedConsumer(services: Services) {
  const log = services.log.child({ module: 'home-feeds' });
  return async function fanOut(record: OutboxRecord): Promise<void> {
    const event = record.event as { type: string; statusId?: string };
    switch (event.type) {
      case 'status.created':
      case 'status.reblogged': {
        if (!event.statusId) return;
        const rows = await services.db.sql.query<{ n: string }>(
          `with pushed as (
             insert into home_feeds (account_id, status_id)
             select f.account_id, s.id from statuses s
               join follows f on f.target_account_id = s.account_id and f.state = 'accepted'
               join accounts a on a.id = f.account_id and a.domain is null
              where s.id = $1 and s.deleted_at is null and ${reachesSql('s', 'f.account_id')}
             on conflict do nothing
             returning 1)
           select count(*)::text as n from pushed`,
          [event.statusId],
        );
        await pushToListFeeds(services, event.statusId);
        const byTag = event.type === 'status.created' ? await pushToTagFollowers(services, event.statusId) : 0;
        log.debug({ statusId: event.statusId, feeds: Number(rows[0]?.n ?? 0), byTag }, 'status pushed to home feeds');
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
        return;
    }
  };
}
