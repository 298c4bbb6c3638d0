/**
 * Moderators handling reports (Mastodon's Admin::ReportsController and Report#resolve!/unresolve!):
 * change the category and the rules cited, take a report on (assign to oneself), give it back
 * (unassign), resolve it, reopen it. `by` is the moderator's account; null is the operator at the
 * CLI.
 *
 * Each is one transaction: the report locked, changed, a `report.updated` fact when something
 * changed (with `report.resolved` / `report.reopened` for those), and the audit row
 * (services/audit-log.ts), written whether or not anything changed, as Mastodon logs every action.
 * Asking for what is already so (resolve a resolved report, assign to oneself a report one holds)
 * changes nothing: the resolver and the time stay the first ones.
 */
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import type { OutboxEvent, Origin } from '../events/outbox.ts';
import { RoostError, Validation } from '../lib/errors.ts';
import { REPORT_CATEGORIES } from '../serializers/report.ts';
import { recordEvent } from './actor-store.ts';
import { logAdminAction } from './audit-log.ts';
import { ADMIN_REPORT_COLUMNS, adminReportFromRow, type AdminReportRow } from './reads/reports.ts';
import { isId } from './reads/page.ts';

/** What a moderator may change on a report (PUT /api/v1/admin/reports/:id); absent: unchanged. */
export interface ReportChange {
  category?: string;
  ruleIds?: string[];
}

/** The Mastodon action names the audit log records for reports. */
type ReportAction = 'update' | 'assigned_to_self' | 'unassigned' | 'resolve' | 'reopen';

interface Step {
  /** Columns to set (none: nothing changes). */
  set: Record<string, unknown>;
  /** Facts beside report.updated. */
  events?: OutboxEvent[];
}

async function moderate(
  services: Services,
  by: string | null,
  id: string,
  action: ReportAction,
  step: (row: AdminReportRow) => Step,
): Promise<AdminReportRow> {
  if (!isId(id)) throw new RoostError(404, 'Record not found');
  const origin: Origin = by === null ? 'operator' : 'client';
  return services.db.sql.transaction(async (tx: Sql) => {
    const [locked] = await tx.query<Record<string, unknown>>(`select ${ADMIN_REPORT_COLUMNS} from reports where id = $1 for update`, [id]);
    if (!locked) throw new RoostError(404, 'Record not found');
    let row = adminReportFromRow(locked);
    const { set, events = [] } = step(row);
    const columns = Object.keys(set);
    if (columns.length) {
      const params: unknown[] = [id, services.clock.now()];
      const assignments = columns.map((c) => `${c} = $${params.push(set[c])}${c.endsWith('_ids') ? '::bigint[]' : ''}`);
      const [updated] = await tx.query<Record<string, unknown>>(
        `update reports set ${assignments.join(', ')}, updated_at = $2 where id = $1 returning ${ADMIN_REPORT_COLUMNS}`,
        params,
      );
      row = adminReportFromRow(updated!);
      for (const event of [{ type: 'report.updated', reportId: id } as OutboxEvent, ...events]) {
        await recordEvent(services, tx, { actorKind: 'report', actorId: id, origin, event });
      }
    }
    await logAdminAction(services, tx, {
      actorAccountId: by,
      action,
      targetType: 'Report',
      targetId: id,
      humanIdentifier: id,
      detail: columns.length ? { changed: columns } : {},
    });
    return row;
  });
}

const sameList = (a: readonly string[] | null, b: readonly string[] | null) => (a ?? []).join(',') === (b ?? []).join(',');

/**
 * The category and the rules cited. `violation` needs rules that exist (1-based ids of the
 * configured rules); another category takes none: its rules are cleared, and rules given with it
 * are refused (Mastodon's "must be blank").
 */
export async function updateReport(services: Services, by: string | null, id: string, change: ReportChange): Promise<AdminReportRow> {
  const v = new Validation();
  if (change.category !== undefined && !(REPORT_CATEGORIES as readonly string[]).includes(change.category)) {
    v.add('category', 'ERR_INCLUSION', 'is not included in the list');
  }
  v.throwIfInvalid();
  const rules = services.config.instance.rules.length;
  return moderate(services, by, id, 'update', (row) => {
    const category = change.category ?? row.category;
    const given = change.ruleIds === undefined ? undefined : [...new Set(change.ruleIds)];
    let ruleIds: string[] | null;
    const check = new Validation();
    if (category === 'violation') {
      ruleIds = given ?? row.ruleIds ?? [];
      if (ruleIds.length === 0 || !ruleIds.every((r) => /^\d{1,9}$/.test(r) && Number(r) >= 1 && Number(r) <= rules)) {
        check.add('rule_ids', 'ERR_INVALID', 'does not reference valid rules');
      }
      ruleIds = ruleIds.map((r) => String(Number(r)));
    } else {
      if (given?.length) check.add('rule_ids', 'ERR_BLANK', 'must be blank');
      ruleIds = null;
    }
    check.throwIfInvalid();
    const set: Record<string, unknown> = {};
    if (category !== row.category) set.category = category;
    if (!sameList(ruleIds, row.ruleIds)) set.rule_ids = ruleIds;
    return { set };
  });
}

/** Take the report on (`assignee` the moderator) or give it back (null). */
export async function assignReport(services: Services, by: string | null, id: string, assignee: string | null): Promise<AdminReportRow> {
  return moderate(services, by, id, assignee === null ? 'unassigned' : 'assigned_to_self', (row) => ({
    set: row.assignedAccountId === assignee ? {} : { assigned_account_id: assignee },
  }));
}

/** Resolved: when and by whom (kept as first set when resolved again). */
export async function resolveReport(services: Services, by: string | null, id: string): Promise<AdminReportRow> {
  return moderate(services, by, id, 'resolve', (row) =>
    row.actionTakenAt !== null
      ? { set: {} }
      : {
          set: { action_taken_at: services.clock.now(), action_taken_by_account_id: by },
          events: [{ type: 'report.resolved', reportId: id, accountId: by }],
        },
  );
}

/** Open again: no longer resolved, nor by anyone. */
export async function reopenReport(services: Services, by: string | null, id: string): Promise<AdminReportRow> {
  return moderate(services, by, id, 'reopen', (row) =>
    row.actionTakenAt === null
      ? { set: {} }
      : {
          set: { action_taken_at: null, action_taken_by_account_id: null },
          events: [{ type: 'report.reopened', reportId: id, accountId: by }],
        },
  );
}
