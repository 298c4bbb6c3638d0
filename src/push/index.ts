/**
 * Web Push (DESIGN.md "push/"): subscriptions (subscriptions.ts), payloads (payload.ts), VAPID
 * delivery and dead-endpoint cleanup (delivery.ts).
 *
 * The surface side of effects hands rendered notifications to `pushNotificationSink(services)`:
 * for every recipient's subscriptions, the alert for the notification's type must be on and the
 * policy must let the sender through (followed: the recipient follows the sender; follower: the
 * sender follows the recipient; none: nobody), then one PUSH_JOB per (notification, subscription)
 * is queued; the job encrypts and sends (delivery.ts). Three statements per call, whatever the
 * number of notifications: the subscriptions, the follows that policies need, the jobs.
 */
import type { Services } from '../context.ts';
import { enqueueMany, type EnqueueSpec } from '../jobs/queue.ts';
import { PUSH_JOB, PUSH_QUEUE, deliverPush, targetOf, type PushJob, type PushTarget } from './delivery.ts';
import type { PushableNotification } from './payload.ts';
import { toSubscription, type PushSubscriptionRow } from './subscriptions.ts';

export type { PushableNotification, WebPushPayload } from './payload.ts';
export { buildPushPayload } from './payload.ts';
export { PUSH_JOB, PUSH_QUEUE, closePushConnections, deliverPush, vapidCacheOf, type PushJob } from './delivery.ts';

export interface PushItem {
  /** The recipient's account (a local account with a user). */
  accountId: string;
  notification: PushableNotification;
}

/**
 * Whether `sub` takes a notification of `type` from `senderId`: its alert for the type is on and
 * its policy lets the sender through (`follows` holds "follower→followed" pairs).
 */
export function pushAllowed(sub: PushSubscriptionRow, recipientId: string, n: PushableNotification, follows: Set<string>): boolean {
  if ((sub.alerts as Record<string, boolean | null | undefined>)[n.type] !== true) return false;
  switch (sub.policy ?? 'all') {
    case 'all':
      return true;
    case 'none':
      return false;
    case 'followed':
      return follows.has(`${recipientId}>${n.account.id}`);
    case 'follower':
      return follows.has(`${n.account.id}>${recipientId}`);
    default:
      return false;
  }
}

/** The sink the integrator wires to rendered notifications. */
export function pushNotificationSink(services: Services): (items: PushItem[]) => Promise<void> {
  // `items` come rendered through the recipient's filters (notifications context): a `hide`
  // match never gets here; a `warn` is pushed, as Mastodon does, the client shows the warning.
  return async (items) => {
    if (items.length === 0) return;
    const recipients = [...new Set(items.map((i) => i.accountId))];
    const subRows = await services.db.sql.query<Record<string, unknown>>(
      `select s.id::text as id, s.access_token_id::text as access_token_id, s.user_id::text as user_id, s.endpoint,
         s.key_p256dh, s.key_auth, s.standard, s.alerts, s.policy, s.access_token_sealed, u.locale, u.account_id::text as account_id
       from web_push_subscriptions s
       join users u on u.id = s.user_id
       join oauth_access_tokens t on t.id = s.access_token_id
       where u.account_id = any($1::bigint[]) and t.revoked_at is null and (t.expires_at is null or t.expires_at > $2)`,
      [recipients, services.clock.now()],
    );
    if (subRows.length === 0) return;
    const subsByAccount = new Map<string, (PushSubscriptionRow & { target: PushTarget })[]>();
    for (const r of subRows) {
      const list = subsByAccount.get(r.account_id as string) ?? [];
      const sub = toSubscription(r as never);
      list.push({ ...sub, target: targetOf(sub, r) });
      subsByAccount.set(r.account_id as string, list);
    }
    // The follows the policies need, in either direction, in one statement.
    const needsFollows = [...subsByAccount.values()].some((l) => l.some((s) => s.policy === 'followed' || s.policy === 'follower'));
    const follows = new Set<string>();
    if (needsFollows) {
      const pairs = items.filter((i) => subsByAccount.has(i.accountId));
      const rows = await services.db.sql.query<{ a: string; b: string }>(
        `select f.account_id::text as a, f.target_account_id::text as b
           from follows f join unnest($1::bigint[], $2::bigint[]) as p(x, y)
             on (f.account_id = p.x and f.target_account_id = p.y) or (f.account_id = p.y and f.target_account_id = p.x)
          where f.state = 'accepted'`,
        [pairs.map((p) => p.accountId), pairs.map((p) => p.notification.account.id)],
      );
      for (const r of rows) follows.add(`${r.a}>${r.b}`);
    }
    const specs: EnqueueSpec[] = [];
    for (const item of items) {
      for (const sub of subsByAccount.get(item.accountId) ?? []) {
        if (!pushAllowed(sub, item.accountId, item.notification, follows)) continue;
        specs.push({ kind: PUSH_JOB, queue: PUSH_QUEUE, payload: { subscriptionId: sub.id, notification: item.notification, target: sub.target } satisfies PushJob });
      }
    }
    await enqueueMany(services.db.sql, specs, { clock: services.clock });
  };
}

/** For the composition root: the handler of PUSH_JOB. */
export function pushJobHandler(services: Services): (payload: unknown) => Promise<void> {
  return (payload) => deliverPush(services, payload as PushJob);
}
