/**
 * /api/v1/admin/domain_allows (Mastodon's Api::V1::Admin::DomainAllowsController): list, show,
 * create (an already allowed domain answers its existing allow), delete (answers the removed
 * allow). The allows matter in allowlist federation mode (`federation.mode`).
 */
import type { Router } from '../../http/index.ts';
import { json, paramString, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requirePermission } from '../auth.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import { domainAllow, domainAllowsPage } from '../../services/reads/domain-blocks.ts';
import { createDomainAllow, removeDomainAllow } from '../../services/domain-blocks.ts';
import { serializeAdminDomainAllow } from '../../serializers/admin-domains.ts';

const READ = ['admin:read', 'admin:read:domain_allows'];
const WRITE = ['admin:write', 'admin:write:domain_allows'];

export function adminDomainAllowsRoutes(router: Router, services: Services): void {
  router.get('/api/v1/admin/domain_allows', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageFederation');
    const p = pageParams(ctx, 100, 200);
    const rows = await domainAllowsPage(services, p);
    const link = linkHeader(ctx.url, rows.map((r) => r.id), p, 'since_id');
    return json(rows.map(serializeAdminDomainAllow), { headers: link ? { link } : {} });
  });

  router.get('/api/v1/admin/domain_allows/:id', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageFederation');
    const row = await domainAllow(services, requireId(ctx.params.id));
    if (!row) throw new RoostError(404, 'Record not found');
    return json(serializeAdminDomainAllow(row));
  });

  router.post('/api/v1/admin/domain_allows', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageFederation');
    const row = await createDomainAllow(services, paramString(ctx.input.domain), 'client', me.account.id);
    return json(serializeAdminDomainAllow(row));
  });

  router.delete('/api/v1/admin/domain_allows/:id', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageFederation');
    const row = await removeDomainAllow(services, requireId(ctx.params.id), 'client', me.account.id);
    return json(serializeAdminDomainAllow(row));
  });
}
