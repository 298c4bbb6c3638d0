/**
 * Operator commands (`roost accounts …`). They run in the server process when it holds the
 * embedded database (through the control socket), or in the CLI's own process otherwise: the same
 * functions either way.
 */
import { stepAccount } from '../services/account-actor.ts';
import type { AccountEvent } from '../../actors/account/account.machine.ts';
import type { Services } from '../context.ts';
import { createLocalAccount } from '../services/accounts.ts';
import { unknownRoleMessage } from '../services/reads/roles.ts';
import { mintAccessToken, resetPassword } from '../services/operator-access.ts';
import { RoostError } from '../lib/errors.ts';
import { AccountSchema, UserRoleSchema, UserSchema } from '../db/entities/index.ts';
import type { RoostFederation } from '../federation/index.ts';
import { accountResolver } from '../federation/lookup.ts';
import { migrateLocalAccount, setAccountAliases } from '../services/moves.ts';
import { forgetViewer } from '../services/reads/viewer.ts';
import {
  createDomainAllow,
  createDomainBlock,
  domainAllowIdFor,
  domainBlockIdFor,
  ExistingDomainBlockError,
  removeDomainAllow,
  removeDomainBlock,
  updateDomainBlock,
  validDomain,
  type DomainBlockInput,
} from '../services/domain-blocks.ts';
import { allDomainAllows, allDomainBlocks } from '../services/reads/domain-blocks.ts';
import { deliveryState } from '../federation/delivery.ts';
import { EMOJI_COMMANDS } from './emojis.ts';
import { adminReportsPage } from '../services/reads/reports.ts';
import { reopenReport, resolveReport } from '../services/report-moderation.ts';
import { adminActionPage } from '../services/audit-log.ts';
import { SIGN_UP_BLOCK_COMMANDS } from './sign-up-blocks.ts';
import { MODERATION_COMMANDS } from './moderation.ts';
import { WEBHOOK_COMMANDS } from './webhooks.ts';
import { BLOCKLIST_COMMANDS } from './blocklists.ts';

export type CommandArgs = Record<string, unknown>;
/** What a command may need beyond the services: the federation, to find remote accounts. */
export interface CommandDeps {
  federation: RoostFederation;
}
export type Command = (services: Services, args: CommandArgs, deps: CommandDeps) => Promise<Record<string, unknown>>;

function stringList(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' && x !== '')) return v as string[];
  throw new RoostError(422, 'expected a list of accounts');
}

function reqString(args: CommandArgs, key: string): string {
  const v = args[key];
  if (typeof v !== 'string' || v === '') throw new RoostError(422, `${key} is required`);
  return v;
}

function optString(args: CommandArgs, key: string): string | undefined {
  const v = args[key];
  return typeof v === 'string' ? v : undefined;
}

/** A block as the CLI prints it. */
function blockSummary(b: { domain: string; severity: string; reject_media: boolean; reject_reports: boolean; obfuscate: boolean; public_comment: string | null; private_comment: string | null }) {
  return {
    domain: b.domain,
    severity: b.severity,
    rejectMedia: b.reject_media,
    rejectReports: b.reject_reports,
    obfuscate: b.obfuscate,
    publicComment: b.public_comment,
    privateComment: b.private_comment,
  };
}

/** A --limit: a whole number from 1 to `max` (default `fallback`). */
function limitArg(args: CommandArgs, fallback: number, max: number): number {
  const v = args.limit;
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) throw new RoostError(422, `limit must be a whole number from 1 to ${max}`);
  return v;
}

/** The acct (username, or username@domain) of the accounts `ids`, by id. */
async function acctOf(services: Services, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await services.db.sql.query<{ id: string; acct: string }>(
    `select id::text, username || coalesce('@' || domain, '') as acct from accounts where id = any($1::bigint[])`,
    [[...new Set(ids)]],
  );
  return new Map(rows.map((r) => [r.id, r.acct]));
}

export const COMMANDS: Record<string, Command> = {
  ...EMOJI_COMMANDS,
  /** `roost reports list`: the unresolved reports (or the resolved ones), newest first. */
  async 'reports.list'(services, args) {
    const rows = await adminReportsPage(services, { resolved: args.resolved === true }, { maxId: null, sinceId: null, minId: null, limit: limitArg(args, 100, 1000) });
    const names = await acctOf(services, rows.flatMap((r) => [r.accountId, r.targetAccountId, ...(r.assignedAccountId ? [r.assignedAccountId] : [])]));
    return {
      reports: rows.map((r) => ({
        id: r.id,
        createdAt: r.createdAt.toISOString(),
        category: r.category,
        reporter: names.get(r.accountId) ?? r.accountId,
        target: names.get(r.targetAccountId) ?? r.targetAccountId,
        statuses: r.statusIds.length,
        assigned: r.assignedAccountId ? (names.get(r.assignedAccountId) ?? r.assignedAccountId) : null,
        resolvedAt: r.actionTakenAt?.toISOString() ?? null,
        comment: r.comment,
      })),
    };
  },
  /** `roost reports resolve|reopen ID`: as a moderator would, the operator recorded as the actor (null). */
  async 'reports.resolve'(services, args) {
    const r = await resolveReport(services, null, reqString(args, 'id'));
    return { id: r.id, resolvedAt: r.actionTakenAt?.toISOString() ?? null };
  },
  async 'reports.reopen'(services, args) {
    const r = await reopenReport(services, null, reqString(args, 'id'));
    return { id: r.id, resolvedAt: null };
  },
  /** `roost audit`: the latest admin actions, newest first. */
  async 'audit.list'(services, args) {
    const rows = await adminActionPage(services, { limit: limitArg(args, 50, 1000) });
    const names = await acctOf(services, rows.flatMap((r) => (r.account_id ? [r.account_id] : [])));
    return {
      entries: rows.map((r) => ({
        id: r.id,
        at: new Date(r.created_at).toISOString(),
        who: r.account_id === null ? null : (names.get(r.account_id) ?? r.account_id),
        action: r.action,
        targetType: r.target_type,
        targetId: r.target_id,
        target: r.human_identifier,
      })),
    };
  },
  ...SIGN_UP_BLOCK_COMMANDS,
  ...MODERATION_COMMANDS,
  ...WEBHOOK_COMMANDS,
  ...BLOCKLIST_COMMANDS,
  async migrate(services) {
    return { applied: await services.db.migrate() };
  },
  /** What became of an activity's deliveries (federation/delivery.ts). */
  async 'deliveries.show'(services, args) {
    const activityId = reqString(args, 'activityId');
    const state = await deliveryState(services.db.sql, activityId);
    if (!state) throw new RoostError(404, `No delivery of ${activityId}`);
    return { delivery: state };
  },
  async 'accounts.list'(services) {
    const rows = await services.db.sql.query<{
      username: string;
      role: string | null;
      confirmed: boolean;
      approved: boolean;
      disabled: boolean;
      created_at: Date | string;
    }>(
      `select a.username, r.name as role, u.confirmed_at is not null as confirmed, u.approved, u.disabled, u.created_at
         from users u join accounts a on a.id = u.account_id left join user_roles r on r.id = u.role_id
        order by u.created_at, u.id`,
    );
    return {
      accounts: rows.map((r) => ({
        username: r.username,
        role: r.role,
        confirmed: r.confirmed,
        approved: r.approved,
        disabled: r.disabled,
        createdAt: new Date(r.created_at).toISOString(),
      })),
    };
  },
  'accounts.modify': modifyAccount,
  async 'accounts.token'(services, args) {
    return mintAccessToken(services, reqString(args, 'username'), optString(args, 'scopes'));
  },
  async 'accounts.reset_password'(services, args) {
    return resetPassword(services, reqString(args, 'username'));
  },
  async 'accounts.migrate'(services, args, { federation }) {
    const r = await migrateLocalAccount(services, accountResolver(services, federation), {
      username: reqString(args, 'username'),
      target: typeof args.target === 'string' && args.target !== '' ? args.target : undefined,
      replay: args.replay === true,
      force: args.force === true,
    });
    return { username: r.origin.username, target: r.target.uri, replayed: r.replayed, migrated: r.migrated, failed: r.failed };
  },
  async 'accounts.alias'(services, args, { federation }) {
    const add = stringList(args.add);
    const remove = stringList(args.remove);
    if (add.length + remove.length === 0) throw new RoostError(422, 'Nothing to change: give --add or --remove');
    const aliases = await setAccountAliases(services, accountResolver(services, federation), reqString(args, 'username'), { add, remove });
    return { username: reqString(args, 'username'), aliases };
  },
  /**
   * `roost domains block`: a new block, or (the same domain blocked already) that block changed
   * to what is asked; a parent domain's stricter block refuses it, as the admin API does.
   */
  async 'domains.block'(services, args) {
    const input: DomainBlockInput = {
      domain: reqString(args, 'domain'),
      severity: optString(args, 'severity'),
      rejectMedia: args.rejectMedia === true,
      rejectReports: args.rejectReports === true,
      publicComment: optString(args, 'publicComment'),
      privateComment: optString(args, 'privateComment'),
      obfuscate: args.obfuscate === true,
    };
    try {
      return { created: true, block: blockSummary(await createDomainBlock(services, input, 'operator')) };
    } catch (e) {
      if (!(e instanceof ExistingDomainBlockError) || e.existing.domain !== validDomain(input.domain)) throw e;
      const { domain: _d, ...change } = input;
      return { created: false, block: blockSummary(await updateDomainBlock(services, e.existing.id, change, 'operator')) };
    }
  },
  async 'domains.unblock'(services, args) {
    const domain = reqString(args, 'domain');
    const id = await domainBlockIdFor(services, domain);
    if (!id) throw new RoostError(404, `No block on ${validDomain(domain)}`);
    return { block: blockSummary(await removeDomainBlock(services, id, 'operator')) };
  },
  async 'domains.allow'(services, args) {
    const allow = await createDomainAllow(services, reqString(args, 'domain'), 'operator');
    return { domain: allow.domain, mode: services.config.federation.mode };
  },
  async 'domains.disallow'(services, args) {
    const domain = reqString(args, 'domain');
    const id = await domainAllowIdFor(services, domain);
    if (!id) throw new RoostError(404, `${validDomain(domain)} is not allowed`);
    return { domain: (await removeDomainAllow(services, id, 'operator')).domain };
  },
  async 'domains.list'(services) {
    const [blocks, allows] = await Promise.all([allDomainBlocks(services), allDomainAllows(services)]);
    return { mode: services.config.federation.mode, blocks: blocks.map(blockSummary), allows: allows.map((a) => a.domain) };
  },
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
  const result = await services.db.em().transactional(async (em) => {
    const account = await em.findOne(AccountSchema, { username: { $ilike: username.replace(/[\\%_]/g, '\\$&') }, domain: null });
    const user = account ? await em.findOne(UserSchema, { accountId: account.id }) : null;
    if (!account || !user) throw new RoostError(404, `No local account ${username}`);
    const changes: string[] = [];
    // Steps of the account actor (origin operator): it writes users.approved / confirmed_at /
    // disabled and the events. Already so is a refused step, reported as done (as before).
    const steps: AccountEvent[] = [];
    if (typeof args.role === 'string') {
      const role = await em.findOne(UserRoleSchema, { name: { $ilike: args.role } });
      if (!role) throw new RoostError(422, await unknownRoleMessage(services, args.role));
      user.roleId = role.id;
      changes.push(`role ${role.name}`);
    }
    if (args.removeRole === true) {
      user.roleId = null;
      changes.push('role removed');
    }
    if (args.approve === true) {
      steps.push({ type: 'account.approve' });
      changes.push('approved');
    }
    if (args.confirm === true) {
      steps.push({ type: 'account.confirm' });
      changes.push('confirmed');
    }
    const login = args.disable === true ? 'disable' : args.enable === true ? 'enable' : null;
    if (login) {
      steps.push({ type: login === 'disable' ? 'account.disable' : 'account.enable' });
      changes.push(login === 'disable' ? 'disabled' : 'enabled');
    }
    if (changes.length === 0) throw new RoostError(422, 'Nothing to change: give --role, --remove-role, --approve, --confirm, --disable, --enable or --reset-password');
    user.updatedAt = services.clock.now();
    await em.flush();
    for (const event of steps) await stepAccount(services, account.id, event, { origin: 'operator', em });
    return { username: account.username, changes };
  });
  forgetViewer(services); // the authentication cache must not outlive a disable or an approval here
  return result;
}

export async function runCommand(services: Services, name: string, args: CommandArgs, deps: CommandDeps): Promise<Record<string, unknown>> {
  const cmd = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!cmd) throw new RoostError(404, `Unknown command ${name}`);
  return cmd(services, args, deps);
}
