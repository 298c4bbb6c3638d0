/**
 * Bounded tables of the event spine.
 *
 *   outbox_events     every fact is kept `events.retentionDays` (14 by default) as the trace of
 *                     what happened, then pruned here: every 1024th event job deletes up to
 *                     PRUNE_BATCH of the oldest facts past that age, oldest first along the primary
 *                     key (a small, bounded statement that keeps up with any write rate below
 *                     PRUNE_BATCH / 1024 of it). A job keeps its own copy of its fact, so a
 *                     job still queued (or dead, for the operator) loses nothing.
 *   streaming_events  the resume buffer of the streaming API: rows older than its resume window
 *                     (10 minutes) are deleted by every 256th write (src/streaming/store.ts).
 */
import type { Sql } from '../db/sql.ts';

/** The most facts one prune deletes. */
export const PRUNE_BATCH = 10_000;

/** Deletes up to PRUNE_BATCH facts older than `retentionDays` before `now`; returns how many. */
export async function pruneOutbox(sql: Sql, now: Date, retentionDays: number): Promise<number> {
  const before = new Date(now.getTime() - retentionDays * 86_400_000);
  const rows = await sql.query<{ n: string }>(
    `with gone as (
       delete from outbox_events where id in (select id from outbox_events where created_at < $1 order by id limit ${PRUNE_BATCH}) returning 1
     ) select count(*)::text as n from gone`,
    [before],
  );
  return Number(rows[0]?.n ?? 0);
}
