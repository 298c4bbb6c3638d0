/**
 * Admin webhooks (Mastodon's Webhook model and Admin::WebhooksController), the use cases the admin
 * API (api/admin/webhooks.ts) and `roost webhooks …` (control/webhooks.ts) share: create, update,
 * enable, disable, rotate the secret, delete; each in one transaction with its audit-log row.
 * Deliveries are the outbox consumer's (effects/webhooks.ts); what failed is read here.
 *
 * Mastodon's validation: a URL (http or https with a host), at least one event, every event one of
 * EVENTS; the secret is 20 random bytes in hex, generated (again on rotate).
 */
import { randomBytes } from 'node:crypto';
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import { notFound, Validation } from '../lib/errors.ts';
import { logAdminAction } from './audit-log.ts';

/** Mastodon's Webhook::EVENTS. */
export const WEBHOOK_EVENTS = ['account.approved', 'account.created', 'account.updated', 'report.created', 'report.updated', 'status.created', 'status.updated'] as const;

export interface WebhookRow {
  id: string;
  url: string;
  events: string[];
  secret: string;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookInput {
  url?: string;
  events?: string[];
}

/** Who acts: the moderator's account, or null for the operator at the CLI. */
export type WebhookActor = string | null;

const COLUMNS = `id::text as id, url, events, secret, enabled, created_at, updated_at`;

const newSecret = () => randomBytes(20).toString('hex');

function validUrl(raw: string): boolean {
  try {
    const u = new URL(raw);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' && !u.username && !u.password;
  } catch {
    return false;
  }
}

/** Mastodon's validations (url presence and form, events presence and membership), as one 422. */
function validate(url: string | undefined, events: string[] | undefined, v = new Validation()): { url: string; events: string[] } {
  const u = (url ?? '').trim();
  if (u === '') v.add('url', 'ERR_BLANK', "can't be blank");
  else if (!validUrl(u)) v.add('url', 'ERR_INVALID', 'is invalid');
  const list = (events ?? []).map((e) => e.trim()).filter((e) => e !== '');
  if (list.length === 0) v.add('events', 'ERR_BLANK', "can't be blank");
  else if (list.some((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e))) v.add('events', 'ERR_INVALID', 'is invalid');
  v.throwIfInvalid();
  return { url: u, events: [...new Set(list)] };
}

export async function webhookById(sql: Sql, id: string): Promise<WebhookRow | null> {
  const [row] = await sql.query<WebhookRow>(`select ${COLUMNS} from webhooks where id = $1`, [id]);
  return row ?? null;
}

/** The webhook `id`, or null. */
export async function findWebhook(services: Services, id: string): Promise<WebhookRow | null> {
  return webhookById(services.db.sql, id);
}

export async function allWebhooks(services: Services): Promise<WebhookRow[]> {
  return services.db.sql.query<WebhookRow>(`select ${COLUMNS} from webhooks order by id`);
}

export async function createWebhook(services: Services, input: WebhookInput, actor: WebhookActor): Promise<WebhookRow> {
  const { url, events } = validate(input.url, input.events);
  return services.db.sql.transaction(async (tx) => {
    const now = services.clock.now();
    const [row] = await tx.query<WebhookRow>(
      `insert into webhooks (id, url, events, secret, enabled, created_at, updated_at) values ($1, $2, $3, $4, true, $5, $5) returning ${COLUMNS}`,
      [services.ids.next(), url, events, newSecret(), now],
    );
    await logAdminAction(services, tx, { actorAccountId: actor, action: 'create', targetType: 'Webhook', targetId: row!.id, humanIdentifier: url, detail: { events } });
    return row!;
  });
}

/** Changes the URL and/or the events (those given); 404 for an unknown id, 422 for invalid values. */
export async function updateWebhook(services: Services, id: string, input: WebhookInput, actor: WebhookActor): Promise<WebhookRow> {
  return services.db.sql.transaction(async (tx) => {
    const current = await tx.query<WebhookRow>(`select ${COLUMNS} from webhooks where id = $1 for update`, [id]);
    if (!current[0]) throw notFound();
    const { url, events } = validate(input.url ?? current[0].url, input.events ?? current[0].events);
    const [row] = await tx.query<WebhookRow>(`update webhooks set url = $2, events = $3, updated_at = $4 where id = $1 returning ${COLUMNS}`, [
      id,
      url,
      events,
      services.clock.now(),
    ]);
    await logAdminAction(services, tx, { actorAccountId: actor, action: 'update', targetType: 'Webhook', targetId: id, humanIdentifier: url, detail: { events } });
    return row!;
  });
}

async function change(services: Services, id: string, set: string, params: unknown[], action: string, actor: WebhookActor): Promise<WebhookRow> {
  return services.db.sql.transaction(async (tx) => {
    const [row] = await tx.query<WebhookRow>(`update webhooks set ${set}, updated_at = $2 where id = $1 returning ${COLUMNS}`, [id, services.clock.now(), ...params]);
    if (!row) throw notFound();
    await logAdminAction(services, tx, { actorAccountId: actor, action, targetType: 'Webhook', targetId: id, humanIdentifier: row.url });
    return row;
  });
}

export const enableWebhook = (services: Services, id: string, actor: WebhookActor) => change(services, id, 'enabled = true', [], 'enable', actor);
export const disableWebhook = (services: Services, id: string, actor: WebhookActor) => change(services, id, 'enabled = false', [], 'disable', actor);
export const rotateWebhookSecret = (services: Services, id: string, actor: WebhookActor) => change(services, id, 'secret = $3', [newSecret()], 'rotate_secret', actor);

export async function deleteWebhook(services: Services, id: string, actor: WebhookActor): Promise<WebhookRow> {
  return services.db.sql.transaction(async (tx) => {
    const [row] = await tx.query<WebhookRow>(`delete from webhooks where id = $1 returning ${COLUMNS}`, [id]);
    if (!row) throw notFound();
    await logAdminAction(services, tx, { actorAccountId: actor, action: 'destroy', targetType: 'Webhook', targetId: id, humanIdentifier: row.url });
    return row;
  });
}

export interface WebhookFailureRow {
  webhook_id: string;
  event_id: string;
  event: string;
  state: 'retrying' | 'failed' | 'pending';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * The deliveries not (yet) delivered, newest first: retrying (a next attempt is queued), failed
 * (given up), pending (not tried yet). `webhookId` null: every webhook's. At most `limit`.
 */
export async function webhookFailures(services: Services, webhookId: string | null, limit = 40): Promise<WebhookFailureRow[]> {
  return services.db.sql.query<WebhookFailureRow>(
    `select webhook_id::text as webhook_id, event_id::text as event_id, event, state, attempts, last_status, last_error, created_at, updated_at
       from webhook_deliveries
      where state <> 'delivered' and attempts > 0 and ($1::bigint is null or webhook_id = $1)
      order by updated_at desc, event_id desc limit $2`,
    [webhookId, limit],
  );
}
