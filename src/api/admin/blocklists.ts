/**
 * Blocklist subscriptions, a Roost extension (GoToSocial's domain permission subscriptions;
 * services/blocklists.ts says what they do), and the export of this server's blocks in Mastodon's
 * CSV format. A user's token with admin:read / admin:write (or their :domain_blocks children) and a
 * role that may manage federation.
 *
 *   GET    /api/v1/admin/blocklist_subscriptions            the subscriptions, with entry counts
 *   POST   /api/v1/admin/blocklist_subscriptions            subscribe: url, auto_apply
 *   GET    /api/v1/admin/blocklist_subscriptions/:id
 *   PUT    /api/v1/admin/blocklist_subscriptions/:id        url, auto_apply (PATCH too)
 *   DELETE /api/v1/admin/blocklist_subscriptions/:id        unsubscribe; retract=true lifts its blocks
 *   POST   /api/v1/admin/blocklist_subscriptions/:id/refresh  fetch now: what changed
 *   GET    /api/v1/admin/blocklist_entries                  state (pending: the review queue), subscription_id; paged
 *   GET    /api/v1/admin/blocklist_entries/:id
 *   POST   /api/v1/admin/blocklist_entries/:id/approve      create its block (or `covered` by one there)
 *   POST   /api/v1/admin/blocklist_entries/:id/reject
 *   GET    /api/v1/admin/domain_blocks/export               text/csv, Mastodon's export
 */
import type { Router } from '../../http/index.ts';
import { json, paramBool, paramId, paramString, requireId, stringResponse } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requirePermission } from '../auth.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import {
  allBlocklistSubscriptions,
  approveBlocklistEntry,
  blocklistEntriesPage,
  findBlocklistEntry,
  findBlocklistSubscription,
  createBlocklistSubscription,
  deleteBlocklistSubscription,
  ENTRY_STATES,
  exportDomainBlocksCsv,
  refreshBlocklist,
  rejectBlocklistEntry,
  updateBlocklistSubscription,
  type EntryState,
} from '../../services/blocklists.ts';
import { serializeBlocklistEntry, serializeBlocklistSubscription, serializeRefreshSummary } from '../../serializers/admin-blocklists.ts';

const READ = ['admin:read', 'admin:read:domain_blocks'];
const WRITE = ['admin:write', 'admin:write:domain_blocks'];

export function adminBlocklistRoutes(router: Router, services: Services): void {
  router.get('/api/v1/admin/domain_blocks/export', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageFederation');
    return stringResponse(await exportDomainBlocksCsv(services), {
      headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="domain_blocks.csv"' },
    });
  });

  router.get('/api/v1/admin/blocklist_subscriptions', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageFederation');
    return json((await allBlocklistSubscriptions(services)).map(serializeBlocklistSubscription));
  });

  router.post('/api/v1/admin/blocklist_subscriptions', async (ctx) => {
    const { account } = await requirePermission(services, ctx, WRITE, 'manageFederation');
    const row = await createBlocklistSubscription(services, { url: paramString(ctx.input.url) ?? '', autoApply: paramBool(ctx.input.auto_apply) }, account.id);
    return json(serializeBlocklistSubscription(row));
  });

  router.get('/api/v1/admin/blocklist_subscriptions/:id', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageFederation');
    const row = await findBlocklistSubscription(services, requireId(ctx.params.id));
    if (!row) throw new RoostError(404, 'Record not found');
    return json(serializeBlocklistSubscription(row));
  });

  router.update('/api/v1/admin/blocklist_subscriptions/:id', async (ctx) => {
    const { account } = await requirePermission(services, ctx, WRITE, 'manageFederation');
    const url = ctx.input.url === undefined ? undefined : (paramString(ctx.input.url) ?? '');
    const row = await updateBlocklistSubscription(services, requireId(ctx.params.id), { url, autoApply: paramBool(ctx.input.auto_apply) }, account.id);
    return json(serializeBlocklistSubscription(row));
  });

  router.delete('/api/v1/admin/blocklist_subscriptions/:id', async (ctx) => {
    const { account } = await requirePermission(services, ctx, WRITE, 'manageFederation');
    await deleteBlocklistSubscription(services, requireId(ctx.params.id), { retract: paramBool(ctx.input.retract, false) }, account.id);
    return json({});
  });

  router.post('/api/v1/admin/blocklist_subscriptions/:id/refresh', async (ctx) => {
    const { account } = await requirePermission(services, ctx, WRITE, 'manageFederation');
    const summary = await refreshBlocklist(services, requireId(ctx.params.id), 'client', account.id);
    if (!summary) throw new RoostError(404, 'Record not found');
    return json(serializeRefreshSummary(summary));
  });

  router.get('/api/v1/admin/blocklist_entries', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageFederation');
    const p = pageParams(ctx, 100, 500);
    const state = paramString(ctx.input.state);
    const subscriptionId = ctx.input.subscription_id === undefined ? undefined : paramId(ctx.input.subscription_id);
    if (state !== undefined && !(ENTRY_STATES as readonly string[]).includes(state)) throw new RoostError(422, 'Validation failed: State is not included in the list');
    if (ctx.input.subscription_id !== undefined && !subscriptionId) throw new RoostError(404, 'Record not found');
    const rows = await blocklistEntriesPage(services, p, { state: state as EntryState | undefined, subscriptionId });
    const link = linkHeader(ctx.url, rows.map((r) => r.id), p);
    return json(rows.map(serializeBlocklistEntry), { headers: link ? { link } : {} });
  });

  router.get('/api/v1/admin/blocklist_entries/:id', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageFederation');
    const row = await findBlocklistEntry(services, requireId(ctx.params.id));
    if (!row) throw new RoostError(404, 'Record not found');
    return json(serializeBlocklistEntry(row));
  });

  router.post('/api/v1/admin/blocklist_entries/:id/approve', async (ctx) => {
    const { account } = await requirePermission(services, ctx, WRITE, 'manageFederation');
    return json(serializeBlocklistEntry(await approveBlocklistEntry(services, requireId(ctx.params.id), account.id)));
  });

  router.post('/api/v1/admin/blocklist_entries/:id/reject', async (ctx) => {
    const { account } = await requirePermission(services, ctx, WRITE, 'manageFederation');
    return json(serializeBlocklistEntry(await rejectBlocklistEntry(services, requireId(ctx.params.id), account.id)));
  });
}
