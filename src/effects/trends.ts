/**
 * The trends consumer: a public status's hashtags become uses in `trend_tag_uses` (one row per
 * status and tag, with its author and day), which services/trends.ts counts by distinct authors
 * when it computes the scores. A status older than the trend window (a remote post fetched late)
 * is not a use today. Idempotent: a repeat of the job inserts nothing twice (the row's key is the
 * status and the tag).
 */
import type { Services } from '../context.ts';
import type { ConsumerHandler } from './registry.ts';

const DAY_SECONDS = 86_400;
const WINDOW_DAYS = 7;

export function trendsConsumer(services: Services): ConsumerHandler<'trends'> {
  return async function count(record): Promise<void> {
    const event = record.event;
    if (!services.config.trends.enabled || event.tagged === false) return;
    await services.db.sql.query(
      `insert into trend_tag_uses (tag_id, status_id, account_id, day)
       select st.tag_id, s.id, s.account_id, floor(extract(epoch from s.created_at) / ${DAY_SECONDS})::int
         from statuses s join statuses_tags st on st.status_id = s.id
        where s.id = $1 and s.visibility = 'public' and s.reblog_of_id is null and s.deleted_at is null
          and s.created_at >= $2::timestamptz - interval '${WINDOW_DAYS} days'
       on conflict do nothing`,
      [event.statusId, services.clock.now()],
    );
  };
}
