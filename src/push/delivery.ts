/**
 * Web Push delivery: one durable job (PUSH_JOB, queue PUSH_QUEUE) per (notification,
 * subscription). The job carries the subscription as the sink read it (a retry reads it again:
 * gone, or its token revoked, means nothing to do), builds Mastodon's payload,
 * encrypts it with web-push (aes128gcm for `standard` subscriptions, the legacy aesgcm otherwise,
 * as Mastodon 4.4 does) and POSTs it through the one bounded fetcher (src/lib/safe-fetch.ts: no
 * redirects, private addresses refused unless allowed), with TTL (48 h) and Urgency (normal)
 * headers and a VAPID Authorization.
 *
 * Outcomes: 2xx delivered; 404 / 410 (RFC 8030: the subscription expired or is gone) delete the
 * subscription; 408, 429, 5xx and network failures are retried with exponential backoff, no
 * sooner than a Retry-After asks (seconds or an HTTP date), at most PUSH_MAX_ROUNDS rounds; any
 * other 4xx is given up (a payload or VAPID problem that a retry would not fix).
 *
 * VAPID: the signed JWT is cached per push-service origin and reused until VAPID_REUSE_MARGIN_S
 * before it expires (VAPID_TTL_S after signing): repeated pushes to one service do not re-sign.
 */
import http from 'node:http';
import https from 'node:https';
import webpush from 'web-push';
import type { Services } from '../context.ts';
import { RescheduleJob, exponentialBackoff } from '../jobs/queue.ts';
import { safeFetch } from '../lib/safe-fetch.ts';
import { retryAfterMs } from '../federation/delivery.ts';
import { buildPushPayload, type PushableNotification } from './payload.ts';
import { deletePushSubscriptionById, toSubscription, type PushSubscriptionRow } from './subscriptions.ts';
import { openToken } from './seal.ts';

export const PUSH_JOB = 'push.deliver';
export const PUSH_QUEUE = 'push';
/** Mastodon's TTL: 48 hours. */
export const PUSH_TTL_S = 48 * 3600;
export const PUSH_URGENCY = 'normal';
export const PUSH_MAX_ROUNDS = 8;
export const PUSH_TIMEOUT_MS = 10_000;
/** Retry-After is honoured up to a day; longer asks wait a day. */
const MAX_RETRY_AFTER_MS = 24 * 3600_000;
export const VAPID_TTL_S = 12 * 3600;
export const VAPID_REUSE_MARGIN_S = 3600;

const backoff = exponentialBackoff({ baseMs: 2_000, factor: 3, maxMs: 3600_000 });

/** What a push needs of its subscription, read by the sink when it queues the job. */
export interface PushTarget {
  endpoint: string;
  p256dh: string;
  auth: string;
  standard: boolean;
  /** The access token, sealed (seal.ts). */
  sealed: string;
  locale: string | null;
}

export interface PushJob {
  subscriptionId: string;
  notification: PushableNotification;
  /**
   * The subscription as the sink read it (in the same statement that checked its alerts, policy
   * and token): the first attempt sends without reading it again, so a push costs the queue's own
   * statements only. A retry reads the subscription again: one deleted (404/410, unsubscribed,
   * token revoked) in between is not pushed to.
   */
  target?: PushTarget;
  /** Rounds already tried (0 on the first). */
  round?: number;
}

// --- VAPID ----------------------------------------------------------------------------------

export interface VapidCache {
  /** origin|encoding → Authorization (and legacy Crypto-Key) headers and when they expire (s). */
  entries: Map<string, { headers: Record<string, string>; expiresAt: number }>;
  /** JWTs signed (each a cache miss); the bench reads it. */
  signs: number;
  hits: number;
  /** The bench turns it off to show what caching saves. */
  enabled: boolean;
}

const caches = new WeakMap<Services, VapidCache>();

export function vapidCacheOf(services: Services): VapidCache {
  let c = caches.get(services);
  if (!c) {
    c = { entries: new Map(), signs: 0, hits: 0, enabled: true };
    caches.set(services, c);
  }
  return c;
}

/** Mastodon's VAPID subject: the contact e-mail; else the instance's https URL; else a mailto at its host. */
export function vapidSubject(services: Services): string {
  const { contactEmail } = services.config.instance;
  if (contactEmail) return `mailto:${contactEmail}`;
  const pub = new URL(services.config.publicUrl);
  return pub.protocol === 'https:' ? pub.origin : `mailto:admin@${pub.hostname}`;
}

type Encoding = 'aes128gcm' | 'aesgcm';

export function vapidHeaders(services: Services, endpoint: URL, encoding: Encoding): Record<string, string> {
  const cache = vapidCacheOf(services);
  const nowS = Math.floor(services.clock.now().getTime() / 1000);
  const key = `${endpoint.origin}|${encoding}`;
  const hit = cache.enabled ? cache.entries.get(key) : undefined;
  if (hit && hit.expiresAt - VAPID_REUSE_MARGIN_S > nowS) {
    cache.hits++;
    return hit.headers;
  }
  const expiresAt = nowS + VAPID_TTL_S;
  const headers = webpush.getVapidHeaders(
    endpoint.origin,
    vapidSubject(services),
    services.secrets.vapidPublicKey,
    services.secrets.vapidPrivateKey,
    encoding,
    expiresAt,
  ) as Record<string, string>;
  cache.signs++;
  if (cache.enabled) {
    // Bounded: an instance talks to a handful of push services; a flood of origins starts over.
    if (cache.entries.size >= 1000) cache.entries.clear();
    cache.entries.set(key, { headers, expiresAt });
  }
  return headers;
}

// --- connections ----------------------------------------------------------------------------

/**
 * Keep-alive agents, one pair per instance: an instance pushes to a handful of push services
 * (FCM, Mozilla, Apple, a few relays), so reusing their connections saves a TCP (and TLS)
 * handshake per push, as Mastodon's per-origin request pool does. Sockets still connect through
 * safe-fetch's guarded lookup.
 */
const agents = new WeakMap<Services, { http: http.Agent; https: https.Agent }>();

function agentFor(services: Services, url: URL): http.Agent {
  let pair = agents.get(services);
  if (!pair) {
    const opts = { keepAlive: true, maxSockets: 64, maxFreeSockets: 64, timeout: PUSH_TIMEOUT_MS };
    pair = { http: new http.Agent(opts), https: new https.Agent(opts) };
    agents.set(services, pair);
  }
  return url.protocol === 'https:' ? pair.https : pair.http;
}

/** Closes the instance's push connections (shutdown). */
export function closePushConnections(services: Services): void {
  const pair = agents.get(services);
  if (!pair) return;
  pair.http.destroy();
  pair.https.destroy();
  agents.delete(services);
}

// --- the job --------------------------------------------------------------------------------

interface Target extends PushTarget {
  id: string;
  tokenLive: boolean;
}

async function loadTarget(services: Services, id: string): Promise<Target | null> {
  const rows = await services.db.sql.query<Record<string, unknown>>(
    `select s.id::text as id, s.access_token_id::text as access_token_id, s.user_id::text as user_id, s.endpoint,
       s.key_p256dh, s.key_auth, s.standard, s.alerts, s.policy,
       s.access_token_sealed, u.locale,
       (t.revoked_at is null and (t.expires_at is null or t.expires_at > $2)) as token_live
     from web_push_subscriptions s
     join oauth_access_tokens t on t.id = s.access_token_id
     join users u on u.id = s.user_id
     where s.id = $1`,
    [id, services.clock.now()],
  );
  const r = rows[0];
  if (!r) return null;
  const sub = toSubscription(r as never);
  return { ...targetOf(sub, r), id: sub.id, tokenLive: Boolean(r.token_live) };
}

/** The PushTarget of a subscription row read with its sealed token and its user's locale. */
export function targetOf(sub: PushSubscriptionRow, r: Record<string, unknown>): PushTarget {
  return {
    endpoint: sub.endpoint,
    p256dh: sub.p256dh,
    auth: sub.auth,
    standard: sub.standard,
    sealed: r.access_token_sealed as string,
    locale: (r.locale as string | null) ?? null,
  };
}

/** The request web-push would send, without its own VAPID signing (ours is cached). */
export function encryptedRequest(
  services: Services,
  sub: { endpoint: string; p256dh: string; auth: string; standard: boolean },
  payload: string,
): { endpoint: URL; headers: Record<string, string>; body: Buffer } {
  const encoding: Encoding = sub.standard ? 'aes128gcm' : 'aesgcm';
  const details = webpush.generateRequestDetails({ endpoint: sub.endpoint, keys: { p256dh: sub.p256dh, auth: sub.auth } }, payload, {
    vapidDetails: null as never,
    TTL: PUSH_TTL_S,
    urgency: PUSH_URGENCY,
    contentEncoding: encoding,
  });
  const endpoint = new URL(sub.endpoint);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(details.headers)) headers[k.toLowerCase()] = String(v);
  const vapid = vapidHeaders(services, endpoint, encoding);
  headers.authorization = vapid.Authorization!;
  if (vapid['Crypto-Key']) headers['crypto-key'] = headers['crypto-key'] ? `${headers['crypto-key']};${vapid['Crypto-Key']}` : vapid['Crypto-Key'];
  return { endpoint, headers, body: details.body as Buffer };
}

const logs = new WeakMap<Services, Services['log']>();
function logOf(services: Services): Services['log'] {
  let log = logs.get(services);
  if (!log) logs.set(services, (log = services.log.child({ module: 'push' })));
  return log;
}

/** The PUSH_JOB handler (registered by the composition root). */
export async function deliverPush(services: Services, job: PushJob): Promise<void> {
  const log = logOf(services);
  const target: Target | null =
    job.target && !job.round ? { id: job.subscriptionId, ...job.target, tokenLive: true } : await loadTarget(services, job.subscriptionId);
  // Unsubscribed, token revoked or expired since it was queued: nothing to send.
  if (!target || !target.tokenLive) return;
  const token = openToken(services, target.sealed);
  if (token === null) return void log.warn({ subscriptionId: target.id }, 'push subscription token cannot be opened; skipped');
  const payload = JSON.stringify(buildPushPayload(job.notification, token, target.locale));
  const req = encryptedRequest(services, target, payload);
  const round = (job.round ?? 0) + 1;
  const now = services.clock.now().getTime();
  let status: number;
  let retryAfter: string | null = null;
  try {
    const res = await safeFetch(req.endpoint, {
      method: 'POST',
      body: req.body,
      headers: req.headers,
      allowPrivateAddresses: services.config.federation.allowPrivateAddresses,
      userAgent: `Roost/${services.version} (+${services.config.publicUrl})`,
      timeoutMs: PUSH_TIMEOUT_MS,
      maxRedirects: 0,
      maxBytes: 64 * 1024,
      lookup: services.dnsLookup,
      network: services.network,
      agent: agentFor(services, req.endpoint),
    });
    status = res.status;
    retryAfter = res.headers.get('retry-after');
  } catch (e) {
    status = 0;
    log.info({ subscriptionId: target.id, err: (e as Error).message, round }, 'push failed');
  }
  if (status >= 200 && status < 300) return;
  if (status === 404 || status === 410) {
    await deletePushSubscriptionById(services, target.id);
    log.info({ subscriptionId: target.id, status }, 'push endpoint gone: subscription removed');
    return;
  }
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
    log.warn({ subscriptionId: target.id, status }, 'push refused by the push service; given up');
    return;
  }
  if (round >= PUSH_MAX_ROUNDS) {
    log.warn({ subscriptionId: target.id, status, round }, 'push retries exhausted; given up');
    return;
  }
  const asked = retryAfterMs(retryAfter, now);
  const waitMs = asked !== null ? Math.min(asked, MAX_RETRY_AFTER_MS) : backoff(round, undefined as never);
  throw new RescheduleJob(new Date(now + waitMs), { ...job, round } satisfies PushJob, `push answered ${status || 'nothing'}; retry in ${waitMs} ms`);
}
