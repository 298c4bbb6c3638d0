/**
 * Mastodon's ScheduledStatus entity (entities/ScheduledStatus.md): id, the time (milliseconds kept,
 * UTC), the parameters the status will be posted with, and the attachments it reserved. Pure.
 *
 * `params` is what POST /api/v1/statuses was given, as Mastodon keeps it: `scheduled_at` and
 * `idempotency` null (the status is scheduled once), `with_rate_limit` false. `in_reply_to_id`
 * and `media_ids` are strings, as Mastodon sends them; `application_id` is a JSON integer, as
 * Mastodon sends it (a bigint here, written with its exact digits by http/response.ts json()).
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
  /** Mastodon 4.5: the status it will quote, and who may quote it (kept only when given). */
  quoted_status_id?: string;
  quote_approval_policy?: string;
}

export interface ScheduledStatusRow {
  id: string;
  scheduledAt: Date;
  params: ScheduledStatusParams;
}

export interface MastodonScheduledStatus {
  id: string;
  scheduled_at: string;
  params: Omit<ScheduledStatusParams, 'application_id'> & { application_id: bigint | null };
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
      application_id: p.application_id == null ? null : BigInt(p.application_id),
      idempotency: null,
      with_rate_limit: p.with_rate_limit ?? false,
      ...(p.quoted_status_id ? { quoted_status_id: p.quoted_status_id } : {}),
      ...(p.quote_approval_policy ? { quote_approval_policy: p.quote_approval_policy } : {}),
    },
    media_attachments: media.map((m) => serializeMediaAttachment(m, filesBaseUrl)),
  };
}
