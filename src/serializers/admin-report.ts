/**
 * Mastodon's Admin::Report (entities/Admin_Report.md; REST::Admin::ReportSerializer): the report
 * whole, its four accounts as Admin::Account, the statuses cited (rendered by views/) and the
 * rules cited. Pure: the accounts (serializers/admin-account.ts), statuses and rules come in
 * already rendered.
 */
import type { AdminReportRow } from '../services/reads/reports.ts';
import type { AdminAccountJson } from './admin-account.ts';
import type { MastodonStatus } from './status.ts';
import type { MastodonRule } from './instance-wire.ts';

export interface MastodonAdminReport {
  id: string;
  action_taken: boolean;
  action_taken_at: string | null;
  category: string;
  comment: string;
  forwarded: boolean;
  created_at: string;
  updated_at: string;
  account: AdminAccountJson;
  target_account: AdminAccountJson;
  assigned_account: AdminAccountJson | null;
  action_taken_by_account: AdminAccountJson | null;
  statuses: MastodonStatus[];
  rules: MastodonRule[];
}

/** The report, or null when its reporter or reported account cannot be rendered (gone meanwhile). */
export function serializeAdminReport(
  row: AdminReportRow,
  accounts: ReadonlyMap<string, AdminAccountJson>,
  statuses: ReadonlyMap<string, MastodonStatus>,
  rules: ReadonlyMap<string, MastodonRule>,
): MastodonAdminReport | null {
  const account = accounts.get(row.accountId);
  const target = accounts.get(row.targetAccountId);
  if (!account || !target) return null;
  const maybe = (id: string | null) => (id === null ? null : (accounts.get(id) ?? null));
  return {
    id: row.id,
    action_taken: row.actionTakenAt !== null,
    action_taken_at: row.actionTakenAt?.toISOString() ?? null,
    category: row.category,
    comment: row.comment,
    forwarded: row.forwarded,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    account,
    target_account: target,
    assigned_account: maybe(row.assignedAccountId),
    action_taken_by_account: maybe(row.actionTakenByAccountId),
    statuses: row.statusIds.flatMap((id) => statuses.get(id) ?? []),
    rules: (row.ruleIds ?? []).flatMap((id) => rules.get(id) ?? []),
  };
}
