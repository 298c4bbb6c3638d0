/**
 * Saving timeline read markers (POST /api/v1/markers), as Mastodon's MarkersController#create:
 * only `home` and `notifications` are kept, other keys are ignored (a body naming none of them
 * saves nothing and answers `{}`). Each marker is Mastodon's row with an optimistic-lock counter:
 * created at version 0 and moved on by every change of `last_read_id` (the first save of a
 * timeline is a creation then a change, so it answers version 1, as Mastodon does); saving the
 * same position again changes nothing, version and updated_at included. Every client of the user
 * (each token) reads and writes the same rows, so they see each other's position.
 *
 * A timeline given without a usable `last_read_id` (missing, or not an id) is a 422 and nothing is
 * saved: all the timelines of one request in one transaction.
 */
import type { Services } from '../context.ts';
import { RoostError } from '../lib/errors.ts';
import type { MarkerRow } from '../serializers/marker.ts';
import { isId } from './reads/page.ts';
import { MARKER_COLUMNS, markerRow, type MarkerSqlRow, type MarkerTimeline } from './reads/markers.ts';

export interface MarkerInput {
  timeline: MarkerTimeline;
  /** As sent; validated here. */
  lastReadId: string | undefined;
}

export async function saveMarkers(services: Services, userId: string, input: readonly MarkerInput[]): Promise<MarkerRow[]> {
  for (const m of input) {
    if (m.lastReadId === undefined || !isId(m.lastReadId)) throw new RoostError(422, "Validation failed: Last read can't be blank");
  }
  if (input.length === 0) return [];
  return services.db.sql.transaction(async (sql) => {
    const out: MarkerRow[] = [];
    const now = services.clock.now();
    for (const m of input) {
      // One statement: created (version 1: a creation then a change, as Mastodon), or moved on
      // when the position changed; the row as it stands either way.
      const [row] = await sql.query<MarkerSqlRow>(
        `with saved as (
           insert into markers as mk (id, user_id, timeline, last_read_id, version, created_at, updated_at)
           values ($1, $2, $3, $4, case when $4::bigint = 0 then 0 else 1 end, $5, $5)
           on conflict (user_id, timeline) do update
             set last_read_id = excluded.last_read_id, version = mk.version + 1, updated_at = excluded.updated_at
             where mk.last_read_id <> excluded.last_read_id
           returning ${MARKER_COLUMNS})
         select * from saved
         union all
         select ${MARKER_COLUMNS} from markers where user_id = $2 and timeline = $3 and not exists (select 1 from saved)`,
        [services.ids.next(), userId, m.timeline, m.lastReadId, now],
      );
      // (A row another request committed meanwhile is not in this statement's snapshot: read it.)
      const current = row ?? (await sql.query<MarkerSqlRow>(`select ${MARKER_COLUMNS} from markers where user_id = $1 and timeline = $2`, [userId, m.timeline]))[0];
      out.push(markerRow(current));
    }
    return out;
  });
}
