/**
 * Mastodon's Admin::Account (REST::Admin::AccountSerializer) and the Role entity it carries
 * (REST::RoleSerializer). Pure: the facts and the nested Account come in rendered by
 * views/admin-accounts.ts.
 */
import type { AdminAccountFacts, AdminAccountRole } from '../services/reads/admin-accounts.ts';
import type { MastodonAccount } from './account.ts';

export interface MastodonRole {
  id: string;
  name: string;
  color: string;
  /** The permission bits as a decimal string (Mastodon's UserRole::FLAGS). */
  permissions: string;
  highlighted: boolean;
}

export interface AdminAccountJson {
  id: string;
  username: string;
  domain: string | null;
  created_at: string;
  email: string | null;
  /** The address last used (a plain string since Mastodon 4.0), null when none is known. */
  ip: string | null;
  ips: { ip: string; used_at: string }[];
  locale: string | null;
  invite_request: string | null;
  /** The user's role; Mastodon's implicit "everyone" role (id -99) for a user without one; null for a remote account. */
  role: MastodonRole | null;
  confirmed: boolean;
  approved: boolean;
  disabled: boolean;
  silenced: boolean;
  suspended: boolean;
  sensitized: boolean;
  account: MastodonAccount;
  /** Only when the user signed up through an application. */
  created_by_application_id?: string;
  /** Only when the user was invited. */
  invited_by_account_id?: string;
}

/** Mastodon's UserRole.everyone: what a user without a role holds (invite users). */
export const EVERYONE_ROLE: MastodonRole = { id: '-99', name: '', color: '', permissions: String(1 << 16), highlighted: false };

export function serializeRole(role: Pick<AdminAccountRole, 'id' | 'name' | 'color' | 'permissions' | 'highlighted'>): MastodonRole {
  return { id: role.id, name: role.name, color: role.color, permissions: role.permissions, highlighted: role.highlighted };
}

export function serializeAdminAccount(f: AdminAccountFacts, account: MastodonAccount): AdminAccountJson {
  const u = f.user;
  const out: AdminAccountJson = {
    id: f.id,
    username: f.username,
    domain: f.domain,
    created_at: f.createdAt.toISOString(),
    email: u?.email ?? null,
    ip: u?.ips[0]?.ip ?? null,
    ips: (u?.ips ?? []).map((x) => ({ ip: x.ip, used_at: x.usedAt.toISOString() })),
    locale: u?.locale ?? null,
    invite_request: u?.signUpReason ?? null,
    role: u ? (u.role ? serializeRole(u.role) : EVERYONE_ROLE) : null,
    confirmed: u?.confirmed ?? false,
    approved: u?.approved ?? false,
    disabled: u?.disabled ?? false,
    silenced: f.silenced,
    suspended: f.suspended,
    sensitized: f.sensitized,
    account,
  };
  if (u?.createdByApplicationId) out.created_by_application_id = u.createdByApplicationId;
  if (u?.invitedByAccountId) out.invited_by_account_id = u.invitedByAccountId;
  return out;
}

/** A role as the roles API (a Roost extension) renders it: the Role entity plus its position and times. */
export interface AdminRoleJson extends MastodonRole {
  position: number;
  created_at: string;
  updated_at: string;
}

export function serializeAdminRole(r: { id: string; name: string; color: string; permissions: string; highlighted: boolean; position: number; created_at: Date; updated_at: Date }): AdminRoleJson {
  return {
    ...serializeRole(r),
    position: r.position,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}
