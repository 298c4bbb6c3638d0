/**
 * The notification policy and its requests (Mastodon 4.3, methods/notifications.md): change the
 * policy (PATCH /api/v2/notifications/policy, and the v1 booleans), accept requests (their
 * filtered notifications join the list, and their senders are never filtered again: Mastodon's
 * NotificationPermission) or dismiss them (their filtered notifications go). Each is one
 * transaction; accepting records `notifications.merged`, which streaming turns into Mastodon's
 * `notifications_merged` event. The policy itself is applied where notifications are made
 * (effects/notifications.ts).
 */
import type { Services } from '../context.ts';
import { notFound, Validation } from '../lib/errors.ts';
import { recordEvent } from './actor-store.ts';
import { DEFAULT_POLICY, POLICY_FIELDS, POLICY_VALUES } from './reads/notification-requests.ts';
import type { PolicyField, PolicyValue } from '../serializers/notification-request.ts';

/**
 * Sets the fields given (the others keep their value). A value outside accept / filter / drop is
 * a 422 and changes nothing.
 */
export async function updateNotificationPolicy(services: Services, accountId: string, changes: Partial<Record<PolicyField, string>>): Promise<void> {
  const v = new Validation();
  const set: Partial<Record<PolicyField, PolicyValue>> = {};
  for (const f of POLICY_FIELDS) {
    const value = changes[f];
    if (value === undefined) continue;
    if ((POLICY_VALUES as readonly string[]).includes(value)) set[f] = value as PolicyValue;
    else v.add(f, 'ERR_INCLUSION', 'is not included in the list');
  }
  v.throwIfInvalid();
  const fields = Object.keys(set) as PolicyField[];
  if (fields.length === 0) return;
  const now = services.clock.now();
  // Insert with the defaults for the fields not given, or update only those given.
  await services.db.sql.query(
    `insert into notification_policies (account_id, ${POLICY_FIELDS.join(', ')}, created_at, updated_at)
     values ($1, ${POLICY_FIELDS.map((_, i) => `$${i + 2}`).join(', ')}, $${POLICY_FIELDS.length + 2}, $${POLICY_FIELDS.length + 2})
     on conflict (account_id) do update set ${fields.map((f) => `${f} = excluded.${f}`).join(', ')}, updated_at = excluded.updated_at`,
    [accountId, ...POLICY_FIELDS.map((f) => set[f] ?? DEFAULT_POLICY[f]), now],
  );
}

/**
 * Accepts the recipient's requests `ids` (others' and unknown ones ignored): their senders'
 * filtered notifications join the list, the senders are accepted from now on, the requests go.
 * With `single`, a request that is not there is a 404. One statement, and the
 * `notifications.merged` fact in the same transaction when something was accepted.
 */
export async function acceptNotificationRequests(services: Services, recipientId: string, ids: readonly string[], single = false): Promise<void> {
  if (ids.length === 0) {
    if (single) throw notFound();
    return;
  }
  await services.db.sql.transaction(async (sql) => {
    const [row] = await sql.query<{ n: number }>(
      `with r as (
         delete from notification_requests where account_id = $1 and id = any($2::bigint[]) returning from_account_id
       ), p as (
         insert into notification_permissions (account_id, from_account_id, created_at) select $1, from_account_id, $3 from r
         on conflict do nothing
       ), u as (
         update notifications set filtered = false where account_id = $1 and filtered and from_account_id in (select from_account_id from r)
       )
       select count(*)::int as n from r`,
      [recipientId, ids, services.clock.now()],
    );
    if (!row || row.n === 0) {
      if (single) throw notFound();
      return;
    }
    await recordEvent(services, sql, { actorKind: 'account', actorId: recipientId, origin: 'client', event: { type: 'notifications.merged', accountId: recipientId } });
  });
}

/**
 * Dismisses the recipient's requests `ids` (others' and unknown ones ignored): the requests and
 * their senders' filtered notifications go. With `single`, a request that is not there is a 404.
 * One statement.
 */
export async function dismissNotificationRequests(services: Services, recipientId: string, ids: readonly string[], single = false): Promise<void> {
  if (ids.length === 0) {
    if (single) throw notFound();
    return;
  }
  const [row] = await services.db.sql.query<{ n: number }>(
    `with r as (
       delete from notification_requests where account_id = $1 and id = any($2::bigint[]) returning from_account_id
     ), d as (
       delete from notifications where account_id = $1 and filtered and from_account_id in (select from_account_id from r)
     )
     select count(*)::int as n from r`,
    [recipientId, ids],
  );
  if (single && (!row || row.n === 0)) throw notFound();
}
