/**
 * GET /api/v1/admin/action_logs (a Roost extension: Mastodon has no API for its audit log): the
 * admin actions, newest first, with Link-header pages; filtered by the moderator (`account_id`),
 * the kind of target (`target_type`, Mastodon's class names: `Report`, `Account`, `DomainBlock` …)
 * and the target (`target_id`). A user's token with admin:read and a role that may view the audit
 * log. The moderators' accounts are rendered for the page in one statement.
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requirePermission } from '../auth.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { adminActionPage } from '../../services/audit-log.ts';
import { serializeAdminActionLog } from '../../serializers/admin-action-log.ts';
import { renderAccounts } from '../../views/accounts.ts';

/** A filter param given as one string of at most 200 characters (a list or anything longer: no entry can match). */
function filterParam(ctx: RequestContext, key: string): string | null | undefined {
  const v = ctx.query[key];
  if (v === undefined || v === '') return undefined;
  return typeof v === 'string' && v.length <= 200 && !v.includes('\u0000') ? v : null;
}

export function adminActionLogRoutes(router: Router, services: Services): void {
  router.get('/api/v1/admin/action_logs', async (ctx) => {
    await requirePermission(services, ctx, ['admin:read'], 'viewAuditLog');
    const p = pageParams(ctx, 100, 200);
    const account = filterParam(ctx, 'account_id');
    const accountId = account === undefined ? undefined : account === null ? null : (paramId(account) ?? null);
    const targetType = filterParam(ctx, 'target_type');
    const targetId = filterParam(ctx, 'target_id');
    // A filter that cannot match (not an id, not a string): an empty page.
    if (accountId === null || targetType === null || targetId === null) return json([]);
    const rows = await adminActionPage(services, { ...p, accountId, targetType, targetId });
    const moderators = [...new Set(rows.flatMap((r) => (r.account_id === null ? [] : [r.account_id])))];
    const accounts = new Map((await renderAccounts(services, moderators)).map((a) => [a.id, a]));
    const link = linkHeader(ctx.url, rows.map((r) => r.id), p, 'since_id');
    return json(rows.map((r) => serializeAdminActionLog(r, accounts)), { headers: link ? { link } : {} });
  });
}
