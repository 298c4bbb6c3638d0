/**
 * Operator commands (`roost accounts …`). They run in the server process when it holds the
 * embedded database (through the control socket), or in the CLI's own process otherwise: the same
 * functions either way.
 */
import type { Services } from '../context.ts';
import { createLocalAccount } from '../services/accounts.ts';
import { RoostError } from '../lib/errors.ts';
import { AccountSchema, UserRoleSchema, UserSchema } from '../db/entities/index.ts';

export type CommandArgs = Record<string, unknown>;
export type Command = (services: Services, args: CommandArgs) => Promise<Record<string, unknown>>;

function reqString(args: CommandArgs, key: string): string {
  const v = args[key];
  if (typeof v !== 'string' || v === '') throw new RoostError(422, `${key} is required`);
  return v;
}

export const COMMANDS: Record<string, Command> = {
  'accounts.modify': modifyAccount,
  async 'accounts.create'(services, args) {
    const { account, password } = await createLocalAccount(services, {
      username: reqString(args, 'username'),
      email: reqString(args, 'email'),
      confirmed: args.confirmed === true,
      role: typeof args.role === 'string' ? args.role : null,
      allowReserved: true,
    });
    return { id: account.id, username: account.username, password };
  },
};

/**
 * `roost accounts modify`: role, approval, confirmation, login. Everything an operator would
 * otherwise do in SQL.
 */
async function modifyAccount(services: Services, args: CommandArgs): Promise<Record<string, unknown>> {
  const username = reqString(args, 'username');
  const em = services.db.em();
  const account = await em.findOne(AccountSchema, { username: { $ilike: username.replace(/[\\%_]/g, '\\$&') }, domain: null });
  const user = account ? await em.findOne(UserSchema, { accountId: account.id }) : null;
  if (!account || !user) throw new RoostError(404, `No local account ${username}`);
  const changes: string[] = [];
  if (typeof args.role === 'string') {
    const role = await em.findOne(UserRoleSchema, { name: { $ilike: args.role } });
    if (!role) throw new RoostError(422, `Role ${args.role} does not exist`);
    user.roleId = role.id;
    changes.push(`role ${role.name}`);
  }
  if (args.removeRole === true) {
    user.roleId = null;
    changes.push('role removed');
  }
  if (args.approve === true) {
    user.approved = true;
    changes.push('approved');
  }
  if (args.confirm === true) {
    user.confirmedAt ??= services.clock.now();
    changes.push('confirmed');
  }
  if (args.disable === true || args.enable === true) {
    user.disabled = args.disable === true;
    changes.push(user.disabled ? 'disabled' : 'enabled');
  }
  if (changes.length === 0) throw new RoostError(422, 'Nothing to change: give --role, --remove-role, --approve, --confirm, --disable or --enable');
  user.updatedAt = services.clock.now();
  await em.flush();
  return { username: account.username, changes };
}

export async function runCommand(services: Services, name: string, args: CommandArgs): Promise<Record<string, unknown>> {
  const cmd = COMMANDS[name];
  if (!cmd) throw new RoostError(404, `Unknown command ${name}`);
  return cmd(services, args);
}
