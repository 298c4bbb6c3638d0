/**
 * An admin webhook as the API answers it: Mastodon's Webhook record (it has no REST entity; its
 * admin pages show these fields): id, url, events, enabled, secret, created_at, updated_at.
 * A delivery that did not go through (a Roost extension: GET /api/v1/admin/webhooks/:id/failures).
 */
import type { WebhookFailureRow, WebhookRow } from '../services/webhooks.ts';

export interface MastodonAdminWebhook {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret: string;
  created_at: string;
  updated_at: string;
}

export function serializeAdminWebhook(row: WebhookRow): MastodonAdminWebhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    secret: row.secret,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export function serializeWebhookFailure(row: WebhookFailureRow) {
  return {
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event: row.event,
    state: row.state,
    attempts: row.attempts,
    last_status: row.last_status,
    last_error: row.last_error,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}
