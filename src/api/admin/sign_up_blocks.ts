/**
 * The sign-up blocks of the admin API (Mastodon's Api::V1::Admin::EmailDomainBlocksController,
 * CanonicalEmailBlocksController, IpBlocksController): list, show, create, delete (and `test` for
 * canonical blocks, update for IP blocks). A user's token with admin:read(:…) or admin:write(:…)
 * and a role that may manage blocks.
 */
import type { RequestContext, Router } from '../../http/index.ts';
import { json, paramString, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requirePermission } from '../auth.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import {
  canonicalEmailBlock,
  canonicalEmailBlocksMatching,
  canonicalEmailBlocksPage,
  emailDomainBlock,
  emailDomainBlocksPage,
  ipBlock,
  ipBlocksPage,
} from '../../services/reads/sign-up-blocks.ts';
import {
  canonicalEmailHash,
  createCanonicalEmailBlock,
  createEmailDomainBlock,
  removeCanonicalEmailBlock,
  removeEmailDomainBlock,
} from '../../services/email-blocks.ts';
import { createIpBlock, removeIpBlock, updateIpBlock, type IpBlockInput } from '../../services/ip-blocks.ts';
import { serializeAdminCanonicalEmailBlock, serializeAdminEmailDomainBlock, serializeAdminIpBlock } from '../../serializers/admin-sign-up-blocks.ts';

const scopes = (segment: string) => ({
  read: ['admin:read', `admin:read:${segment}`],
  write: ['admin:write', `admin:write:${segment}`],
});
const EMAIL_DOMAIN = scopes('email_domain_blocks');
const CANONICAL = scopes('canonical_email_blocks');
const IP = scopes('ip_blocks');

const notFound = () => new RoostError(404, 'Record not found');

/** The IP block's attributes given in a request (an update changes only those). */
function ipInput(ctx: RequestContext): IpBlockInput {
  const p = ctx.input;
  const expires = p.expires_in;
  let expiresIn: number | null | undefined;
  if (expires === undefined) expiresIn = undefined;
  else if (expires === null || expires === '') expiresIn = null;
  else {
    const s = paramString(expires);
    expiresIn = s !== undefined && /^\s*\d{1,10}\s*$/.test(s) ? Number(s) : Number.NaN;
  }
  const comment = p.comment === undefined ? undefined : p.comment === null ? null : (paramString(p.comment) ?? '');
  return {
    ip: p.ip === undefined || p.ip === null ? undefined : (paramString(p.ip) ?? ''),
    severity: p.severity === undefined || p.severity === null ? undefined : (paramString(p.severity) ?? '?'),
    comment,
    expiresIn,
  };
}

export function adminSignUpBlocksRoutes(router: Router, services: Services): void {
  // E-mail domain blocks
  router.get('/api/v1/admin/email_domain_blocks', async (ctx) => {
    await requirePermission(services, ctx, EMAIL_DOMAIN.read, 'manageBlocks');
    const p = pageParams(ctx, 100, 200);
    const rows = await emailDomainBlocksPage(services, p);
    const link = linkHeader(ctx.url, rows.map((r) => r.id), p, 'since_id');
    return json(rows.map(serializeAdminEmailDomainBlock), { headers: link ? { link } : {} });
  });
  router.get('/api/v1/admin/email_domain_blocks/:id', async (ctx) => {
    await requirePermission(services, ctx, EMAIL_DOMAIN.read, 'manageBlocks');
    const row = await emailDomainBlock(services, requireId(ctx.params.id));
    if (!row) throw notFound();
    return json(serializeAdminEmailDomainBlock(row));
  });
  router.post('/api/v1/admin/email_domain_blocks', async (ctx) => {
    const viewer = await requirePermission(services, ctx, EMAIL_DOMAIN.write, 'manageBlocks');
    const row = await createEmailDomainBlock(services, viewer.account.id, paramString(ctx.input.domain));
    return json(serializeAdminEmailDomainBlock(row));
  });
  router.delete('/api/v1/admin/email_domain_blocks/:id', async (ctx) => {
    const viewer = await requirePermission(services, ctx, EMAIL_DOMAIN.write, 'manageBlocks');
    await removeEmailDomainBlock(services, viewer.account.id, requireId(ctx.params.id));
    return json({});
  });

  // Canonical e-mail blocks
  router.get('/api/v1/admin/canonical_email_blocks', async (ctx) => {
    await requirePermission(services, ctx, CANONICAL.read, 'manageBlocks');
    const p = pageParams(ctx, 100, 200);
    const rows = await canonicalEmailBlocksPage(services, p);
    const link = linkHeader(ctx.url, rows.map((r) => r.id), p, 'since_id');
    return json(rows.map(serializeAdminCanonicalEmailBlock), { headers: link ? { link } : {} });
  });
  router.get('/api/v1/admin/canonical_email_blocks/:id', async (ctx) => {
    await requirePermission(services, ctx, CANONICAL.read, 'manageBlocks');
    const row = await canonicalEmailBlock(services, requireId(ctx.params.id));
    if (!row) throw notFound();
    return json(serializeAdminCanonicalEmailBlock(row));
  });
  router.post('/api/v1/admin/canonical_email_blocks/test', async (ctx) => {
    await requirePermission(services, ctx, CANONICAL.read, 'manageBlocks');
    const email = paramString(ctx.input.email);
    if (email === undefined || email.trim() === '') throw new RoostError(400, 'param is missing or the value is empty: email');
    const rows = await canonicalEmailBlocksMatching(services, canonicalEmailHash(email));
    return json(rows.map(serializeAdminCanonicalEmailBlock));
  });
  router.post('/api/v1/admin/canonical_email_blocks', async (ctx) => {
    const viewer = await requirePermission(services, ctx, CANONICAL.write, 'manageBlocks');
    const row = await createCanonicalEmailBlock(services, viewer.account.id, {
      email: paramString(ctx.input.email),
      canonicalEmailHash: paramString(ctx.input.canonical_email_hash),
    });
    return json(serializeAdminCanonicalEmailBlock(row));
  });
  router.delete('/api/v1/admin/canonical_email_blocks/:id', async (ctx) => {
    const viewer = await requirePermission(services, ctx, CANONICAL.write, 'manageBlocks');
    await removeCanonicalEmailBlock(services, viewer.account.id, requireId(ctx.params.id));
    return json({});
  });

  // IP blocks
  router.get('/api/v1/admin/ip_blocks', async (ctx) => {
    await requirePermission(services, ctx, IP.read, 'manageBlocks');
    const p = pageParams(ctx, 100, 200);
    const rows = await ipBlocksPage(services, p);
    const link = linkHeader(ctx.url, rows.map((r) => r.id), p, 'since_id');
    return json(rows.map(serializeAdminIpBlock), { headers: link ? { link } : {} });
  });
  router.get('/api/v1/admin/ip_blocks/:id', async (ctx) => {
    await requirePermission(services, ctx, IP.read, 'manageBlocks');
    const row = await ipBlock(services, requireId(ctx.params.id));
    if (!row) throw notFound();
    return json(serializeAdminIpBlock(row));
  });
  router.post('/api/v1/admin/ip_blocks', async (ctx) => {
    const viewer = await requirePermission(services, ctx, IP.write, 'manageBlocks');
    return json(serializeAdminIpBlock(await createIpBlock(services, viewer.account.id, ipInput(ctx))));
  });
  router.update('/api/v1/admin/ip_blocks/:id', async (ctx) => {
    const viewer = await requirePermission(services, ctx, IP.write, 'manageBlocks');
    return json(serializeAdminIpBlock(await updateIpBlock(services, viewer.account.id, requireId(ctx.params.id), ipInput(ctx))));
  });
  router.delete('/api/v1/admin/ip_blocks/:id', async (ctx) => {
    const viewer = await requirePermission(services, ctx, IP.write, 'manageBlocks');
    await removeIpBlock(services, viewer.account.id, requireId(ctx.params.id));
    return json({});
  });
}
