/** A user's timeline read markers (GET /api/v1/markers): one statement. */
import type { Services } from '../../context.ts';
import type { MarkerRow } from '../../serializers/marker.ts';

/** The timelines a marker can be kept for (Mastodon's Marker::TIMELINES). */
export const MARKER_TIMELINES = ['home', 'notifications'] as const;
export type MarkerTimeline = (typeof MARKER_TIMELINES)[number];

export const isMarkerTimeline = (t: string): t is MarkerTimeline => (MARKER_TIMELINES as readonly string[]).includes(t);

export interface MarkerSqlRow {
  timeline: string;
  last_read_id: string;
  version: number;
  updated_at: Date | string;
}

export const MARKER_COLUMNS = `timeline, last_read_id::text as last_read_id, version, updated_at`;

export const markerRow = (r: MarkerSqlRow): MarkerRow => ({
  timeline: r.timeline,
  lastReadId: r.last_read_id,
  version: Number(r.version),
  updatedAt: new Date(r.updated_at),
});

/** `userId`'s markers of those of `timelines` it has (unknown timelines are no error: none has them). */
export async function markersOf(services: Services, userId: string, timelines: readonly string[]): Promise<MarkerRow[]> {
  const wanted = [...new Set(timelines.filter(isMarkerTimeline))];
  if (wanted.length === 0) return [];
  const rows = await services.db.sql.query<MarkerSqlRow>(
    `select ${MARKER_COLUMNS} from markers where user_id = $1 and timeline = any($2::text[]) order by timeline`,
    [userId, wanted],
  );
  return rows.map(markerRow);
}
