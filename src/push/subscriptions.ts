/**
 * Web Push subscriptions (Mastodon's Web::PushSubscription): one per access token, created,
 * read, updated (its data only) and deleted through /api/v1/push/subscription.
 *
 * Validation as Mastodon 4.3+ does it: the endpoint must be an http(s) URL with a host, p256dh a
 * base64(url) uncompressed P-256 public point, auth base64(url) of at least 16 bytes (what
 * RFC 8291 and web-push need), and, beyond Mastodon, a policy outside all / followed / follower /
 * none is refused rather than stored to silently mean "all".
 */
import { ECDH } from 'node:crypto';
import type { Services } from '../context.ts';
import { RoostError, Validation } from '../lib/errors.ts';
import { sealToken } from './seal.ts';

/** The alert types a subscription may name (Mastodon's Notification::TYPES that push knows). */
export const ALERT_TYPES = [
  'mention',
  'quote',
  'status',
  'reblog',
  'follow',
  'follow_request',
  'favourite',
  'poll',
  'update',
  'quoted_update',
  'admin.sign_up',
  'admin.report',
] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

export const PUSH_POLICIES = ['all', 'followed', 'follower', 'none'] as const;
export type PushPolicy = (typeof PUSH_POLICIES)[number];

/** Alerts as given, each cast to a boolean (null: given blank, as Rails casts ''). */
export type Alerts = Partial<Record<AlertType, boolean | null>>;

export interface PushSubscriptionRow {
  id: string;
  accessTokenId: string;
  userId: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  standard: boolean;
  alerts: Alerts;
  /** null: not given ("all"). */
  policy: PushPolicy | null;
}

export interface PushData {
  alerts: Alerts;
  /** As given (validated here); undefined: not given. */
  policy?: string;
}

export interface NewPushSubscription {
  /** The bearer token the subscription was made with (sealed before it is stored). */
  accessToken: string;
  endpoint?: string;
  p256dh?: string;
  auth?: string;
  standard: boolean;
  data: PushData;
}

const B64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

function decodeB64(value: string): Buffer | null {
  if (!B64.test(value)) return null;
  return Buffer.from(value.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''), 'base64url');
}

/** An http(s) URL with a host (Mastodon's UrlValidator). */
export function validEndpoint(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '' && !url.username && !url.password;
}

export function validP256dh(value: string): boolean {
  const raw = decodeB64(value);
  if (!raw || raw.length !== 65 || raw[0] !== 0x04) return false;
  try {
    ECDH.convertKey(raw, 'prime256v1');
    return true;
  } catch {
    return false;
  }
}

export function validAuth(value: string): boolean {
  const raw = decodeB64(value);
  return raw !== null && raw.length >= 16;
}

function checkPolicy(v: Validation, policy: string | undefined): PushPolicy | null {
  if (policy === undefined) return null;
  if ((PUSH_POLICIES as readonly string[]).includes(policy)) return policy as PushPolicy;
  v.add('policy', 'ERR_INCLUSION', 'is not included in the list');
  return null;
}

interface Row {
  id: string;
  access_token_id: string;
  user_id: string;
  endpoint: string;
  key_p256dh: string;
  key_auth: string;
  standard: boolean;
  alerts: Alerts | string;
  policy: string | null;
}

export const SUBSCRIPTION_COLUMNS = `id::text as id, access_token_id::text as access_token_id, user_id::text as user_id, endpoint,
  key_p256dh, key_auth, standard, alerts, policy`;

export function toSubscription(r: Row): PushSubscriptionRow {
  return {
    id: r.id,
    accessTokenId: r.access_token_id,
    userId: r.user_id,
    endpoint: r.endpoint,
    p256dh: r.key_p256dh,
    auth: r.key_auth,
    standard: r.standard,
    alerts: typeof r.alerts === 'string' ? JSON.parse(r.alerts) : r.alerts,
    policy: r.policy as PushPolicy | null,
  };
}

/** POST: replaces the token's subscription (Mastodon deletes the old one first). */
export async function createPushSubscription(
  services: Services,
  owner: { tokenId: string; userId: string },
  input: NewPushSubscription,
): Promise<PushSubscriptionRow> {
  const v = new Validation();
  if (!input.endpoint) v.add('endpoint', 'ERR_BLANK', "can't be blank");
  else if (!validEndpoint(input.endpoint)) v.add('endpoint', 'ERR_INVALID', 'is invalid');
  if (!input.p256dh) v.add('key_p256dh', 'ERR_BLANK', "can't be blank");
  else if (!validP256dh(input.p256dh)) v.add('key_p256dh', 'ERR_INVALID', 'is invalid');
  if (!input.auth) v.add('key_auth', 'ERR_BLANK', "can't be blank");
  else if (!validAuth(input.auth)) v.add('key_auth', 'ERR_INVALID', 'is invalid');
  const policy = checkPolicy(v, input.data.policy);
  v.throwIfInvalid();
  const now = services.clock.now();
  const id = services.ids.next();
  return services.db.sql.transaction(async (tx) => {
    await tx.query('delete from web_push_subscriptions where access_token_id = $1', [owner.tokenId]);
    const rows = await tx.query<Row>(
      `insert into web_push_subscriptions (id, access_token_id, user_id, endpoint, key_p256dh, key_auth, access_token_sealed, standard, alerts, policy, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $11) returning ${SUBSCRIPTION_COLUMNS}`,
      [id, owner.tokenId, owner.userId, input.endpoint, input.p256dh, input.auth, sealToken(services, input.accessToken), input.standard, JSON.stringify(input.data.alerts), policy, now],
    );
    return toSubscription(rows[0]!);
  });
}

export async function pushSubscriptionOf(services: Services, tokenId: string): Promise<PushSubscriptionRow | null> {
  const rows = await services.db.sql.query<Row>(`select ${SUBSCRIPTION_COLUMNS} from web_push_subscriptions where access_token_id = $1`, [tokenId]);
  return rows[0] ? toSubscription(rows[0]) : null;
}

/** GET / PUT without a subscription for the token: 404, as Mastodon. */
export async function requirePushSubscription(services: Services, tokenId: string): Promise<PushSubscriptionRow> {
  const sub = await pushSubscriptionOf(services, tokenId);
  if (!sub) throw new RoostError(404, 'Record not found');
  return sub;
}

/** PUT: replaces the data (alerts and policy) wholly, as Mastodon's update!(data: data_params). */
export async function updatePushSubscription(services: Services, tokenId: string, data: PushData): Promise<PushSubscriptionRow> {
  const v = new Validation();
  const policy = checkPolicy(v, data.policy);
  await requirePushSubscription(services, tokenId);
  v.throwIfInvalid();
  const rows = await services.db.sql.query<Row>(
    `update web_push_subscriptions set alerts = $2::jsonb, policy = $3, updated_at = $4 where access_token_id = $1 returning ${SUBSCRIPTION_COLUMNS}`,
    [tokenId, JSON.stringify(data.alerts), policy, services.clock.now()],
  );
  if (!rows[0]) throw new RoostError(404, 'Record not found');
  return toSubscription(rows[0]);
}

/** DELETE: 200 {} whether there was one or not (Mastodon's destroy). */
export async function deletePushSubscription(services: Services, tokenId: string): Promise<void> {
  await services.db.sql.query('delete from web_push_subscriptions where access_token_id = $1', [tokenId]);
}

/** A dead endpoint (404/410 from the push service): its subscription goes. */
export async function deletePushSubscriptionById(services: Services, id: string): Promise<void> {
  await services.db.sql.query('delete from web_push_subscriptions where id = $1', [id]);
}
