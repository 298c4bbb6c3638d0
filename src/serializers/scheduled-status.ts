/**
 * Mastodon's ScheduledStatus entity (entities/ScheduledStatus.md): id, the time (milliseconds kept,
 * UTC), the parameters the status will be posted with, and the attachments it reserved. Pure.
 *
 * `params` is what POST /api/v1/statuses was given, as Mastodon keeps it: `scheduled_at` and
 * `idempotency` null (the status is scheduled once), `with_rate_limit` false. Ids in it
 * (`in_reply_to_id`, `application_id`, `media_ids`) are strings: Roost's ids are 64-bit
 * snowflakes, which a JSON number would round in JavaScript clients (Mastodon's docs type the
 * first two as integers).
 */
import { serializeMediaAttachment, type MastodonMediaAttachment, type MediaAttachmentRow } from './media-attachment.ts';

export interface ScheduledStatusPollParams {
  options: string[];
  expires_in: number | null;
  multiple?: boolean;
  hide_totals?: boolean;
}

export interface ScheduledStatusParams {
  text: string | null;
  poll: ScheduledStatusPollParams | null;
  media_ids: string[] | null;
  sensitive: boolean | null;
  spoiler_text: string | null;
  visibility: string | null;
  scheduled_at: null;
  in_reply_to_id: string | null;
  language: string | null;
  application_id: string | null;
  idempotency: null;
  with_rate_limit: boolean;
}

export interface ScheduledStatusRow {
  id: string;
  scheduledAt: Date;
  params: ScheduledStatusParams;
}

export interface MastodonScheduledStatus {
  id: string;
  scheduled_at: string;
  params: ScheduledStatusParams;
  media_attachments: MastodonMediaAttachment[];
}

export function serializeScheduledStatus(row: ScheduledStatusRow, media: readonly MediaAttachmentRow[], filesBaseUrl: string): MastodonScheduledStatus {
  const p = row.params;
  return {
    id: row.id,
    scheduled_at: row.scheduledAt.toISOString(),
    params: {
      text: p.text ?? null,
      poll: p.poll ?? null,
      media_ids: p.media_ids ?? null,
      sensitive: p.sensitive ?? null,
      spoiler_text: p.spoiler_text ?? null,
      visibility: p.visibility ?? null,
      scheduled_at: null,
      in_reply_to_id: p.in_reply_to_id ?? null,
      language: p.language ?? null,
      application_id: p.application_id ?? null,
      idempotency: null,
      with_rate_limit: p.with_rate_limit ?? false,
    },
    media_attachments: media.map((m) => serializeMediaAttachment(m, filesBaseUrl)),
  };
}
