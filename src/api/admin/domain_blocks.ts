/**
 * /api/v1/admin/domain_blocks (Mastodon's Api::V1::Admin::DomainBlocksController): list, show,
 * create, update (PUT or PATCH), delete. A user's token with admin:read(:domain_blocks) or
 * admin:write(:domain_blocks), and a role that may manage federation.
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramBool, paramString, requireId } from '../../http/index.ts';
import type { ParamValue } from '../../http/params.ts';
import type { Services } from '../../context.ts';
import { requirePermission } from '../auth.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import { domainBlock, domainBlocksPage } from '../../services/reads/domain-blocks.ts';
import { createDomainBlock, ExistingDomainBlockError, removeDomainBlock, updateDomainBlock, type DomainBlockInput } from '../../services/domain-blocks.ts';
import { serializeAdminDomainBlock, serializeExistingDomainBlockError } from '../../serializers/admin-domains.ts';

const READ = ['admin:read', 'admin:read:domain_blocks'];
const WRITE = ['admin:write', 'admin:write:domain_blocks'];

/** A text param: absent → undefined (unchanged), a non-string (array, object) → undefined too. */
function text(v: ParamValue | undefined): string | null | undefined {
  if (v === undefined) return undefined;
  if (v === null) return null;
  return paramString(v);
}

/** The block's attributes from a request (only those given: an update changes only those). */
function blockInput(ctx: RequestContext): Omit<DomainBlockInput, 'domain'> {
  const p = ctx.input;
  return {
    severity: p.severity === undefined || p.severity === null || p.severity === '' ? undefined : (paramString(p.severity) ?? ''),
    rejectMedia: paramBool(p.reject_media),
    rejectReports: paramBool(p.reject_reports),
    privateComment: text(p.private_comment),
    publicComment: text(p.public_comment),
    obfuscate: paramBool(p.obfuscate),
  };
}

export function adminDomainBlocksRoutes(router: Router, services: Services): void {
  router.get('/api/v1/admin/domain_blocks', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageFederation');
    const p = pageParams(ctx, 100, 200);
    const rows = await domainBlocksPage(services, p);
    const link = linkHeader(ctx.url, rows.map((r) => r.id), p, 'since_id');
    return json(rows.map(serializeAdminDomainBlock), { headers: link ? { link } : {} });
  });

  router.get('/api/v1/admin/domain_blocks/:id', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageFederation');
    const row = await domainBlock(services, requireId(ctx.params.id));
    if (!row) throw new RoostError(404, 'Record not found');
    return json(serializeAdminDomainBlock(row));
  });

  router.post('/api/v1/admin/domain_blocks', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageFederation');
    try {
      const row = await createDomainBlock(services, { domain: paramString(ctx.input.domain), ...blockInput(ctx) }, 'client', me.account.id);
      return json(serializeAdminDomainBlock(row));
    } catch (e) {
      if (e instanceof ExistingDomainBlockError) return json(serializeExistingDomainBlockError(e.existing), { status: 422 });
      throw e;
    }
  });

  router.update('/api/v1/admin/domain_blocks/:id', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageFederation');
    const row = await updateDomainBlock(services, requireId(ctx.params.id), blockInput(ctx), 'client', me.account.id);
    return json(serializeAdminDomainBlock(row));
  });

  router.delete('/api/v1/admin/domain_blocks/:id', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageFederation');
    await removeDomainBlock(services, requireId(ctx.params.id), 'client', me.account.id);
    return json({});
  });
}
