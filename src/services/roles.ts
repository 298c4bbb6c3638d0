/**
 * Customisable roles (Mastodon's UserRole): create, update, delete, and assign one to a user. The
 * admin API's roles routes (a Roost extension: src/api/admin/roles.ts) and `roost roles …`
 * (src/control/commands.ts) call these same functions.
 *
 * Who may manage what, as Mastodon's RolePolicy and UserRole validations:
 * - a role may manage only roles below its position; a role with the `administrator` bit (Owner)
 *   manages all; the operator at the CLI (no acting role) manages all;
 * - a role cannot give a role a position at or above its own, nor permissions it does not hold
 *   ("elevation"), nor edit itself;
 * - assigning: the acting role must outrank the user's current role and the role given, and
 *   nobody changes their own role.
 * Every change writes its audit entry in its transaction.
 */
import type { Services } from '../context.ts';
import { PERMISSIONS } from '../db/entities/index.ts';
import { sqlFromEm } from '../db/sql.ts';
import { RoostError, forbidden, notFound } from '../lib/errors.ts';
import { logAdminAction } from './audit-log.ts';
import { forgetViewer } from './reads/viewer.ts';
import type { RoleRow } from './reads/roles.ts';

/** The moderator acting (their account and role), or null: the operator at the CLI. */
export type RoleActor = { accountId: string; roleId: string | null } | null;

export interface RoleInput {
  name?: string;
  color?: string;
  position?: number | string;
  /** Mastodon's bit values, as a decimal string or a number. */
  permissions?: string | number;
  highlighted?: boolean;
}

const ALL_BITS = Object.values(PERMISSIONS).reduce((a, b) => a | b, 0n);
const COLOR = /^#?(?:[A-F0-9]{3}){1,2}$/i;
const COLUMNS = `id::text, name, color, permissions::text, position, highlighted, created_at, updated_at`;

function invalid(...problems: string[]): RoostError {
  return new RoostError(422, `Validation failed: ${problems.join(', ')}`);
}

interface ActingRole {
  id: string | null;
  position: number;
  bits: bigint;
  admin: boolean;
}

/** The acting role's rank (null actor: the operator, above everything). */
async function actingRole(services: Services, by: RoleActor): Promise<ActingRole> {
  if (by === null) return { id: null, position: Number.POSITIVE_INFINITY, bits: ALL_BITS, admin: true };
  if (by.roleId === null) return { id: null, position: -1, bits: PERMISSIONS.inviteUsers, admin: false };
  const [r] = await services.db.sql.query<{ position: number; permissions: string }>(`select position, permissions::text from user_roles where id = $1`, [by.roleId]);
  if (!r) return { id: null, position: -1, bits: PERMISSIONS.inviteUsers, admin: false };
  const bits = BigInt(r.permissions);
  return { id: by.roleId, position: r.position, bits, admin: (bits & PERMISSIONS.administrator) !== 0n };
}

const outranks = (me: ActingRole, position: number): boolean => me.admin || me.position > position;

/** Checks and normalises the attributes given (only those given: an update changes only those). */
function validated(input: RoleInput, me: ActingRole, creating: boolean): { name?: string; color?: string; position?: number; permissions?: bigint; highlighted?: boolean } {
  const problems: string[] = [];
  const out: ReturnType<typeof validated> = {};
  if (input.name !== undefined || creating) {
    const name = (input.name ?? '').trim();
    if (name === '') problems.push("Name can't be blank");
    else if ([...name].length > 64) problems.push('Name is too long (maximum is 64 characters)');
    else out.name = name;
  }
  if (input.color !== undefined) {
    const color = input.color.trim();
    if (color !== '' && !COLOR.test(color)) problems.push('Color is invalid');
    else out.color = color === '' || color.startsWith('#') ? color : `#${color}`;
  }
  if (input.position !== undefined) {
    const n = typeof input.position === 'number' ? input.position : /^-?\d{1,9}$/.test(input.position.trim()) ? Number(input.position) : NaN;
    if (!Number.isSafeInteger(n) || Math.abs(n) > 2 ** 31 - 1) problems.push('Position is not a number');
    else if (!outranks(me, n)) problems.push('Position cannot be higher than your current role');
    else out.position = n;
  }
  if (input.permissions !== undefined) {
    const raw = String(input.permissions).trim();
    const bits = /^\d{1,19}$/.test(raw) ? BigInt(raw) : null;
    if (bits === null || (bits & ~ALL_BITS) !== 0n) problems.push('Permissions are invalid');
    else if (!me.admin && (bits & ~me.bits) !== 0n) problems.push('Permissions cannot include permissions your current role does not have');
    else out.permissions = bits;
  }
  if (input.highlighted !== undefined) out.highlighted = input.highlighted;
  if (problems.length) throw invalid(...problems);
  return out;
}

function uniqueName(e: unknown): never {
  if ((e as { code?: string }).code === '23505') throw invalid('Name has already been taken');
  throw e;
}

export async function createRole(services: Services, by: RoleActor, input: RoleInput): Promise<RoleRow> {
  const me = await actingRole(services, by);
  const v = validated(input, me, true);
  // A new role starts below the acting one (Mastodon's form defaults to position 0).
  const position = v.position ?? 0;
  if (!outranks(me, position)) throw invalid('Position cannot be higher than your current role');
  const now = services.clock.now();
  const id = services.ids.next();
  return services.db.em()
    .transactional(async (tx) => {
      const sql = sqlFromEm(tx);
      const [row] = await sql.query<RoleRow>(
        `insert into user_roles (id, name, color, permissions, position, highlighted, created_at, updated_at)
         values ($1, $2, $3, $4::bigint, $5, $6, $7, $7) returning ${COLUMNS}`,
        [id, v.name, v.color ?? '', (v.permissions ?? 0n).toString(), position, v.highlighted ?? false, now],
      );
      await logAdminAction(services, sql, { actorAccountId: by?.accountId ?? null, action: 'create', targetType: 'UserRole', targetId: id, humanIdentifier: v.name });
      return row!;
    })
    .catch(uniqueName);
}

async function lockRole(sql: ReturnType<typeof sqlFromEm>, id: string): Promise<RoleRow> {
  if (!/^\d{1,18}$/.test(id)) throw notFound();
  const [row] = await sql.query<RoleRow>(`select ${COLUMNS} from user_roles where id = $1 for update`, [id]);
  if (!row) throw notFound();
  return row;
}

/** May `me` manage `role`? Not its own role, and only below it (403 otherwise, as Mastodon's policy). */
function mayManage(me: ActingRole, role: RoleRow): void {
  if (me.id !== null && me.id === role.id && !me.admin) throw forbidden();
  if (!outranks(me, role.position)) throw forbidden();
}

export async function updateRole(services: Services, by: RoleActor, id: string, input: RoleInput): Promise<RoleRow> {
  const me = await actingRole(services, by);
  return services.db.em()
    .transactional(async (tx) => {
      const sql = sqlFromEm(tx);
      const current = await lockRole(sql, id);
      mayManage(me, current);
      const v = validated(input, me, false);
      const [row] = await sql.query<RoleRow>(
        `update user_roles set name = $2, color = $3, permissions = $4::bigint, position = $5, highlighted = $6, updated_at = $7
          where id = $1 returning ${COLUMNS}`,
        [
          id,
          v.name ?? current.name,
          v.color ?? current.color,
          (v.permissions ?? BigInt(current.permissions)).toString(),
          v.position ?? current.position,
          v.highlighted ?? current.highlighted,
          services.clock.now(),
        ],
      );
      await logAdminAction(services, sql, { actorAccountId: by?.accountId ?? null, action: 'update', targetType: 'UserRole', targetId: id, humanIdentifier: row!.name });
      return row!;
    })
    .then((row) => {
      // Cached viewers carry their role's permission bits (reads/viewer.ts): the new ones count now.
      forgetViewer(services);
      return row;
    })
    .catch(uniqueName);
}

/** Deletes a role; its users are left without one (users.role_id is set null by the foreign key). */
export async function deleteRole(services: Services, by: RoleActor, id: string): Promise<RoleRow> {
  const me = await actingRole(services, by);
  const row = await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const current = await lockRole(sql, id);
    mayManage(me, current);
    await sql.query(`delete from user_roles where id = $1`, [id]);
    await logAdminAction(services, sql, { actorAccountId: by?.accountId ?? null, action: 'destroy', targetType: 'UserRole', targetId: id, humanIdentifier: current.name });
    return current;
  });
  forgetViewer(services);
  return row;
}

/** Gives the local account's user `roleId` (null: no role). 404 for an unknown account or role, 403 when the acting role may not. */
export async function assignRole(services: Services, by: RoleActor, accountId: string, roleId: string | null): Promise<void> {
  const me = await actingRole(services, by);
  await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    if (!/^\d{1,19}$/.test(accountId)) throw notFound();
    const [user] = await sql.query<{ id: string; username: string; role_id: string | null; position: number | null }>(
      `select u.id::text, a.username, u.role_id::text, r.position
         from users u join accounts a on a.id = u.account_id left join user_roles r on r.id = u.role_id
        where u.account_id = $1 for update of u`,
      [accountId],
    );
    if (!user) throw notFound();
    if (by !== null && by.accountId === accountId) throw forbidden();
    if (user.position !== null && !outranks(me, user.position)) throw forbidden();
    let role: RoleRow | null = null;
    if (roleId !== null) {
      if (!/^\d{1,18}$/.test(roleId)) throw invalid('Role is invalid');
      [role] = await sql.query<RoleRow>(`select ${COLUMNS} from user_roles where id = $1`, [roleId]);
      if (!role) throw invalid('Role is invalid');
      if (!outranks(me, role.position)) throw forbidden();
    }
    await sql.query(`update users set role_id = $2, updated_at = $3 where id = $1`, [user.id, roleId, services.clock.now()]);
    await logAdminAction(services, sql, {
      actorAccountId: by?.accountId ?? null,
      action: 'change_role',
      targetType: 'User',
      targetId: accountId,
      humanIdentifier: user.username,
      detail: { from: user.role_id, to: roleId, role: role?.name ?? null },
    });
  });
  forgetViewer(services);
}
