/** Mastodon's Marker entity (entities/Marker.md), keyed by timeline as GET/POST /api/v1/markers answer. Pure. */

export interface MarkerRow {
  timeline: string;
  lastReadId: string;
  version: number;
  updatedAt: Date;
}

export interface MastodonMarker {
  last_read_id: string;
  version: number;
  updated_at: string;
}

export function serializeMarker(row: MarkerRow): MastodonMarker {
  return { last_read_id: row.lastReadId, version: row.version, updated_at: row.updatedAt.toISOString() };
}

/** `{ home: Marker, notifications: Marker }` for the markers there are. */
export function serializeMarkers(rows: readonly MarkerRow[]): Record<string, MastodonMarker> {
  const out: Record<string, MastodonMarker> = {};
  for (const r of rows) out[r.timeline] = serializeMarker(r);
  return out;
}
