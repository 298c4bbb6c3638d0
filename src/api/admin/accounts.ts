/**
 * /api/v1/admin/accounts and /api/v2/admin/accounts (Mastodon's Api::V1::Admin::AccountsController
 * and Api::V2::Admin::AccountsController): the filtered list, one account, approve, reject, delete
 * a suspended account's data, act (`action`) and the reversals. A user's token with
 * admin:read(:accounts) or admin:write(:accounts), and a role that may manage users (delete:
 * delete user data). Rendered by views/admin-accounts.ts, the one Admin::Account.
 *
 * A Roost extension: POST /api/v1/admin/accounts/:id/role {role_id} gives a local user a role
 * (null or blank: none); the role must manage roles (services/roles.ts decides who outranks whom).
 */
import ipaddr from 'ipaddr.js';
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramBool, paramString, paramStrings, requireId } from '../../http/index.ts';
import type { ParamValue } from '../../http/params.ts';
import type { Services } from '../../context.ts';
import { requirePermission } from '../auth.ts';
import { linkHeader, pageParams } from '../pagination.ts';
import { RoostError } from '../../lib/errors.ts';
import type { AdminAccountFilter } from '../../services/reads/admin-accounts.ts';
import { actOnAccount, approveAccount, deleteAccountData, rejectAccount, reverseAction, REVERSALS } from '../../services/admin-accounts.ts';
import { assignRole } from '../../services/roles.ts';
import { adminAccountListViews, adminAccountViews } from '../../views/admin-accounts.ts';

const READ = ['admin:read', 'admin:read:accounts'];
const WRITE = ['admin:write', 'admin:write:accounts'];

const STATUSES = ['active', 'pending', 'disabled', 'silenced', 'suspended', 'sensitized'] as const;

/** A filter value as Mastodon reads it: blank is absent. */
function text(v: ParamValue | undefined): string | undefined {
  const s = paramString(v)?.trim();
  return s ? s : undefined;
}

function checkIp(ip: string | undefined): string | undefined {
  if (ip === undefined) return undefined;
  if (!ipaddr.isValid(ip) && !ipaddr.isValidCIDR(ip)) throw new RoostError(400, `Invalid IP address: ${ip}`);
  return ip;
}

/** The v2 filter (origin, status, permissions, role_ids[], invited_by, username, display_name, by_domain, email, ip). */
function v2Filter(ctx: RequestContext): AdminAccountFilter {
  const q = ctx.query;
  const origin = text(q.origin);
  if (origin !== undefined && origin !== 'local' && origin !== 'remote') throw new RoostError(400, `Unknown origin: ${origin}`);
  const status = text(q.status);
  if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) throw new RoostError(400, `Unknown status: ${status}`);
  const permissions = text(q.permissions);
  if (permissions !== undefined && permissions !== 'staff') throw new RoostError(400, `Unknown permissions: ${permissions}`);
  const roleIds = paramStrings(q.role_ids ?? q['role_ids[]']).filter((s) => s !== '');
  return {
    origin,
    status: status as AdminAccountFilter['status'],
    permissions,
    roleIds: roleIds.length ? roleIds : undefined,
    invitedBy: text(q.invited_by),
    username: text(q.username),
    displayName: text(q.display_name),
    byDomain: text(q.by_domain),
    email: text(q.email),
    ip: checkIp(text(q.ip)),
  };
}

/** v1's booleans translated to the filter, as Mastodon's PARAMS_TO_FILTER_PARAMS. */
function v1Filter(ctx: RequestContext): AdminAccountFilter {
  const q = ctx.query;
  const on = (k: string) => paramBool(q[k], false);
  let status: AdminAccountFilter['status'];
  for (const s of STATUSES) if (on(s)) status = s;
  return {
    origin: on('local') ? 'local' : on('remote') ? 'remote' : undefined,
    status,
    permissions: on('staff') ? 'staff' : undefined,
    username: text(q.username),
    displayName: text(q.display_name),
    byDomain: text(q.by_domain),
    email: text(q.email),
    ip: checkIp(text(q.ip)),
  };
}

async function one(services: Services, id: string) {
  const view = (await adminAccountViews(services, [id])).get(id);
  if (!view) throw new RoostError(404, 'Record not found');
  return view;
}

export function adminAccountsRoutes(router: Router, services: Services): void {
  const list = (filter: (ctx: RequestContext) => AdminAccountFilter) => async (ctx: RequestContext) => {
    await requirePermission(services, ctx, READ, 'manageUsers');
    const f = filter(ctx);
    const p = pageParams(ctx, 100, 200);
    const { ids, accounts } = await adminAccountListViews(services, f, p);
    const link = linkHeader(ctx.url, ids, p);
    return json(accounts, { headers: link ? { link } : {} });
  };
  router.get('/api/v1/admin/accounts', list(v1Filter));
  router.get('/api/v2/admin/accounts', list(v2Filter));

  router.get('/api/v1/admin/accounts/:id', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageUsers');
    return json(await one(services, requireId(ctx.params.id)));
  });

  router.post('/api/v1/admin/accounts/:id/approve', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageUsers');
    const id = requireId(ctx.params.id);
    await approveAccount(services, me.account.id, id);
    return json(await one(services, id));
  });

  router.post('/api/v1/admin/accounts/:id/reject', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageUsers');
    const id = requireId(ctx.params.id);
    // Answered with the account as it was: after the rejection there is nothing left to render.
    const before = await one(services, id);
    await rejectAccount(services, me.account.id, id);
    return json(before);
  });

  router.delete('/api/v1/admin/accounts/:id', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'deleteUserData');
    const id = requireId(ctx.params.id);
    const before = await one(services, id);
    await deleteAccountData(services, me.account.id, id);
    return json((await adminAccountViews(services, [id])).get(id) ?? before);
  });

  router.post('/api/v1/admin/accounts/:id/action', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageUsers');
    const p = ctx.input;
    await actOnAccount(services, me.account.id, requireId(ctx.params.id), {
      type: text(p.type),
      reportId: text(p.report_id) ?? null,
      warningPresetId: text(p.warning_preset_id) ?? null,
      text: paramString(p.text) ?? null,
      sendEmailNotification: paramBool(p.send_email_notification, false),
    });
    return json({});
  });

  for (const reversal of REVERSALS) {
    router.post(`/api/v1/admin/accounts/:id/${reversal}`, async (ctx) => {
      const me = await requirePermission(services, ctx, WRITE, 'manageUsers');
      const id = requireId(ctx.params.id);
      await reverseAction(services, me.account.id, id, reversal);
      return json(await one(services, id));
    });
  }

  router.post('/api/v1/admin/accounts/:id/role', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageRoles');
    const id = requireId(ctx.params.id);
    const raw = ctx.input.role_id;
    if (raw !== undefined && raw !== null && typeof raw !== 'string' && typeof raw !== 'number') throw new RoostError(422, 'Validation failed: Role is invalid');
    const roleId = raw === undefined || raw === null || String(raw).trim() === '' ? null : String(raw).trim();
    await assignRole(services, { accountId: me.account.id, roleId: me.user.roleId ?? null }, id, roleId);
    return json(await one(services, id));
  });
}
