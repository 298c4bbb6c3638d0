/**
 * Trends: which tags, statuses and links (preview cards) are being used more than others lately
 * (GET /api/v1/trends/*), computed in the background on the instance's clock, never on request.
 *
 * What counts (Mastodon's Trends::Tags / Statuses / Links, simplified to one rule each):
 *  - a tag: its uses in public statuses, recorded by the trends consumer of `status.created`
 *    (effects/trends.ts, one row per status and tag); each day counts its DISTINCT authors, so one
 *    account posting a tag 100 times counts once;
 *  - a link: the public statuses that carry its preview card, likewise by distinct authors per day;
 *  - a status: the favourites and reblogs it has (status_stats), for public statuses that are not
 *    replies, not sensitive and without a content warning, by discoverable authors.
 * Silenced and suspended accounts count for nothing (checked when the score is computed, so a
 * silence takes the account's past uses out too). Each day of the last 7 weighs half the day
 * after it (a half-life of one day): score = Σ accounts(day) × 0.5^(days ago); a status weighs
 * 0.5^(its age in days).
 *
 * `refreshTrends` writes the scores into `trends` and schedules itself again after
 * `trends.refreshSeconds` (the `trends.refresh` timer, on the instance's clock, so a test or the
 * lab advances days in seconds). Review: a row's `trendable` is null until an admin approves or
 * rejects it (`reviewTrend`, the admin API); the public lists show approved rows, and unreviewed
 * ones too when `trends.trendableByDefault`.
 */
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import { scheduleTimer } from '../events/timers.ts';
import { RoostError } from '../lib/errors.ts';
import { minIdAt } from '../lib/snowflake.ts';
import { recordEvent } from './actor-store.ts';
import { logAdminAction } from './audit-log.ts';

export type TrendKind = 'tag' | 'status' | 'link';
export const TREND_KINDS: readonly TrendKind[] = ['tag', 'status', 'link'];

const DAY_MS = 86_400_000;
/** Days of uses a score looks at (and that trend_tag_uses keeps). */
export const TREND_DAYS = 7;

/** Days since the epoch (UTC) of `at`. */
export function epochDay(at: Date): number {
  return Math.floor(at.getTime() / DAY_MS);
}

/** Schedules the next refresh (one waits at a time: its dedupe key). */
export async function scheduleTrendsRefresh(services: Services, sql: Sql, afterSeconds = services.config.trends.refreshSeconds): Promise<void> {
  const runAt = new Date(services.clock.now().getTime() + afterSeconds * 1000);
  await scheduleTimer(sql, { type: 'trends.refresh' }, { runAt, dedupeKey: 'trends.refresh', clock: services.clock });
}

/** The scores of every kind written again in one transaction; returns how many rows score above 0. */
export async function refreshTrends(services: Services, opts: { reschedule?: boolean } = {}): Promise<Record<TrendKind, number>> {
  const now = services.clock.now();
  const today = epochDay(now);
  const since = today - (TREND_DAYS - 1);
  const counts = await services.db.sql.transaction(async (sql) => {
    // One refresh at a time (two processes' timers, or a test calling it beside the job).
    await sql.query(`select pg_advisory_xact_lock(hashtext('roost.trends.refresh'))`);
    await sql.query(`delete from trend_tag_uses where day < $1`, [since]);
    const scored = await sql.query<{ kind: TrendKind; n: number }>(
      `with counted as (
         select u.tag_id as target_id, u.day, count(distinct u.account_id) as accounts
           from trend_tag_uses u join accounts a on a.id = u.account_id and a.silenced_at is null and a.suspended_at is null
          where u.day >= $1 group by 1, 2
       ), tag_scores as (
         select 'tag'::text as kind, target_id, sum(accounts * power(0.5, $2 - day)) as score from counted group by 2
       ), link_days as (
         select pcs.preview_card_id as target_id, floor(extract(epoch from s.created_at) / 86400)::int as day, count(distinct s.account_id) as accounts
           from preview_cards_statuses pcs
           join statuses s on s.id = pcs.status_id and s.id >= $3::bigint and s.created_at >= $4 and s.deleted_at is null
                          and s.visibility = 'public' and s.reblog_of_id is null
           join accounts a on a.id = s.account_id and a.silenced_at is null and a.suspended_at is null
          group by 1, 2
       ), link_scores as (
         select 'link'::text as kind, target_id, sum(accounts * power(0.5, $2 - day)) as score from link_days group by 2
       ), status_scores as (
         select 'status'::text as kind, s.id as target_id,
                (st.favourites_count + st.reblogs_count) * power(0.5, extract(epoch from ($5::timestamptz - s.created_at)) / 86400.0) as score
           from statuses s
           join status_stats st on st.status_id = s.id and st.favourites_count + st.reblogs_count > 0
           join accounts a on a.id = s.account_id and a.silenced_at is null and a.suspended_at is null and coalesce(a.discoverable, false)
          where s.id >= $3::bigint and s.created_at >= $4 and s.created_at <= $5 and s.deleted_at is null and s.visibility = 'public'
            and s.reblog_of_id is null and s.in_reply_to_id is null and not s.sensitive and s.spoiler_text = ''
       ), fresh as (
         select * from tag_scores union all select * from link_scores union all select * from status_scores
       ), written as (
         insert into trends (kind, target_id, score, updated_at)
         select kind, target_id, score, $5 from fresh where score > 0
         on conflict (kind, target_id) do update set score = excluded.score, updated_at = excluded.updated_at
         returning kind
       ), faded as (
         -- A reviewed row keeps its review when it stops trending; an unreviewed one goes.
         update trends t set score = 0, updated_at = $5
          where t.score > 0 and t.trendable is not null
            and not exists (select 1 from fresh f where f.kind = t.kind and f.target_id = t.target_id and f.score > 0)
       ), dropped as (
         delete from trends t
          where t.trendable is null and not exists (select 1 from fresh f where f.kind = t.kind and f.target_id = t.target_id and f.score > 0)
       )
       select kind, count(*)::int as n from written group by kind`,
      [since, today, minIdAt(new Date((since - 1) * DAY_MS)), new Date(since * DAY_MS), now],
    );
    if (opts.reschedule) await scheduleTrendsRefresh(services, sql);
    return scored;
  });
  const out: Record<TrendKind, number> = { tag: 0, status: 0, link: 0 };
  for (const c of counts) out[c.kind] = c.n;
  return out;
}

/** The refresh timer's handler: compute, then wait `trends.refreshSeconds` for the next one. */
export async function handleTrendsRefresh(services: Services): Promise<void> {
  if (!services.config.trends.enabled) return;
  const counts = await refreshTrends(services, { reschedule: true });
  services.log.child({ module: 'trends' }).debug(counts, 'trend scores computed');
}

/** Where the target of a review is, to 404 an unknown one. */
const TARGETS: Record<TrendKind, { table: string; human: string; type: string }> = {
  tag: { table: 'tags', human: `(select name from tags where id = $1)`, type: 'Tag' },
  status: { table: 'statuses', human: `(select uri from statuses where id = $1)`, type: 'Status' },
  link: { table: 'preview_cards', human: `(select url from preview_cards where id = $1)`, type: 'PreviewCard' },
};

/**
 * An admin approves (trendable) or rejects a tag, status or link as a trend (Mastodon's
 * Admin::Trends::*Controller approve/reject): the review row, the fact and the audit entry in one
 * transaction. 404 for an unknown target.
 */
export async function reviewTrend(services: Services, kind: TrendKind, targetId: string, trendable: boolean, actorAccountId: string | null): Promise<void> {
  const target = TARGETS[kind];
  await services.db.sql.transaction(async (sql) => {
    const [found] = await sql.query<{ human: string | null }>(`select ${target.human} as human from ${target.table} where id = $1 and ${kind === 'status' ? 'deleted_at is null' : 'true'}`, [targetId]);
    if (!found) throw new RoostError(404, 'Record not found');
    const now = services.clock.now();
    await sql.query(
      `insert into trends (kind, target_id, score, trendable, reviewed_at, updated_at) values ($1, $2, 0, $3, $4, $4)
       on conflict (kind, target_id) do update set trendable = excluded.trendable, reviewed_at = excluded.reviewed_at`,
      [kind, targetId, trendable, now],
    );
    await recordEvent(services, sql, { actorKind: 'trend', actorId: targetId, origin: actorAccountId ? 'client' : 'operator', event: { type: 'trend.reviewed', kind, targetId, trendable } });
    await logAdminAction(services, sql, {
      actorAccountId,
      action: trendable ? 'approve' : 'reject',
      targetType: target.type,
      targetId,
      humanIdentifier: found.human,
    });
  });
}
