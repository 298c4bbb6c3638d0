/**
 * /api/v1/admin/roles: customisable roles (a Roost extension; Mastodon manages roles only in its
 * web admin). List, show, create, update (PUT or PATCH), delete. A user's token with admin:read or
 * admin:write, and a role that may manage roles; services/roles.ts decides which roles it may touch
 * (only those below it; Owner all).
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramBool, paramString, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requirePermission } from '../auth.ts';
import { RoostError } from '../../lib/errors.ts';
import { allRoles, roleById } from '../../services/reads/roles.ts';
import { createRole, deleteRole, updateRole, type RoleInput } from '../../services/roles.ts';
import { serializeAdminRole } from '../../serializers/admin-account.ts';

const READ = ['admin:read'];
const WRITE = ['admin:write'];

/** The attributes given (only those: an update changes only those); a list or an object where a value belongs is refused. */
function roleInput(ctx: RequestContext): RoleInput {
  const p = ctx.input;
  const scalar = (k: string): string | undefined => {
    const v = p[k];
    if (v === undefined || v === null) return undefined;
    const s = paramString(v);
    if (s === undefined) throw new RoostError(422, `Validation failed: ${k[0]!.toUpperCase()}${k.slice(1)} is invalid`);
    return s;
  };
  return {
    name: scalar('name'),
    color: scalar('color'),
    position: scalar('position'),
    permissions: scalar('permissions'),
    highlighted: paramBool(p.highlighted),
  };
}

export function adminRolesRoutes(router: Router, services: Services): void {
  const actor = (me: { account: { id: string }; user: { roleId?: string | null } }) => ({ accountId: me.account.id, roleId: me.user.roleId ?? null });

  router.get('/api/v1/admin/roles', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageRoles');
    return json((await allRoles(services)).map(serializeAdminRole));
  });

  router.get('/api/v1/admin/roles/:id', async (ctx) => {
    await requirePermission(services, ctx, READ, 'manageRoles');
    const row = await roleById(services, requireId(ctx.params.id));
    if (!row) throw new RoostError(404, 'Record not found');
    return json(serializeAdminRole(row));
  });

  router.post('/api/v1/admin/roles', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageRoles');
    return json(serializeAdminRole(await createRole(services, actor(me), roleInput(ctx))));
  });

  router.update('/api/v1/admin/roles/:id', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageRoles');
    return json(serializeAdminRole(await updateRole(services, actor(me), requireId(ctx.params.id), roleInput(ctx))));
  });

  router.delete('/api/v1/admin/roles/:id', async (ctx) => {
    const me = await requirePermission(services, ctx, WRITE, 'manageRoles');
    await deleteRole(services, actor(me), requireId(ctx.params.id));
    return json({});
  });
}
