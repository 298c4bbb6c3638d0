/**
 * /api/v1/admin/reports (methods/admin/reports.md, Mastodon's Api::V1::Admin::ReportsController):
 * list (unresolved unless `resolved`; by reporter `account_id`, by reported `target_account_id`;
 * Link-header pages), show, update (PUT or PATCH: category, rule_ids), assign_to_self, unassign,
 * resolve, reopen. Each answers the Admin::Report. A user's token with admin:read(:reports) or
 * admin:write(:reports), and a role that may manage reports.
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramBool, paramString, paramStrings, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requirePermission } from '../auth.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import { adminReport, adminReportsPage, type AdminReportRow } from '../../services/reads/reports.ts';
import { assignReport, reopenReport, resolveReport, updateReport } from '../../services/report-moderation.ts';
import { renderAdminReport, renderAdminReports } from '../../views/admin-reports.ts';

const READ = ['admin:read', 'admin:read:reports'];
const WRITE = ['admin:write', 'admin:write:reports'];

async function answer(services: Services, row: AdminReportRow | null) {
  const rendered = row ? await renderAdminReport(services, row) : null;
  if (!rendered) throw new RoostError(404, 'Record not found');
  return json(rendered);
}

/** A filter param given as one string (absent, or anything else such as a list: no filter). */
function filterParam(ctx: RequestContext, key: string): string | undefined {
  const v = ctx.query[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function adminReportRoutes(router: Router, services: Services): void {
  router.get('/api/v1/admin/reports', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageReports');
    const p = pageParams(ctx, 100, 200);
    const rows = await adminReportsPage(
      services,
      { resolved: paramBool(ctx.query.resolved) ?? false, accountId: filterParam(ctx, 'account_id'), targetAccountId: filterParam(ctx, 'target_account_id') },
      p,
    );
    const link = linkHeader(ctx.url, rows.map((r) => r.id), p, 'since_id');
    return json(await renderAdminReports(services, rows), { headers: link ? { link } : {} });
  });

  router.get('/api/v1/admin/reports/:id', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageReports');
    return answer(services, await adminReport(services, requireId(ctx.params.id)));
  });

  router.update('/api/v1/admin/reports/:id', async (ctx) => {
    const viewer = await requirePermission(services, ctx, WRITE, 'manageReports');
    const id = requireId(ctx.params.id);
    const b = ctx.input;
    const category = b.category === undefined || b.category === null ? undefined : (paramString(b.category) ?? '');
    const ruleIds = b.rule_ids === undefined ? undefined : paramStrings(b.rule_ids);
    return answer(services, await updateReport(services, viewer.account.id, id, { category, ruleIds }));
  });

  router.post('/api/v1/admin/reports/:id/assign_to_self', async (ctx) => {
    const viewer = await requirePermission(services, ctx, WRITE, 'manageReports');
    return answer(services, await assignReport(services, viewer.account.id, requireId(ctx.params.id), viewer.account.id));
  });

  router.post('/api/v1/admin/reports/:id/unassign', async (ctx) => {
    const viewer = await requirePermission(services, ctx, WRITE, 'manageReports');
    return answer(services, await assignReport(services, viewer.account.id, requireId(ctx.params.id), null));
  });

  router.post('/api/v1/admin/reports/:id/resolve', async (ctx) => {
    const viewer = await requirePermission(services, ctx, WRITE, 'manageReports');
    return answer(services, await resolveReport(services, viewer.account.id, requireId(ctx.params.id)));
  });

  router.post('/api/v1/admin/reports/:id/reopen', async (ctx) => {
    const viewer = await requirePermission(services, ctx, WRITE, 'manageReports');
    return answer(services, await reopenReport(services, viewer.account.id, requireId(ctx.params.id)));
  });
}
