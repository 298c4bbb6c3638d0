/**
 * The `object` of an admin webhook's payload, as Mastodon's REST::Admin::WebhookEventSerializer
 * renders it: an Admin::Account for the account events, an Admin::Report for the report events, a
 * Status (no viewer: the public rendering) for the status events. Null when the thing is gone (or
 * is not local: Mastodon sends its webhooks for local accounts and statuses only).
 */
import type { Services } from '../context.ts';
import { adminAccountRow, adminReportRow, isLocalStatus } from '../services/reads/webhook-objects.ts';
import { renderAccounts } from './accounts.ts';
import { renderStatuses } from './statuses.ts';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** Mastodon's Admin::Account of a local account. */
export async function renderAdminAccountObject(services: Services, accountId: string): Promise<Record<string, unknown> | null> {
  const row = await adminAccountRow(services, accountId);
  if (!row) return null;
  const [account] = await renderAccounts(services, [accountId]);
  if (!account) return null;
  return {
    id: row.account_id,
    username: row.username,
    domain: row.domain,
    created_at: iso(row.created_at),
    email: row.email,
    ip: null,
    ips: [],
    locale: row.locale,
    invite_request: row.sign_up_reason,
    role: row.role_id
      ? {
          id: row.role_id,
          name: row.role_name,
          color: row.role_color,
          position: row.role_position,
          permissions: row.role_permissions,
          highlighted: row.role_highlighted,
          created_at: iso(row.role_created_at),
          updated_at: iso(row.role_updated_at),
        }
      : null,
    confirmed: row.confirmed,
    suspended: row.suspended,
    silenced: row.silenced,
    sensitized: false,
    disabled: row.disabled,
    approved: row.approved,
    account,
  };
}

/** Mastodon's Admin::Report (its accounts as Admin::Account where local, else null, as Roost keeps no user for them). */
export async function renderAdminReportObject(services: Services, reportId: string): Promise<Record<string, unknown> | null> {
  const row = await adminReportRow(services, reportId);
  if (!row) return null;
  const [account, targetAccount] = await Promise.all([adminAccountOrPlain(services, row.account_id), adminAccountOrPlain(services, row.target_account_id)]);
  const statuses = row.status_ids.length ? await renderStatuses(services, row.status_ids, null) : [];
  return {
    id: row.id,
    action_taken: row.action_taken_at !== null,
    action_taken_at: iso(row.action_taken_at),
    category: row.category,
    comment: row.comment,
    forwarded: row.forwarded,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    account,
    target_account: targetAccount,
    assigned_account: null,
    action_taken_by_account: null,
    statuses,
    rules: [],
  };
}

/** An Admin::Account for a local account; for a remote one, the same shape with what Roost knows. */
async function adminAccountOrPlain(services: Services, accountId: string): Promise<Record<string, unknown> | null> {
  const local = await renderAdminAccountObject(services, accountId);
  if (local) return local;
  const [account] = await renderAccounts(services, [accountId]);
  if (!account) return null;
  return {
    id: account.id,
    username: account.username,
    domain: account.acct.includes('@') ? account.acct.split('@')[1] : null,
    created_at: account.created_at,
    email: null,
    ip: null,
    ips: [],
    locale: null,
    invite_request: null,
    role: null,
    confirmed: false,
    suspended: false,
    silenced: false,
    sensitized: false,
    disabled: false,
    approved: false,
    account,
  };
}

/** A local status as the public sees it (Mastodon's REST::StatusSerializer without a viewer). */
export async function renderStatusObject(services: Services, statusId: string): Promise<Record<string, unknown> | null> {
  if (!(await isLocalStatus(services, statusId))) return null;
  const [status] = await renderStatuses(services, [statusId], null);
  return (status as unknown as Record<string, unknown>) ?? null;
}
