/**
 * Admin webhooks (Mastodon's WebhookService and Webhooks::DeliveryWorker), a consumer of the
 * outbox. For each fact that is one of Mastodon's webhook events, the consumer renders the payload
 * once (`{event, created_at, object}`: views/webhook-objects.ts) and, in one transaction, writes a
 * `webhook_deliveries` row per enabled webhook that asked for the event, with one delivery job each.
 * The row's key (webhook, outbox fact) makes a repeated run of the consumer queue nothing twice.
 *
 * A delivery job POSTs the body through the bounded fetcher (lib/safe-fetch.ts: the address check,
 * a deadline, no redirects) with `X-Hub-Signature: sha256=<hex HMAC-SHA256 of the body with the
 * webhook's secret>`, and records the outcome on its row: delivered, or the attempt count, the
 * status and the error. A 2xx is done; a 4xx other than 401, 408 and 429 will not get better and
 * gives up at once (Mastodon's "unsalvageable" responses), and so does an address the fetcher
 * refuses (a private one, unless private addresses are allowed); anything else retries with Sidekiq's
 * backoff (attempts⁴ + 15 s + jitter) up to 16 times (about three days), as Mastodon's worker.
 * A row already delivered is never sent again (a job run twice after a crash). The lane's reads of
 * the rows before sending and its writes of the outcomes after are each one statement per turn of
 * the event loop for all the deliveries in flight (lib/per-turn.ts), not one per delivery.
 *
 * Facts and the webhook events they are:
 *   user.signed_up → account.created; account.approved, account.updated (local accounts);
 *   report.created, report.updated; status.created, status.updated (local statuses).
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Services } from '../context.ts';
import type { RoostEvent } from '../events/catalogue.ts';
import { enqueueMany, RescheduleJob, type JobHandler } from '../jobs/queue.ts';
import { perTurn } from '../lib/per-turn.ts';
import { safeFetch, UnsafeUrlError } from '../lib/safe-fetch.ts';
import { renderAdminAccountObject, renderAdminReportObject, renderStatusObject } from '../views/webhook-objects.ts';
import type { ConsumerHandler } from './registry.ts';

export const WEBHOOK_JOB = 'webhook.deliver';
export const WEBHOOK_QUEUE = 'webhooks';
/** Mastodon's Webhooks::DeliveryWorker: `retry: 16`. */
export const WEBHOOK_MAX_ATTEMPTS = 16;
const WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;

export interface WebhookJob {
  webhookId: string;
  eventId: string;
  body: string;
}

/** The webhook event a fact is, or null. */
export function webhookEventOf(event: RoostEvent): string | null {
  switch (event.type) {
    case 'user.signed_up':
      return 'account.created';
    case 'account.approved':
    case 'account.updated':
    case 'report.created':
    case 'report.updated':
    case 'status.created':
    case 'status.updated':
      return event.type;
    default:
      return null;
  }
}

/** `sha256=` + the hex HMAC-SHA256 of `body` keyed with `secret` (the X-Hub-Signature header). */
export function webhookSignature(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

async function objectOf(services: Services, event: RoostEvent): Promise<Record<string, unknown> | null> {
  switch (event.type) {
    case 'user.signed_up':
    case 'account.approved':
    case 'account.updated':
      return renderAdminAccountObject(services, event.accountId);
    case 'report.created':
    case 'report.updated':
      return renderAdminReportObject(services, event.reportId);
    case 'status.created':
    case 'status.updated':
      return renderStatusObject(services, event.statusId);
    default:
      return null;
  }
}

/** The consumer: one delivery row and job per (fact, enabled webhook that wants it). */
export function webhooksConsumer(services: Services): ConsumerHandler<'webhooks'> {
  return async (record) => {
    const name = webhookEventOf(record.event);
    if (!name) return;
    const hooks = await services.db.sql.query<{ id: string }>(`select id::text as id from webhooks where enabled and $1 = any(events) order by id`, [name]);
    if (hooks.length === 0) return;
    const object = await objectOf(services, record.event);
    if (!object) return;
    const now = services.clock.now();
    const body = JSON.stringify({ event: name, created_at: now.toISOString(), object });
    await services.db.sql.transaction(async (tx) => {
      const fresh = await tx.query<{ webhook_id: string }>(
        `insert into webhook_deliveries (event_id, webhook_id, event, created_at, updated_at)
         select $1, w, $2, $3, $3 from unnest($4::bigint[]) as w
         on conflict do nothing returning webhook_id::text as webhook_id`,
        [record.id, name, now, hooks.map((h) => h.id)],
      );
      await enqueueMany(
        tx,
        fresh.map((f) => ({
          kind: WEBHOOK_JOB,
          queue: WEBHOOK_QUEUE,
          payload: { webhookId: f.webhook_id, eventId: record.id, body } satisfies WebhookJob,
          maxAttempts: WEBHOOK_MAX_ATTEMPTS,
        })),
        { clock: services.clock },
      );
    });
  };
}

/** Sidekiq's retry delay after `attempts` failures: attempts⁴ + 15 s + up to 10·(attempts+1) s. */
export function webhookRetryDelayMs(attempts: number, random: () => number = Math.random): number {
  return (attempts ** 4 + 15 + Math.floor(random() * 10) * (attempts + 1)) * 1000;
}

/**
 * Keep-alive connections to the webhooks' receivers, one pair of agents per instance (a few
 * receivers take every delivery); their sockets still resolve through the fetcher's guarded
 * lookup, so the address check holds for each. Closed by closeWebhookConnections at shutdown.
 */
const agents = new WeakMap<Services, { http: http.Agent; https: https.Agent }>();

function agentFor(services: Services, url: URL): http.Agent {
  let pair = agents.get(services);
  if (!pair) {
    const opts = { keepAlive: true, maxSockets: 32, maxFreeSockets: 32, timeout: services.config.federation.deliveryTimeoutSeconds * 1000 };
    pair = { http: new http.Agent(opts), https: new https.Agent(opts) };
    agents.set(services, pair);
  }
  return url.protocol === 'https:' ? pair.https : pair.http;
}

/** Closes the instance's webhook connections (shutdown). */
export function closeWebhookConnections(services: Services): void {
  const pair = agents.get(services);
  if (!pair) return;
  pair.http.destroy();
  pair.https.destroy();
  agents.delete(services);
}

/** Mastodon's response_error_unsalvageable?: a 501, or a 4xx other than 401, 408 and 429. */
function unsalvageable(status: number): boolean {
  return status === 501 || (status >= 400 && status < 500 && ![401, 408, 429].includes(status));
}

interface Target {
  url: string;
  secret: string;
  state: string;
  attempts: number;
}

interface Outcome {
  webhookId: string;
  eventId: string;
  state: 'delivered' | 'retrying' | 'failed';
  attempts: number;
  status: number | null;
  error: string | null;
  at: Date;
}

/**
 * The lane's two statements, shared by the deliveries of one turn of the event loop (lib/per-turn.ts):
 * one read of the webhooks and delivery rows before sending, one write of the outcomes after.
 */
function laneStatements(services: Services) {
  const sql = services.db.sql;
  const lookup = perTurn<{ webhookId: string; eventId: string }, Target | null>(
    async (batch) => {
      const rows = await sql.query<Target & { webhook_id: string; event_id: string }>(
        `select d.webhook_id::text as webhook_id, d.event_id::text as event_id, w.url, w.secret, d.state, d.attempts
           from unnest($1::bigint[], $2::bigint[]) as k(webhook_id, event_id)
           join webhook_deliveries d on d.webhook_id = k.webhook_id and d.event_id = k.event_id
           join webhooks w on w.id = d.webhook_id`,
        [batch.map((c) => c.item.webhookId), batch.map((c) => c.item.eventId)],
      );
      const found = new Map(rows.map((r) => [`${r.webhook_id}/${r.event_id}`, r]));
      for (const c of batch) c.resolve(found.get(`${c.item.webhookId}/${c.item.eventId}`) ?? null);
    },
    { maxInFlight: 2 },
  );
  const record = perTurn<Outcome, void>(
    async (batch) => {
      const o = batch.map((c) => c.item);
      await sql.query(
        `update webhook_deliveries d set state = u.state, attempts = u.attempts, last_status = u.status, last_error = u.error, updated_at = u.at,
                delivered_at = case when u.state = 'delivered' then u.at else d.delivered_at end
           from unnest($1::bigint[], $2::bigint[], $3::text[], $4::int[], $5::int[], $6::text[], $7::timestamptz[]) as u(webhook_id, event_id, state, attempts, status, error, at)
          where d.webhook_id = u.webhook_id and d.event_id = u.event_id`,
        [o.map((x) => x.webhookId), o.map((x) => x.eventId), o.map((x) => x.state), o.map((x) => x.attempts), o.map((x) => x.status), o.map((x) => x.error), o.map((x) => x.at)],
      );
      for (const c of batch) c.resolve();
    },
    { maxInFlight: 2 },
  );
  return { lookup, record };
}

/** The WEBHOOK_JOB handler (registered by the composition root on the WEBHOOK_QUEUE lane). */
export function webhookJobHandler(services: Services): JobHandler {
  const log = services.log.child({ module: 'webhooks' });
  const { lookup, record } = laneStatements(services);
  return async (job: WebhookJob) => {
    const target = await lookup({ webhookId: job.webhookId, eventId: job.eventId });
    // The webhook was deleted since, or this delivery is settled (a repeated job): nothing to send.
    if (!target || target.state === 'delivered' || target.state === 'failed') return;
    let status = 0;
    let error: string | null = null;
    let refused = false;
    try {
      const url = new URL(target.url);
      const res = await safeFetch(url, {
        method: 'POST',
        body: Buffer.from(job.body),
        headers: { 'content-type': 'application/json', 'x-hub-signature': webhookSignature(target.secret, job.body) },
        allowPrivateAddresses: services.config.federation.allowPrivateAddresses,
        userAgent: `Roost/${services.version} (+${services.config.publicUrl})`,
        timeoutMs: services.config.federation.deliveryTimeoutSeconds * 1000,
        maxRedirects: 0,
        maxBytes: WEBHOOK_MAX_RESPONSE_BYTES,
        lookup: services.dnsLookup,
        network: services.network,
        agent: agentFor(services, url),
      });
      status = res.status;
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (e) {
      error = (e as Error).message || String(e);
      // An address the fetcher refuses (a private one, a bad scheme) will be refused again.
      refused = e instanceof UnsafeUrlError;
    }
    const now = services.clock.now();
    const attempts = target.attempts + 1;
    const state = error === null ? 'delivered' : refused || unsalvageable(status) || attempts >= WEBHOOK_MAX_ATTEMPTS ? 'failed' : 'retrying';
    await record({ webhookId: job.webhookId, eventId: job.eventId, state, attempts, status: status || null, error, at: now });
    if (state === 'retrying') {
      const wait = webhookRetryDelayMs(attempts);
      log.info({ webhookId: job.webhookId, eventId: job.eventId, attempts, error }, 'webhook delivery failed; it will retry');
      throw new RescheduleJob(new Date(now.getTime() + wait), job, `webhook answered ${error}; retry in ${wait} ms`);
    }
    if (state === 'failed') log.warn({ webhookId: job.webhookId, eventId: job.eventId, attempts, error }, 'webhook delivery given up');
  };
}
