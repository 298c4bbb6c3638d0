/**
 * What a local account's notification policy holds back (Mastodon 4.3): its policy (its row, or
 * Mastodon's defaults), its notification requests (one per sender with filtered notifications:
 * the count of those, capped at 100, and the sender's last mentioning status) and the summary of
 * them. A request shows while its sender is not suspended and it still holds a notification.
 * Written by effects/notifications.ts (the policy applied when a notification is made) and
 * services/notification-requests.ts. One statement per call.
 */
import type { Services } from '../../context.ts';
import { isId, newestFirst, pageSql, type PageParams } from './page.ts';
import { visibleSql } from './statuses.ts';
import { POLICY_FIELDS, type NotificationRequestRow, type PolicyField, type PolicyRow, type PolicyValue } from '../../serializers/notification-request.ts';

export const POLICY_VALUES: readonly PolicyValue[] = ['accept', 'filter', 'drop'];
export { POLICY_FIELDS };

/** Mastodon 4.3's defaults (an account that never changed its policy). */
export const DEFAULT_POLICY: Readonly<Record<PolicyField, PolicyValue>> = {
  for_not_following: 'accept',
  for_not_followers: 'accept',
  for_new_accounts: 'accept',
  for_private_mentions: 'filter',
  for_limited_accounts: 'filter',
};

/** Requests and notifications counted at most (Mastodon's MAX_MEANINGFUL_COUNT). */
export const MAX_MEANINGFUL_COUNT = 100;

/** SQL: requests `r` of recipient `$1` that show, with their count `c.n` (from a lateral join). */
const REQUESTS_FROM = `notification_requests r
  join accounts fa on fa.id = r.from_account_id and fa.suspended_at is null
  cross join lateral (select count(*)::int as n from (
    select 1 from notifications n where n.account_id = r.account_id and n.from_account_id = r.from_account_id and n.filtered
     limit ${MAX_MEANINGFUL_COUNT}) x) c`;

/** The last status only while the recipient (`$1`) may still see it. */
const REQUEST_COLUMNS = `r.id::text, r.from_account_id::text, c.n, r.created_at, r.updated_at,
  (select s.id::text from statuses s where s.id = r.last_status_id and ${visibleSql('s', '$1::bigint')}) as last_status_id`;

interface RequestSqlRow {
  id: string;
  from_account_id: string;
  last_status_id: string | null;
  n: number;
  created_at: string | Date;
  updated_at: string | Date;
}

const requestOf = (r: RequestSqlRow): NotificationRequestRow => ({
  id: r.id,
  fromAccountId: r.from_account_id,
  lastStatusId: r.last_status_id,
  notificationsCount: Number(r.n),
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

/** The account's policy and its summary (pending requests, capped at 100, and their notifications). */
export async function notificationPolicy(services: Services, accountId: string): Promise<PolicyRow> {
  const [row] = await services.db.sql.query<Record<PolicyField, PolicyValue | null> & { requests: number; notifications: number }>(
    `select ${POLICY_FIELDS.map((f) => `(select p.${f} from notification_policies p where p.account_id = $1) as ${f}`).join(', ')},
            s.requests, s.notifications
       from (select count(*)::int as requests, coalesce(sum(n), 0)::int as notifications from (
               select c.n from ${REQUESTS_FROM} where r.account_id = $1 and c.n > 0 limit ${MAX_MEANINGFUL_COUNT}) q) s`,
    [accountId],
  );
  const values = { ...DEFAULT_POLICY };
  for (const f of POLICY_FIELDS) if (row?.[f]) values[f] = row[f]!;
  return { values, pendingRequestsCount: row?.requests ?? 0, pendingNotificationsCount: row?.notifications ?? 0 };
}

/** A page of the recipient's requests, newest first, by request id. */
export async function notificationRequestsPage(services: Services, recipientId: string, p: PageParams): Promise<NotificationRequestRow[]> {
  const page = pageSql('r.id', p, 2);
  const rows = await services.db.sql.query<RequestSqlRow>(
    `select ${REQUEST_COLUMNS} from ${REQUESTS_FROM} where r.account_id = $1 and c.n > 0${page.where} order by ${page.order} limit ${p.limit}`,
    [recipientId, ...page.params],
  );
  return newestFirst(rows, p).map(requestOf);
}

/** One of the recipient's requests, or null (another's, unknown, or holding nothing). */
export async function notificationRequest(services: Services, recipientId: string, id: string): Promise<NotificationRequestRow | null> {
  if (!isId(id)) return null;
  const [row] = await services.db.sql.query<RequestSqlRow>(
    `select ${REQUEST_COLUMNS} from ${REQUESTS_FROM} where r.account_id = $1 and r.id = $2 and c.n > 0`,
    [recipientId, id],
  );
  return row ? requestOf(row) : null;
}
