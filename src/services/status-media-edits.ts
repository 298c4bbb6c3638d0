/**
 * The media and poll parts of an edit (PUT /api/v1/statuses/:id), as Mastodon 4.x's
 * UpdateStatusService, each in the edit's transaction:
 *
 * - media: the PUT names the attachments the status has afterwards, in order (`media_ids`; none
 *   sent: none, as Mastodon, whose controller always passes the key). Each must be the author's
 *   and either unattached or already this status's (else Mastodon's 422 "Media … not found or
 *   already attached to another post"), processed, at most config.limits.statuses.maxMediaAttachments,
 *   no video or audio with others, and not with a poll. Added ones are attached, the order is
 *   rewritten, removed ones are let go of the status (status_id null: they stay rows, so older
 *   versions still show them, and the author may post them again). `media_attributes[]` (id,
 *   description, focus) update the attachments named in media_ids (others are ignored, as Mastodon).
 *   A change of set, order, description or focus is significant (a new version).
 * - poll: the PUT's poll replaces the status's (none sent: the poll goes, as Mastodon). A poll
 *   whose options, `multiple` or duration changed is a new poll: the old one is deleted through its
 *   actor (`poll.delete`, timers dropped) with its votes, and a new poll actor is created (votes
 *   reset, a new end). The same options, `multiple` and duration (expires_in equal to the poll's
 *   duration, or ending within a minute of its current end) keep the poll and its votes;
 *   only `hide_totals` is updated then.
 */
import type { EntityManager } from '@mikro-orm/core';
import type { Services } from '../context.ts';
import { sqlFromEm, type Sql } from '../db/sql.ts';
import { RoostError, Validation } from '../lib/errors.ts';
import { checkAttributes } from './media.ts';
import { createPoll, deletePollOfStatus, validatePoll, type PollParams } from './polls.ts';

export interface MediaAttributeInput {
  id: string;
  description?: string;
  focus?: string;
}

export interface CheckedMediaEdit {
  /** The attachments afterwards, in order, each once. */
  mediaIds: string[];
  /** Checked attributes by attachment id (only those in mediaIds). */
  attributes: Map<string, { description?: string | null; focus?: { x: number; y: number } | null }>;
  /** The poll afterwards (validated options), or null for none. */
  poll: (PollParams & { options: string[] }) | null;
}

/** How close (ms) a requested end may be to the poll's current end to count as the same end. */
const SAME_END_MS = 60_000;

/**
 * Checks the media and poll of an edit before its transaction (messages as Mastodon's), adding
 * validation errors to `v`; counting errors are thrown at once (Mastodon's "Cannot attach more
 * than 4 files" also answers media with a poll).
 */
export function checkMediaAndPollEdit(
  services: Services,
  v: Validation,
  input: { mediaIds?: string[]; mediaAttributes?: MediaAttributeInput[]; poll?: PollParams | null },
): CheckedMediaEdit {
  const max = services.config.limits.statuses.maxMediaAttachments;
  const mediaIds = [...new Set((input.mediaIds ?? []).map((m) => m.trim()).filter((m) => m !== ''))];
  if (mediaIds.length > max || (input.poll && mediaIds.length > 0)) throw new RoostError(422, `Cannot attach more than ${max} files`);
  const attributes: CheckedMediaEdit['attributes'] = new Map();
  for (const a of input.mediaAttributes ?? []) {
    if (!mediaIds.includes(a.id)) continue;
    // Each attachment's description and focus as PUT /api/v1/media/:id checks them.
    attributes.set(a.id, { ...attributes.get(a.id), ...checkAttributes(services, { description: a.description, focus: a.focus }) });
  }
  let poll: CheckedMediaEdit['poll'] = null;
  if (input.poll) poll = { ...input.poll, options: validatePoll(services, input.poll, v) };
  return { mediaIds, attributes, poll };
}

/** Media of the status: applies the edit's media, returns whether it changed significantly. */
export async function applyMediaEdit(sql: Sql, statusId: string, accountId: string, edit: CheckedMediaEdit, now: Date): Promise<boolean> {
  const before = await sql.query<{ id: string; description: string | null; focus_x: number | null; focus_y: number | null }>(
    `select id::text, description, focus_x, focus_y from media_attachments where status_id = $1 order by position, id for update`,
    [statusId],
  );
  const ids = edit.mediaIds;
  if (ids.length) {
    const numeric = ids.filter((id) => /^\d{1,19}$/.test(id) && BigInt(id) <= 9223372036854775807n);
    const rows = await sql.query<{ id: string; processing: string; type: string }>(
      `select id::text, processing, type from media_attachments
        where id = any($1::bigint[]) and account_id = $2 and (status_id is null or status_id = $3) for update`,
      [numeric, accountId, statusId],
    );
    const found = new Set(rows.map((r) => r.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length) throw new RoostError(422, `Media ${missing.join(', ')} not found or already attached to another post`);
    if (rows.length > 1 && rows.some((r) => r.type === 'video' || r.type === 'audio')) {
      throw new RoostError(422, 'Cannot attach a video to a post that already contains images');
    }
    if (rows.some((r) => r.processing !== 'complete')) throw new RoostError(422, 'Cannot attach files that have not finished processing. Try again in a moment!');
  }
  let changed = before.map((m) => m.id).join(',') !== ids.join(',');
  const previous = new Map(before.map((m) => [m.id, m]));
  for (const [id, attrs] of edit.attributes) {
    const sets: string[] = [];
    const params: unknown[] = [id, now];
    const old = previous.get(id);
    if (attrs.description !== undefined) {
      params.push(attrs.description);
      sets.push(`description = $${params.length}`);
      if (old && (old.description ?? null) !== attrs.description) changed = true;
    }
    if (attrs.focus !== undefined) {
      params.push(attrs.focus?.x ?? null, attrs.focus?.y ?? null);
      sets.push(`focus_x = $${params.length - 1}, focus_y = $${params.length}`);
      const same = old && (attrs.focus ? old.focus_x !== null && Math.abs(old.focus_x - attrs.focus.x) < 1e-6 && Math.abs(old.focus_y! - attrs.focus.y) < 1e-6 : old.focus_x === null);
      if (old && !same) changed = true;
    }
    if (sets.length) await sql.query(`update media_attachments set ${sets.join(', ')}, updated_at = $2 where id = $1`, params);
  }
  if (!changed) return false;
  // Removed ones let go of the status (kept for the versions that show them); the rest in order.
  await sql.query(
    `update media_attachments set status_id = null, position = null, updated_at = $3 where status_id = $1 and not (id = any($2::bigint[]))`,
    [statusId, ids, now],
  );
  if (ids.length) {
    await sql.query(
      `update media_attachments m set status_id = $1, position = x.position, updated_at = $3
         from unnest($2::bigint[]) with ordinality as x(id, position) where m.id = x.id`,
      [statusId, ids, now],
    );
  }
  return true;
}

/** The poll of the status: applies the edit's poll (see the header), returns whether it changed significantly. */
export async function applyPollEdit(services: Services, em: EntityManager, statusId: string, accountId: string, edit: CheckedMediaEdit, now: Date): Promise<boolean> {
  const sql = sqlFromEm(em);
  const [current] = await sql.query<{ id: string; options: string[]; multiple: boolean; hide_totals: boolean; expires_at: string | null; created_at: string }>(
    `select id::text, options, multiple, hide_totals, expires_at, created_at from polls where status_id = $1 for update`,
    [statusId],
  );
  const next = edit.poll;
  if (!current && !next) return false;
  if (current && next) {
    const expiresAt = current.expires_at ? new Date(current.expires_at).getTime() : null;
    const duration = expiresAt === null ? null : Math.round((expiresAt - new Date(current.created_at).getTime()) / 1000);
    const sameEnd = expiresAt !== null && (duration === next.expiresIn || Math.abs(now.getTime() + next.expiresIn * 1000 - expiresAt) <= SAME_END_MS);
    const sameStructure = current.options.join('\u0000') === next.options.join('\u0000') && current.multiple === (next.multiple ?? false);
    if (sameStructure && sameEnd) {
      const hideTotals = next.hideTotals ?? false;
      if (hideTotals === current.hide_totals) return false;
      await sql.query(`update polls set hide_totals = $2, updated_at = $3 where id = $1`, [current.id, hideTotals, now]);
      return true;
    }
  }
  if (current) {
    // The old poll ends through its actor (its timers go), then goes with its votes.
    await deletePollOfStatus(services, em, statusId, 'client');
    await sql.query(`delete from polls where id = $1`, [current.id]);
  }
  if (next) {
    await createPoll(services, sql, {
      statusId,
      accountId,
      local: true,
      options: next.options,
      multiple: next.multiple ?? false,
      hideTotals: next.hideTotals ?? false,
      expiresAt: new Date(now.getTime() + next.expiresIn * 1000),
    }, 'client');
  }
  return true;
}
