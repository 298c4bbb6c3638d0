/**
 * Followed hashtags feed the home timeline (Mastodon's FanOutOnWriteService#deliver_to_hashtag_followers!):
 * after a public status that is not a reblog is committed, local or remote, its id goes into the
 * tag home feed (`tag_home_feeds`) of every local account following one of its tags — one INSERT … SELECT whatever the
 * number of followers, in the followers' fan-out statement (./home-feeds.ts). Not from a silenced author
 * (Mastodon's broadcastable?). Whether the reader still follows the tag, and blocks or mutes, is
 * decided when the page is read (services/reads/timelines.ts).
 */

/**
 * The INSERT … SELECT of status `status` (an SQL parameter) into its tag followers' feeds, for
 * the fan-out statement of ./home-feeds.ts (which adds `returning` and counts).
 */
export const tagFeedsInsertSql = (status: string) => `insert into tag_home_feeds (account_id, status_id)
       select distinct tf.account_id, s.id from statuses s
         join statuses_tags st on st.status_id = s.id
         join tag_follows tf on tf.tag_id = st.tag_id and tf.account_id <> s.account_id
         join accounts r on r.id = tf.account_id and r.domain is null
         join accounts a on a.id = s.account_id and a.silenced_at is null and a.suspended_at is null
        where s.id = ${status} and s.deleted_at is null and s.visibility = 'public' and s.reblog_of_id is null
       on conflict do nothing`;
