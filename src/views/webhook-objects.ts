/**
 * The `object` of an admin webhook's payload, as Mastodon's REST::Admin::WebhookEventSerializer
 * renders it: an Admin::Account for the account events, an Admin::Report for the report events, a
 * Status (no viewer: the public rendering) for the status events. Null when the thing is gone (or
 * is not local: Mastodon sends its webhooks for local accounts and statuses only). The accounts
 * and reports go through the one Admin::Account and Admin::Report rendering the admin API uses.
 */
import type { Services } from '../context.ts';
import { isLocalAccount, isLocalStatus } from '../services/reads/webhook-objects.ts';
import { adminReport } from '../services/reads/reports.ts';
import { adminAccountViews } from './admin-accounts.ts';
import { renderAdminReport } from './admin-reports.ts';
import { renderStatuses } from './statuses.ts';

/** Mastodon's Admin::Account of a local account. */
export async function renderAdminAccountObject(services: Services, accountId: string): Promise<Record<string, unknown> | null> {
  if (!(await isLocalAccount(services, accountId))) return null;
  const views = await adminAccountViews(services, [accountId]);
  return (views.get(accountId) as unknown as Record<string, unknown>) ?? null;
}

/** Mastodon's Admin::Report. */
export async function renderAdminReportObject(services: Services, reportId: string): Promise<Record<string, unknown> | null> {
  const row = await adminReport(services, reportId);
  if (!row) return null;
  return ((await renderAdminReport(services, row)) as unknown as Record<string, unknown>) ?? null;
}

/** A local status as the public sees it (Mastodon's REST::StatusSerializer without a viewer). */
export async function renderStatusObject(services: Services, statusId: string): Promise<Record<string, unknown> | null> {
  if (!(await isLocalStatus(services, statusId))) return null;
  const [status] = await renderStatuses(services, [statusId], null);
  return (status as unknown as Record<string, unknown>) ?? null;
}
