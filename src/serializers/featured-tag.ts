/**
 * Mastodon's FeaturedTag entity (entities/FeaturedTag.md, REST::FeaturedTagSerializer): the count
 * as a string and the last status's date (no time), as Mastodon serializes them; the URL is the
 * account's statuses with the tag (`/@user/tagged/name`).
 */
export interface FeaturedTagRow {
  id: string;
  tagId: string;
  /** The tag's name as first written. */
  name: string;
  /** The (local) account's username. */
  username: string;
  statusesCount: number;
  lastStatusAt: Date | null;
}

export interface MastodonFeaturedTag {
  id: string;
  name: string;
  url: string;
  statuses_count: string;
  last_status_at: string | null;
}

export function serializeFeaturedTag(row: FeaturedTagRow, baseUrl: string): MastodonFeaturedTag {
  return {
    id: row.id,
    name: row.name,
    url: `${baseUrl}/@${row.username}/tagged/${encodeURIComponent(row.name.toLowerCase())}`,
    statuses_count: String(row.statusesCount),
    last_status_at: row.lastStatusAt ? row.lastStatusAt.toISOString().slice(0, 10) : null,
  };
}
