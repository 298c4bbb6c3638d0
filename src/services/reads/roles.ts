/**
 * What a user's role allows (Mastodon's UserRole#can?): the role's permission bits, every one for
 * an administrator, plus what the implicit "everyone" role grants. The bits come with the
 * authenticated viewer (reads/viewer.ts reads them in the token's statement).
 */
import type { Services } from '../../context.ts';
import { PERMISSIONS } from '../../db/entities/index.ts';

export type Permission = keyof typeof PERMISSIONS;

/** What every user may do without a role (Mastodon's "everyone" role): invite users. */
const EVERYONE = PERMISSIONS.inviteUsers;

/** Whether a role with `rolePermissions` (user_roles.permissions as text; null: no role) has `permission`. */
export function rolePermits(rolePermissions: string | null, permission: Permission): boolean {
  const bits = EVERYONE | (rolePermissions === null ? 0n : BigInt(rolePermissions));
  return (bits & PERMISSIONS.administrator) !== 0n || (bits & PERMISSIONS[permission]) !== 0n;
}

export interface RoleRow {
  id: string;
  name: string;
  color: string;
  permissions: string;
  position: number;
  highlighted: boolean;
  created_at: Date;
  updated_at: Date;
}

const ROLE_COLUMNS = `id::text, name, color, permissions::text, position, highlighted, created_at, updated_at`;

/** Every role, highest position first (Mastodon's admin roles page order). */
export async function allRoles(services: Services): Promise<RoleRow[]> {
  return services.db.sql.query<RoleRow>(`select ${ROLE_COLUMNS} from user_roles order by position desc, id`);
}

export async function roleById(services: Services, id: string): Promise<RoleRow | null> {
  if (!/^\d{1,18}$/.test(id)) return null;
  const [row] = await services.db.sql.query<RoleRow>(`select ${ROLE_COLUMNS} from user_roles where id = $1`, [id]);
  return row ?? null;
}

/** A role by its name, case-insensitively (the CLI names roles). */
export async function roleByName(services: Services, name: string): Promise<RoleRow | null> {
  const [row] = await services.db.sql.query<RoleRow>(`select ${ROLE_COLUMNS} from user_roles where lower(name) = lower($1)`, [name]);
  return row ?? null;
}

/** "Role King does not exist (roles: Owner, Admin, Moderator)": the names an operator may give, by position. */
export async function unknownRoleMessage(services: Services, name: string): Promise<string> {
  const names = (await allRoles(services)).sort((a, b) => b.position - a.position).map((r) => r.name);
  return `Role ${name} does not exist (roles: ${names.join(', ')})`;
}
