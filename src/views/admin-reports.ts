/**
 * Admin::Report rendered for a page of reports, in a fixed number of statements whatever its size:
 * the Admin::Account of every account the page names (reporter, reported, assignee, resolver:
 * views/admin-accounts.ts, the one rendering of Admin::Account) and every status cited
 * (views/statuses.ts, the public rendering with no viewer flags: one page). The rules come from the
 * configuration (ids 1-based, as GET /api/v1/instance/rules numbers them).
 */
import type { Services } from '../context.ts';
import type { AdminReportRow } from '../services/reads/reports.ts';
import { serializeAdminReport, type MastodonAdminReport } from '../serializers/admin-report.ts';
import { serializeRule, type MastodonRule } from '../serializers/instance.ts';
import { adminAccountViews } from './admin-accounts.ts';
import { renderStatuses } from './statuses.ts';

export async function renderAdminReports(services: Services, rows: readonly AdminReportRow[]): Promise<MastodonAdminReport[]> {
  const accountIds = rows.flatMap((r) => [r.accountId, r.targetAccountId, r.assignedAccountId, r.actionTakenByAccountId].filter((id): id is string => id !== null));
  const statusIds = [...new Set(rows.flatMap((r) => r.statusIds))];
  const [accounts, statuses] = await Promise.all([adminAccountViews(services, [...new Set(accountIds)]), renderStatuses(services, statusIds, null)]);
  const byStatus = new Map(statuses.map((s) => [s.id, s]));
  const rules = new Map<string, MastodonRule>(
    services.config.instance.rules.map((r, i) => [String(i + 1), serializeRule({ id: String(i + 1), text: r.text, hint: r.hint })]),
  );
  return rows.flatMap((r) => serializeAdminReport(r, accounts, byStatus, rules) ?? []);
}

export async function renderAdminReport(services: Services, row: AdminReportRow): Promise<MastodonAdminReport | null> {
  return (await renderAdminReports(services, [row]))[0] ?? null;
}
