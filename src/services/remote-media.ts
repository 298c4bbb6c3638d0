/**
 * The attachments of a remote status after an Update(Note) (Mastodon's
 * ActivityPub::ProcessStatusUpdateService#update_media_attachments!): when the Note lists other
 * attachments than the status has — another set or order of URLs, or another description, focal
 * point or blurhash — the status lets go of its attachments (status_id null: the rows stay, so the
 * versions that showed them still do) and takes new rows for the Note's list (services/media.ts
 * persistRemoteMedia: http(s) only, bounded, descriptions cut, blurhash checked). Nothing is
 * fetched: remote files are shown at their remote URL.
 */
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import { acceptedRemoteBlurhash, persistRemoteMedia, type RemoteMediaItem } from './media.ts';

/** What persistRemoteMedia would store of an item, for comparing with a stored row (null: not stored). */
function stored(services: Services, item: RemoteMediaItem): string | null {
  let url: URL;
  try {
    url = new URL(item.url);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const limits = services.config.limits;
  const description = typeof item.name === 'string' && item.name.trim() ? [...item.name].slice(0, limits.mediaAttachments.descriptionLimit).join('') : null;
  const fp = item.focalPoint;
  const focus = Array.isArray(fp) && fp.length === 2 && fp.every((n) => typeof n === 'number' && Number.isFinite(n) && n >= -1 && n <= 1) ? fp : null;
  const blurhash = acceptedRemoteBlurhash(item.blurhash, limits.mediaAttachments.maxRemoteBlurhashComponents);
  return JSON.stringify([url.href, description, focus ? [Math.fround(focus[0]!), Math.fround(focus[1]!)] : null, blurhash]);
}

/** Replaces the status's attachments by the Note's when they differ, in the caller's transaction. Returns whether they changed. */
export async function syncRemoteMedia(services: Services, sql: Sql, statusId: string, accountId: string, items: readonly RemoteMediaItem[]): Promise<boolean> {
  const max = services.config.limits.statuses.maxMediaAttachments;
  const wanted = items.map((i) => stored(services, i)).filter((k): k is string => k !== null).slice(0, max);
  const rows = await sql.query<{ remote_url: string | null; description: string | null; focus_x: number | null; focus_y: number | null; blurhash: string | null }>(
    `select remote_url, description, focus_x, focus_y, blurhash from media_attachments where status_id = $1 order by position, id for update`,
    [statusId],
  );
  const current = rows.map((r) =>
    JSON.stringify([r.remote_url, r.description, r.focus_x === null ? null : [Math.fround(Number(r.focus_x)), Math.fround(Number(r.focus_y))], r.blurhash]),
  );
  if (current.join('\n') === wanted.join('\n')) return false;
  await sql.query(`update media_attachments set status_id = null, position = null, updated_at = $2 where status_id = $1`, [statusId, services.clock.now()]);
  await persistRemoteMedia(sql, services, statusId, accountId, items);
  return true;
}
