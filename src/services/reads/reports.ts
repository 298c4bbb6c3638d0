/**
 * Reports as moderators read them (GET /api/v1/admin/reports, the CLI's `roost reports list`): a
 * page by id, newest first, unresolved unless `resolved` is asked, optionally by reporter or by
 * reported account; one by id. One statement each.
 */
import type { Services } from '../../context.ts';
import type { Sql } from '../../db/sql.ts';
import { isId, newestFirst, pageSql, type PageParams } from './page.ts';

export interface AdminReportRow {
  id: string;
  accountId: string;
  targetAccountId: string;
  assignedAccountId: string | null;
  actionTakenByAccountId: string | null;
  statusIds: string[];
  ruleIds: string[] | null;
  comment: string;
  category: string;
  forwarded: boolean;
  uri: string | null;
  actionTakenAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const ADMIN_REPORT_COLUMNS = `id::text, account_id::text, target_account_id::text, assigned_account_id::text, action_taken_by_account_id::text,
  status_ids::text[], rule_ids::text[], comment, category, forwarded, uri, action_taken_at, created_at, updated_at`;

export function adminReportFromRow(r: Record<string, unknown>): AdminReportRow {
  return {
    id: r.id as string,
    accountId: r.account_id as string,
    targetAccountId: r.target_account_id as string,
    assignedAccountId: (r.assigned_account_id as string | null) ?? null,
    actionTakenByAccountId: (r.action_taken_by_account_id as string | null) ?? null,
    statusIds: (r.status_ids as string[] | null) ?? [],
    ruleIds: (r.rule_ids as string[] | null) ?? null,
    comment: r.comment as string,
    category: r.category as string,
    forwarded: r.forwarded as boolean,
    uri: (r.uri as string | null) ?? null,
    actionTakenAt: r.action_taken_at ? new Date(r.action_taken_at as string) : null,
    createdAt: new Date(r.created_at as string),
    updatedAt: new Date(r.updated_at as string),
  };
}

/** One report by id (through `sql`: a transaction's, to read what it wrote), or null. */
export async function adminReportById(sql: Sql, id: string): Promise<AdminReportRow | null> {
  if (!isId(id)) return null;
  const [row] = await sql.query<Record<string, unknown>>(`select ${ADMIN_REPORT_COLUMNS} from reports where id = $1`, [id]);
  return row ? adminReportFromRow(row) : null;
}

export function adminReport(services: Services, id: string): Promise<AdminReportRow | null> {
  return adminReportById(services.db.sql, id);
}

export interface ReportFilter {
  /** true: the resolved reports; false or absent: the unresolved ones (Mastodon's ReportFilter starts from those). */
  resolved?: boolean;
  /** Filed by this account. */
  accountId?: string;
  /** About this account. */
  targetAccountId?: string;
}

/** A page of reports, newest first. An account filter that is not an id matches nothing. */
export async function adminReportsPage(services: Services, filter: ReportFilter, p: PageParams): Promise<AdminReportRow[]> {
  if ((filter.accountId !== undefined && !isId(filter.accountId)) || (filter.targetAccountId !== undefined && !isId(filter.targetAccountId))) return [];
  const page = pageSql('id', p, 1);
  const params = [...page.params];
  const where = [filter.resolved ? 'action_taken_at is not null' : 'action_taken_at is null'];
  if (filter.accountId !== undefined) where.push(`account_id = $${params.push(filter.accountId)}`);
  if (filter.targetAccountId !== undefined) where.push(`target_account_id = $${params.push(filter.targetAccountId)}`);
  const rows = await services.db.sql.query<Record<string, unknown>>(
    `select ${ADMIN_REPORT_COLUMNS} from reports where ${where.join(' and ')}${page.where} order by ${page.order} limit ${p.limit}`,
    params,
  );
  return newestFirst(rows, p).map(adminReportFromRow);
}
