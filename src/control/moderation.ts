/**
 * `roost roles …` and the emergencies of `roost accounts …` (suspend, unsuspend, silence,
 * unsilence, approve, reject, pending): the operator's moderation on the services the admin API
 * uses (services/roles.ts, services/admin-accounts.ts), acting as nobody (the audit log's actor
 * is null) and above every role. Run in the server process or the CLI's (see ./commands.ts).
 */
import type { Services } from '../context.ts';
import { RoostError } from '../lib/errors.ts';
import { accountIdFor, actOnAccount, approveAccount, rejectAccount, reverseAction } from '../services/admin-accounts.ts';
import { adminAccountFacts, adminAccountPage } from '../services/reads/admin-accounts.ts';
import { allRoles, roleByName, unknownRoleMessage, type RoleRow } from '../services/reads/roles.ts';
import { assignRole, createRole, deleteRole, updateRole, type RoleInput } from '../services/roles.ts';
import { PERMISSIONS } from '../db/entities/index.ts';

type Args = Record<string, unknown>;

function req(args: Args, key: string): string {
  const v = args[key];
  if (typeof v !== 'string' || v === '') throw new RoostError(422, `${key} is required`);
  return v;
}

const opt = (args: Args, key: string): string | undefined => (typeof args[key] === 'string' ? (args[key] as string) : undefined);

/** Permission names (manage_users, manageReports …) or a number → Mastodon's bits as a decimal string. */
export function permissionBits(spec: string): string {
  const s = spec.trim();
  if (/^\d+$/.test(s)) return s;
  let bits = 0n;
  for (const raw of s.split(',').map((x) => x.trim()).filter(Boolean)) {
    const key = raw.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()) as keyof typeof PERMISSIONS;
    if (!Object.hasOwn(PERMISSIONS, key)) throw new RoostError(422, `Unknown permission ${raw} (known: ${Object.keys(PERMISSIONS).join(', ')})`);
    bits |= PERMISSIONS[key];
  }
  return bits.toString();
}

/** The names of the bits set, for the listing. */
function permissionNames(bits: string): string[] {
  const b = BigInt(bits);
  return Object.entries(PERMISSIONS).filter(([, v]) => (b & v) !== 0n).map(([k]) => k);
}

function roleSummary(r: RoleRow) {
  return { id: r.id, name: r.name, position: r.position, color: r.color, highlighted: r.highlighted, permissions: r.permissions, permissionNames: permissionNames(r.permissions) };
}

async function roleNamed(services: Services, name: string): Promise<RoleRow> {
  const role = await roleByName(services, name);
  if (!role) throw new RoostError(422, await unknownRoleMessage(services, name));
  return role;
}

function roleInput(args: Args): RoleInput {
  return {
    name: opt(args, 'newName') ?? opt(args, 'name'),
    color: opt(args, 'color'),
    position: opt(args, 'position'),
    permissions: opt(args, 'permissions') === undefined ? undefined : permissionBits(opt(args, 'permissions')!),
    highlighted: typeof args.highlighted === 'boolean' ? args.highlighted : undefined,
  };
}

export const MODERATION_COMMANDS = {
  async 'roles.list'(services: Services) {
    return { roles: (await allRoles(services)).map(roleSummary) };
  },
  async 'roles.create'(services: Services, args: Args) {
    const input = roleInput(args);
    return { role: roleSummary(await createRole(services, null, { ...input, name: req(args, 'name') })) };
  },
  async 'roles.update'(services: Services, args: Args) {
    const role = await roleNamed(services, req(args, 'name'));
    const { name: _n, ...rest } = roleInput(args);
    const change: RoleInput = { ...rest, name: opt(args, 'newName') };
    if (Object.values(change).every((v) => v === undefined)) throw new RoostError(422, 'Nothing to change: give --name, --color, --position, --permissions or --highlighted');
    return { role: roleSummary(await updateRole(services, null, role.id, change)) };
  },
  async 'roles.delete'(services: Services, args: Args) {
    const role = await roleNamed(services, req(args, 'name'));
    return { role: roleSummary(await deleteRole(services, null, role.id)) };
  },
  async 'roles.assign'(services: Services, args: Args) {
    const username = req(args, 'username');
    const id = await accountIdFor(services, username);
    const roleName = opt(args, 'role');
    const role = roleName ? await roleNamed(services, roleName) : null;
    await assignRole(services, null, id, role?.id ?? null);
    return { username, role: role?.name ?? null };
  },
  async 'accounts.pending'(services: Services) {
    const ids = await adminAccountPage(services, { origin: 'local', status: 'pending' }, { maxId: null, sinceId: null, minId: null, limit: 200 });
    const facts = await adminAccountFacts(services, ids);
    return {
      accounts: ids.flatMap((id) => {
        const f = facts.get(id);
        return f?.user ? [{ id, username: f.username, email: f.user.email, reason: f.user.signUpReason, createdAt: f.createdAt.toISOString() }] : [];
      }),
    };
  },
  ...Object.fromEntries(
    (['suspend', 'silence'] as const).map((type) => [
      `accounts.${type}`,
      async (services: Services, args: Args) => {
        const user = req(args, 'user');
        await actOnAccount(services, null, await accountIdFor(services, user), { type, text: opt(args, 'text') ?? null });
        return { user, done: type === 'suspend' ? 'suspended' : 'silenced' };
      },
    ]),
  ),
  ...Object.fromEntries(
    (['unsuspend', 'unsilence'] as const).map((reversal) => [
      `accounts.${reversal}`,
      async (services: Services, args: Args) => {
        const user = req(args, 'user');
        await reverseAction(services, null, await accountIdFor(services, user), reversal);
        return { user, done: reversal === 'unsuspend' ? 'unsuspended' : 'unsilenced' };
      },
    ]),
  ),
  async 'accounts.approve'(services: Services, args: Args) {
    const user = req(args, 'user');
    await approveAccount(services, null, await accountIdFor(services, user));
    return { user, done: 'approved' };
  },
  async 'accounts.reject'(services: Services, args: Args) {
    const user = req(args, 'user');
    await rejectAccount(services, null, await accountIdFor(services, user));
    return { user, done: 'rejected (the sign-up is deleted)' };
  },
};
