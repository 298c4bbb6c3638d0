/**
 * The rows a webhook's payload is made of (views/webhook-objects.ts renders them): the user behind
 * a local account (Mastodon's Admin::Account) and a report (Admin::Report). One statement each.
 */
import type { Services } from '../../context.ts';

export interface AdminAccountRow {
  account_id: string;
  username: string;
  domain: string | null;
  created_at: Date;
  email: string | null;
  locale: string | null;
  sign_up_reason: string | null;
  confirmed: boolean;
  approved: boolean;
  disabled: boolean;
  silenced: boolean;
  suspended: boolean;
  role_id: string | null;
  role_name: string | null;
  role_color: string | null;
  role_position: number | null;
  role_permissions: string | null;
  role_highlighted: boolean | null;
  role_created_at: Date | null;
  role_updated_at: Date | null;
}

/** The local account `accountId` with its user and role, or null (remote, gone). */
export async function adminAccountRow(services: Services, accountId: string): Promise<AdminAccountRow | null> {
  const [row] = await services.db.sql.query<AdminAccountRow>(
    `select a.id::text as account_id, a.username, a.domain, a.created_at, u.email, u.locale, u.sign_up_reason,
            u.confirmed_at is not null as confirmed, u.approved, u.disabled,
            a.silenced_at is not null as silenced, a.suspended_at is not null as suspended,
            r.id::text as role_id, r.name as role_name, r.color as role_color, r.position as role_position,
            r.permissions::text as role_permissions, r.highlighted as role_highlighted,
            r.created_at as role_created_at, r.updated_at as role_updated_at
       from accounts a join users u on u.account_id = a.id left join user_roles r on r.id = u.role_id
      where a.id = $1 and a.domain is null`,
    [accountId],
  );
  return row ?? null;
}

export interface AdminReportRow {
  id: string;
  account_id: string;
  target_account_id: string;
  status_ids: string[];
  rule_ids: string[] | null;
  comment: string;
  category: string;
  forwarded: boolean;
  action_taken_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export async function adminReportRow(services: Services, reportId: string): Promise<AdminReportRow | null> {
  const [row] = await services.db.sql.query<AdminReportRow>(
    `select id::text as id, account_id::text as account_id, target_account_id::text as target_account_id,
            status_ids::text[] as status_ids, rule_ids::text[] as rule_ids, comment, category, forwarded,
            action_taken_at, created_at, updated_at
       from reports where id = $1`,
    [reportId],
  );
  return row ?? null;
}

/** Whether `statusId` is a local status still there (Mastodon's webhooks speak of local statuses only). */
export async function isLocalStatus(services: Services, statusId: string): Promise<boolean> {
  const rows = await services.db.sql.query(`select 1 from statuses where id = $1 and local and deleted_at is null`, [statusId]);
  return rows.length > 0;
}
