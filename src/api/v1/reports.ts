/** POST /api/v1/reports (methods/reports.md): file a report; answers the Report entity. */
import type { Router } from '../../http/index.ts';
import { json, paramBool, paramString, paramStrings } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { RoostError } from '../../lib/errors.ts';
import { createReport } from '../../services/reports.ts';
import { serializeReport } from '../../serializers/report.ts';
import { renderAccount } from '../../views/accounts.ts';

export function reportRoutes(router: Router, services: Services): void {
  router.post('/api/v1/reports', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['write', 'write:reports']);
    const b = ctx.input;
    const report = await createReport(services, viewer.account.id, {
      accountId: paramString(b.account_id),
      statusIds: paramStrings(b.status_ids),
      ruleIds: paramStrings(b.rule_ids),
      comment: paramString(b.comment) ?? '',
      category: paramString(b.category),
      forward: paramBool(b.forward) ?? false,
    });
    const target = await renderAccount(services, report.targetAccountId);
    if (!target) throw new RoostError(404, 'Record not found');
    return json(serializeReport(report, target));
  });
}
