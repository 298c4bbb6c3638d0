/**
 * What a user's role allows (Mastodon's UserRole#can?): the role's permission bits, every one for
 * an administrator, plus what the implicit "everyone" role grants. One indexed statement.
 */
import type { Services } from '../../context.ts';
import { PERMISSIONS } from '../../db/entities/index.ts';

export type Permission = keyof typeof PERMISSIONS;

/** What every user may do without a role (Mastodon's "everyone" role): invite users. */
const EVERYONE = PERMISSIONS.inviteUsers;

export async function roleCan(services: Services, roleId: string | null, permission: Permission): Promise<boolean> {
  let bits = EVERYONE;
  if (roleId !== null) {
    const [row] = await services.db.sql.query<{ permissions: string }>(`select permissions::text as permissions from user_roles where id = $1`, [roleId]);
    if (row) bits |= BigInt(row.permissions);
  }
  return (bits & PERMISSIONS.administrator) !== 0n || (bits & PERMISSIONS[permission]) !== 0n;
}
