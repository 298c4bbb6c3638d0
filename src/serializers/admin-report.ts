/**
 * Mastodon's Admin::Report (entities/Admin_Report.md; REST::Admin::ReportSerializer): the report
 * whole, its four accounts as Admin::Account, the statuses cited (rendered by views/) and the
 * rules cited. Pure: the accounts, statuses and rules come in already rendered.
 *
 * Also the Admin::Account of a report's accounts (entities/Admin_Account.md) from the facts
 * reads/reports.ts loads; `ip` and `ips` are not recorded by Roost yet (null, []).
 */
import type { AdminAccountFacts, AdminReportRow } from '../services/reads/reports.ts';
import type { MastodonAccount } from './account.ts';
import type { MastodonStatus } from './status.ts';
import type { MastodonRule } from './instance-wire.ts';

export interface MastodonAdminAccount {
  id: string;
  username: string;
  domain: string | null;
  created_at: string;
  email: string | null;
  ip: string | null;
  ips: { ip: string; used_at: string }[];
  locale: string | null;
  invite_request: string | null;
  role: { id: string; name: string; color: string; permissions: string; highlighted: boolean } | null;
  confirmed: boolean;
  approved: boolean;
  disabled: boolean;
  sensitized: boolean;
  silenced: boolean;
  suspended: boolean;
  account: MastodonAccount;
}

export function serializeAdminAccount(f: AdminAccountFacts, account: MastodonAccount): MastodonAdminAccount {
  const u = f.user;
  return {
    id: f.id,
    username: f.username,
    domain: f.domain,
    created_at: f.createdAt.toISOString(),
    email: u?.email ?? null,
    ip: null,
    ips: [],
    locale: u?.locale ?? null,
    invite_request: u?.inviteRequest ?? null,
    role: u?.role ?? null,
    confirmed: u?.confirmed ?? false,
    approved: u?.approved ?? false,
    disabled: u?.disabled ?? false,
    sensitized: false,
    silenced: f.silenced,
    suspended: f.suspended,
    account,
  };
}

export interface MastodonAdminReport {
  id: string;
  action_taken: boolean;
  action_taken_at: string | null;
  category: string;
  comment: string;
  forwarded: boolean;
  created_at: string;
  updated_at: string;
  account: MastodonAdminAccount;
  target_account: MastodonAdminAccount;
  assigned_account: MastodonAdminAccount | null;
  action_taken_by_account: MastodonAdminAccount | null;
  statuses: MastodonStatus[];
  rules: MastodonRule[];
}

/** The report, or null when its reporter or reported account cannot be rendered (gone meanwhile). */
export function serializeAdminReport(
  row: AdminReportRow,
  accounts: ReadonlyMap<string, MastodonAdminAccount>,
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
