/**
 * A local account's notifications (GET /api/v1/notifications, /api/v2/notifications): pages of
 * rows, newest first, by id cursor; groups of them (Mastodon's NotificationGroup); the unread count
 * after the `notifications` marker. A notification shows while the account that caused it is not
 * suspended and its status (if it has one) is still there and visible to the recipient; the lists,
 * counts and groups leave out what the recipient's policy holds back (`filtered`, see
 * reads/notification-requests.ts) unless asked for, as Mastodon.
 * Written by effects/notifications.ts. One statement per call.
 */
import type { Services } from '../../context.ts';
import type { NotificationGroupRow, NotificationRow, SeveranceEventRow } from '../../serializers/notification.ts';
import type { ReportRow } from '../../serializers/report.ts';
import { visibleSql } from './statuses.ts';
import { isId, newestFirst, pageSql, type PageParams } from './page.ts';

/** types[] / exclude_types[] / account_id / include_filtered, as the list and the unread count take them. */
export interface NotificationFilter {
  types: string[];
  excludeTypes: string[];
  accountId: string | null;
  /**
   * Notifications the policy holds back are left out unless asked for, or unless the list is of
   * one account's (Mastodon's `browserable`: a request's screen lists its sender's).
   */
  includeFiltered?: boolean;
}

/** How many notifications a grouped page looks through at most (the nearest to its cursor). */
export const GROUPING_WINDOW = 2_000;
/** Sample accounts per group (Mastodon's SAMPLE_ACCOUNTS_SIZE). */
export const SAMPLE_ACCOUNTS = 8;

const COLUMNS = `n.id::text, n.account_id::text, n.from_account_id::text, n.type, n.status_id::text, n.report_id::text, n.relationship_severance_event_id::text as severance_event_id, n.group_key, n.created_at`;

interface SqlRow {
  id: string;
  account_id: string;
  from_account_id: string;
  type: string;
  status_id: string | null;
  report_id: string | null;
  severance_event_id: string | null;
  group_key: string;
  created_at: string | Date;
}

const rowOf = (r: SqlRow): NotificationRow => ({
  id: r.id,
  accountId: r.account_id,
  fromAccountId: r.from_account_id,
  type: r.type,
  statusId: r.status_id,
  reportId: r.report_id,
  severanceEventId: r.severance_event_id,
  groupKey: r.group_key,
  createdAt: new Date(r.created_at),
});

/**
 * SQL: the notification `n` shows to its recipient `$1` (the lists and counts also leave out what
 * the policy holds back: `filterSql`).
 */
const shownSql = `n.account_id = $1
  and exists (select 1 from accounts fa where fa.id = n.from_account_id and fa.suspended_at is null)
  and (n.status_id is null or exists (select 1 from statuses s where s.id = n.status_id and ${visibleSql('s', '$1::bigint')}))`;

/** SQL for the filter, its parameters numbered from `first`. */
function filterSql(f: NotificationFilter, first: number): { where: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (f.types.length) where.push(`n.type = any($${first + params.push(f.types) - 1}::text[])`);
  if (f.excludeTypes.length) where.push(`n.type <> all($${first + params.push(f.excludeTypes) - 1}::text[])`);
  if (f.accountId) where.push(`n.from_account_id = $${first + params.push(f.accountId) - 1}`);
  if (!f.includeFiltered && !f.accountId) where.push('not n.filtered');
  return { where: where.map((w) => ` and ${w}`).join(''), params };
}

/** A page of the recipient's notifications, newest first. */
export async function notificationsPage(services: Services, recipientId: string, p: PageParams, f: NotificationFilter): Promise<NotificationRow[]> {
  const filter = filterSql(f, 2);
  const page = pageSql('n.id', p, 2 + filter.params.length);
  const rows = await services.db.sql.query<SqlRow>(
    `select ${COLUMNS} from notifications n where ${shownSql}${filter.where}${page.where} order by ${page.order} limit ${p.limit}`,
    [recipientId, ...filter.params, ...page.params],
  );
  return newestFirst(rows, p).map(rowOf);
}

/** The recipient's notifications among `ids`, in the order given (others', unknown and hidden ones left out). */
export async function notificationRows(services: Services, recipientId: string, ids: readonly string[]): Promise<NotificationRow[]> {
  const wanted = [...new Set(ids)].filter(isId);
  if (wanted.length === 0) return [];
  const rows = await services.db.sql.query<SqlRow>(
    `select ${COLUMNS} from notifications n where ${shownSql} and n.id = any($2::bigint[])`,
    [recipientId, wanted],
  );
  const byId = new Map(rows.map((r) => [r.id, rowOf(r)]));
  return wanted.flatMap((id) => byId.get(id) ?? []);
}

/** The reports `ids` (for admin.report notifications): one statement. */
export async function reportRows(services: Services, ids: readonly string[]): Promise<Map<string, ReportRow>> {
  const wanted = [...new Set(ids)].filter(isId);
  const out = new Map<string, ReportRow>();
  if (wanted.length === 0) return out;
  const rows = await services.db.sql.query<Record<string, unknown>>(
    `select id::text, account_id::text, target_account_id::text, status_ids::text[], rule_ids::text[], comment, category, forwarded,
            action_taken_at, created_at from reports where id = any($1::bigint[])`,
    [wanted],
  );
  for (const r of rows) out.set(r.id as string, reportFromRow(r));
  return out;
}

/**
 * The relationship severance events `ids` as `recipientId` saw them (its own counts), for
 * severed_relationships notifications: one statement, none when there are none.
 */
export async function severanceEventRows(services: Services, recipientId: string, ids: readonly string[]): Promise<Map<string, SeveranceEventRow>> {
  const wanted = [...new Set(ids)].filter(isId);
  const out = new Map<string, SeveranceEventRow>();
  if (wanted.length === 0) return out;
  const rows = await services.db.sql.query<{
    id: string; type: string; purged: boolean; target_name: string; followers_count: number; following_count: number; created_at: string | Date;
  }>(
    `select e.id::text, e.type, e.purged, e.target_name, a.followers_count, a.following_count, e.created_at
       from relationship_severance_events e
       join account_relationship_severance_events a on a.relationship_severance_event_id = e.id and a.account_id = $1
      where e.id = any($2::bigint[])`,
    [recipientId, wanted],
  );
  for (const r of rows) {
    out.set(r.id, {
      id: r.id, type: r.type, purged: r.purged, targetName: r.target_name,
      followersCount: Number(r.followers_count), followingCount: Number(r.following_count), createdAt: new Date(r.created_at),
    });
  }
  return out;
}

export function reportFromRow(r: Record<string, unknown>): ReportRow {
  return {
    id: r.id as string,
    accountId: r.account_id as string,
    targetAccountId: r.target_account_id as string,
    statusIds: (r.status_ids as string[] | null) ?? [],
    ruleIds: (r.rule_ids as string[] | null) ?? null,
    comment: r.comment as string,
    category: r.category as string,
    forwarded: r.forwarded as boolean,
    actionTakenAt: r.action_taken_at ? new Date(r.action_taken_at as string) : null,
    createdAt: new Date(r.created_at as string),
  };
}

/** How many notifications came after the recipient's `notifications` marker (at most `limit`). */
export async function unreadNotificationsCount(services: Services, recipientId: string, limit: number, f: NotificationFilter): Promise<number> {
  const filter = filterSql(f, 2);
  const [row] = await services.db.sql.query<{ n: number }>(
    `select count(*)::int as n from (
       select 1 from notifications n
        where ${shownSql}${filter.where}
          and n.id > coalesce((select m.last_read_id from markers m join users u on u.id = m.user_id
                                where u.account_id = $1 and m.timeline = 'notifications'), 0)
        limit ${limit}) x`,
    [recipientId, ...filter.params],
  );
  return row?.n ?? 0;
}

/** As unreadNotificationsCount, counting groups (`groupedTypes` grouped, the others one each). */
export async function unreadGroupsCount(services: Services, recipientId: string, limit: number, f: NotificationFilter, groupedTypes: string[]): Promise<number> {
  const filter = filterSql(f, 3);
  const [row] = await services.db.sql.query<{ n: number }>(
    `select count(distinct gk)::int as n from (
       select case when n.type = any($2::text[]) then n.group_key else 'ungrouped-' || n.id::text end as gk from notifications n
        where ${shownSql}${filter.where}
          and n.id > coalesce((select m.last_read_id from markers m join users u on u.id = m.user_id
                                where u.account_id = $1 and m.timeline = 'notifications'), 0)
        order by n.id desc limit ${limit}) x`,
    [recipientId, groupedTypes, ...filter.params],
  );
  return row?.n ?? 0;
}

interface GroupSqlRow {
  gk: string;
  notifications_count: number;
  page_max_id: string;
  page_min_id: string;
  latest: string | Date;
  type: string;
  status_id: string | null;
  report_id: string | null;
  severance_event_id: string | null;
  samples: string[];
}

const groupOf = (r: GroupSqlRow): NotificationGroupRow => ({
  groupKey: r.gk,
  type: r.type,
  notificationsCount: Number(r.notifications_count),
  mostRecentNotificationId: r.page_max_id,
  pageMinId: r.page_min_id,
  pageMaxId: r.page_max_id,
  latestPageNotificationAt: new Date(r.latest),
  sampleAccountIds: r.samples ?? [],
  statusId: r.status_id,
  reportId: r.report_id,
  severanceEventId: r.severance_event_id,
});

/** The aggregate of `in_range` rows per group key (in_range: id, gk, type, from_account_id, status_id, report_id, severance_event_id, created_at). */
const GROUP_AGGREGATE = `select gk, count(*)::int as notifications_count, max(id)::text as page_max_id, min(id)::text as page_min_id,
         max(created_at) as latest, (array_agg(type order by id desc))[1] as type,
         (array_agg(status_id order by id desc))[1]::text as status_id, (array_agg(report_id order by id desc))[1]::text as report_id,
         (array_agg(severance_event_id order by id desc))[1]::text as severance_event_id,
         (select array_agg(x.a::text order by x.m desc) from (
            select r2.from_account_id as a, max(r2.id) as m from in_range r2 where r2.gk = in_range.gk
             group by r2.from_account_id order by m desc limit ${SAMPLE_ACCOUNTS}) x) as samples
    from in_range group by gk order by max(id) desc`;

/**
 * A page of groups (Mastodon's GET /api/v2/notifications): the `p.limit` groups whose newest
 * notification is nearest the cursor, each with what the page holds of it (count, first and last
 * id, latest time, up to 8 sample accounts, newest first). Notifications of `groupedTypes` group
 * by their group key, the others stand alone (`ungrouped-<id>`).
 */
export async function notificationGroupsPage(
  services: Services,
  recipientId: string,
  p: PageParams,
  f: NotificationFilter,
  groupedTypes: string[],
): Promise<NotificationGroupRow[]> {
  const filter = filterSql(f, 3);
  const page = pageSql('n.id', p, 3 + filter.params.length);
  const forward = !!p.minId;
  const rows = await services.db.sql.query<GroupSqlRow>(
    `with keyed as (
       select n.id, n.type, n.from_account_id, n.status_id, n.report_id, n.relationship_severance_event_id as severance_event_id, n.created_at,
              case when n.type = any($2::text[]) then n.group_key else 'ungrouped-' || n.id::text end as gk
         from notifications n where ${shownSql}${filter.where}${page.where}
        order by ${page.order} limit ${GROUPING_WINDOW}
     ), groups as (
       select gk, ${forward ? 'min' : 'max'}(id) as edge from keyed group by gk order by edge ${forward ? 'asc' : 'desc'} limit ${p.limit}
     ), bound as (
       select case when count(*) = ${p.limit} then ${forward ? 'max' : 'min'}(edge) else null end as b from groups
     ), in_range as (
       select k.* from keyed k join groups g on g.gk = k.gk cross join bound
        where bound.b is null or k.id ${forward ? '<=' : '>='} bound.b
     )
     ${GROUP_AGGREGATE}`,
    [recipientId, groupedTypes, ...filter.params, ...page.params],
  );
  return rows.map(groupOf);
}

/** One group by its key, all of it (GET /api/v2/notifications/:group_key), or null. */
export async function notificationGroup(services: Services, recipientId: string, groupKey: string): Promise<NotificationGroupRow | null> {
  const [row] = await services.db.sql.query<GroupSqlRow>(
    `with in_range as (
       select n.id, n.type, n.from_account_id, n.status_id, n.report_id, n.relationship_severance_event_id as severance_event_id, n.created_at, $2::text as gk
         from notifications n where ${shownSql} and not n.filtered and ${groupKeySql('$2')}
     )
     ${GROUP_AGGREGATE}`,
    [recipientId, groupKey],
  );
  return row ? groupOf(row) : null;
}

/** SQL: the notification `n` belongs to the group `key` (its stored key, or `ungrouped-<id>`). */
export function groupKeySql(key: string): string {
  return `(n.group_key = ${key} or 'ungrouped-' || n.id::text = ${key})`;
}

/** The accounts of a group's notifications, newest first, each once. */
export async function notificationGroupAccountIds(services: Services, recipientId: string, groupKey: string): Promise<string[]> {
  const rows = await services.db.sql.query<{ id: string }>(
    `select n.from_account_id::text as id from notifications n where ${shownSql} and not n.filtered and ${groupKeySql('$2')}
      group by n.from_account_id order by max(n.id) desc`,
    [recipientId, groupKey],
  );
  return rows.map((r) => r.id);
}
