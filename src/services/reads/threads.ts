/**
 * How complete a thread is here (Roost's `roost_completeness` on GET /api/v1/statuses/:id/context):
 * for each status of the thread whose server was asked (federation/threads.ts), the replies its
 * server reports (status_reply_reports: its replies collection's totalItems, or the items it
 * listed) against the replies known here that it would list (public and unlisted, not deleted),
 * and the servers the last refresh could not reach. Two statements.
 */
import type { Services } from '../../context.ts';

export interface ThreadCompleteness {
  /** Replies known here, counted per status up to what its server reports. */
  known_replies: number;
  /** Replies the statuses' servers report (only statuses whose server was asked). */
  reported_replies: number;
  /** Statuses of the thread whose server was asked. */
  statuses_checked: number;
  /** Hosts the last refresh could not reach. */
  unreachable_servers: string[];
  /** Nothing reported is missing and every server answered (null: never checked). */
  complete: boolean | null;
  /** When the last refresh ended (null: never, or still running). */
  checked_at: string | null;
}

/** How far down, and how many of the thread's statuses, are counted (Mastodon's CONTEXT_LIMIT). */
const MAX_DEPTH = 4096;
const MAX_STATUSES = 4096;

/** The completeness of the thread rooted at `rootId` (as services/threads.ts openThread finds it). */
export async function threadCompleteness(services: Services, rootId: string): Promise<ThreadCompleteness> {
  const [counts] = await services.db.sql.query<{ known: number; reported: number; checked: number; unreachable: string[] | null; finished_at: Date | null }>(
    `with recursive t(id, depth) as (
       select $1::bigint, 0
       union all
       select s.id, t.depth + 1 from statuses s join t on s.in_reply_to_id = t.id where t.depth < ${MAX_DEPTH} and s.deleted_at is null
     ), thread as (select id from t limit ${MAX_STATUSES})
     select coalesce(sum(least(r.reported, (
              select count(*) from statuses c
               where c.in_reply_to_id = t.id and c.deleted_at is null and c.visibility in ('public', 'unlisted')))), 0)::int as known,
            coalesce(sum(r.reported), 0)::int as reported,
            count(r.status_id)::int as checked,
            (select unreachable_hosts from thread_refreshes where root_status_id = $1) as unreachable,
            (select finished_at from thread_refreshes where root_status_id = $1) as finished_at
       from thread t join status_reply_reports r on r.status_id = t.id`,
    [rootId],
  );
  const known = Number(counts?.known ?? 0);
  const reported = Number(counts?.reported ?? 0);
  const unreachable = counts?.unreachable ?? [];
  const checkedAt = counts?.finished_at ? new Date(counts.finished_at).toISOString() : null;
  return {
    known_replies: known,
    reported_replies: reported,
    statuses_checked: Number(counts?.checked ?? 0),
    unreachable_servers: unreachable,
    complete: checkedAt === null ? null : known >= reported && unreachable.length === 0,
    checked_at: checkedAt,
  };
}
