#!/usr/bin/env node
/**
 * The `roost` command: start, migrate, accounts, roles, domains, ip-blocks, email-domains, emojis, reports, audit, webhooks, blocklists, deliveries, lab. Run it as `npx roost …` or `npm run roost -- …`
 * from the checkout. `--help` works at every level; a mistyped option prints the command's usage.
 */
import './node-version.mjs'; // first: refuses an old Node before anything else loads
import { parseArgs, type ParseArgsConfig } from 'node:util';
import path from 'node:path';
import pino from 'pino';
import { loadConfig, ConfigError } from '../config/index.ts';
import { nearestName } from '../config/nearest.ts';
import { startRoost, openRoostServices, federationOn, VERSION, ROLES, type Role } from './main.ts';
import { sendControlCommand } from './control/socket.ts';
import { runCommand, type CommandArgs } from './control/commands.ts';
import { RoostError } from './lib/errors.ts';
import { DataDirLockedError } from './control/lock.ts';
import { handleShutdownSignals, ListenError } from './http/index.ts';
import { stuckWork } from './db/stall.ts';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | string[] | undefined>;

interface CliCommand {
  /** The synopsis line(s), after "roost ". */
  usage: string;
  /** One or two lines of what it does. */
  summary: string;
  options: Options;
  run(values: Values, positionals: string[]): Promise<void>;
}

const FOOTER = `Configuration comes from ROOST_* environment variables and an optional roost.config.json
(see README.md).`;

class UsageError extends Error {
  /** Whose usage to print after the message: a command, a group, '' for everything, null for a pointer to --help. */
  readonly usage: string | null;
  constructor(message: string, usage: string | null) {
    super(message);
    this.usage = usage;
  }
}

/** Runs an operator command in the running server when it holds the embedded database, else here. */
async function operatorCommand(name: string, args: CommandArgs, open: { migrate?: boolean } = {}): Promise<Record<string, unknown>> {
  const config = loadConfig();
  if (!config.databaseUrl) {
    const reply = await sendControlCommand(config.dataDir, name, args);
    if (reply) {
      if (reply.ok) return reply.result;
      throw new RoostError(reply.status, String(reply.body.error ?? 'failed'), {
        details: reply.body.details as never,
      });
    }
  }
  // Warnings go to stderr: stdout is the command's answer (a token, a password, a table) for scripts.
  const roost = await openRoostServices(config, { logLevel: 'warn', logDestination: pino.destination({ fd: 2, sync: true }), ...open });
  try {
    return await runCommand(roost.services, name, args, { federation: federationOn(roost.services) });
  } finally {
    await roost.close();
  }
}

/** The role attributes the roles commands take. */
function roleOptions(values: Values): Record<string, unknown> {
  return {
    position: values.position,
    permissions: values.permissions,
    color: values.color,
    highlighted: values['no-highlighted'] ? false : values.highlighted,
  };
}

function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** Rows as aligned columns (two spaces apart; the last column not padded). */
function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd()).join('\n');
}

/** Text on one line, cut to `max` characters. */
function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** --limit N: a whole number from 1 to 1000, or undefined when not given. */
function limitOption(values: Values, command: string): number | undefined {
  const v = values.limit;
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d{1,4}$/.test(v) || Number(v) < 1 || Number(v) > 1000) {
    throw new UsageError(`roost ${command}: --limit must be a whole number from 1 to 1000, got "${String(v)}"`, command);
  }
  return Number(v);
}

const COMMANDS: Record<string, CliCommand> = {
  start: {
    usage: 'start [--role web|worker|streaming|all]',
    summary: 'serve Roost in the foreground (--role: what this process does, comma-separated; default all); SIGTERM/SIGINT stop it gracefully',
    options: { role: { type: 'string', default: 'all' } },
    async run(values) {
      const given = String(values.role ?? 'all').split(',').map((r) => r.trim()).filter(Boolean);
      const roles = given.includes('all') ? ROLES : given;
      const unknown = roles.filter((r) => !(ROLES as readonly string[]).includes(r));
      if (unknown.length > 0 || roles.length === 0) throw new UsageError(`roost start: --role takes web, worker, streaming or all (got ${JSON.stringify(values.role)})`, 'start');
      // startRoost binds the port before it writes anything into the data directory.
      const roost = await startRoost(loadConfig(), { roles: roles as Role[] });
      // A bounded drain: after shutdownTimeoutSeconds the process exits even when work is stuck,
      // logging what it abandoned (statements pending, transactions open).
      handleShutdownSignals(() => roost.close(), {
        log: roost.services.log,
        forceAfterMs: roost.config.shutdownTimeoutSeconds * 1000,
        abandoned: () => stuckWork(roost.services.db.tracker),
      });
    },
  },
  migrate: {
    usage: 'migrate',
    summary: 'apply pending database migrations and exit (through the running server when one holds the data directory)',
    options: {},
    async run() {
      const result = await operatorCommand('migrate', {}, { migrate: false });
      const applied = result.applied as string[];
      out(applied.length ? `Applied: ${applied.join(', ')}` : 'The database is up to date.');
    },
  },
  deliveries: {
    usage: 'deliveries ACTIVITY-ID',
    summary: "what became of an activity's deliveries: inboxes (shared ones once), delivered, failed, pending",
    options: {},
    async run(_values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost deliveries: give exactly one ACTIVITY-ID', 'deliveries');
      const { delivery: d } = (await operatorCommand('deliveries.show', { activityId: positionals[0] })) as {
        delivery: { activityId: string; activityType: string; sender: string; lane: string; inboxes: number; delivered: number; failed: number; pending: number; lastError: string | null; createdAt: string; updatedAt: string };
      };
      out(
        [
          `${d.activityType} ${d.activityId} from ${d.sender} (${d.lane} lane), queued ${d.createdAt}`,
          `inboxes: ${d.inboxes}  delivered: ${d.delivered}  failed: ${d.failed}  pending: ${d.pending}`,
          ...(d.lastError ? [`last error: ${d.lastError}`] : []),
          `updated ${d.updatedAt}`,
        ].join('\n'),
      );
    },
  },
  'accounts list': {
    usage: 'accounts list',
    summary: 'list the local accounts: username, role, confirmed, approved, disabled, created',
    options: {},
    async run(_values, positionals) {
      if (positionals.length) throw new UsageError('roost accounts list: takes no arguments', 'accounts list');
      const { accounts } = (await operatorCommand('accounts.list', {})) as {
        accounts: { username: string; role: string | null; confirmed: boolean; approved: boolean; disabled: boolean; createdAt: string }[];
      };
      if (accounts.length === 0) return out('No local accounts.');
      const yes = (b: boolean) => (b ? 'yes' : 'no');
      const rows = [
        ['USERNAME', 'ROLE', 'CONFIRMED', 'APPROVED', 'DISABLED', 'CREATED'],
        ...accounts.map((a) => [a.username, a.role ?? '-', yes(a.confirmed), yes(a.approved), yes(a.disabled), a.createdAt.replace(/\.\d+Z$/, 'Z')]),
      ];
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      out(rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n'));
    },
  },
  'accounts create': {
    usage: 'accounts create USERNAME --email EMAIL [--confirmed] [--role Owner|Admin|Moderator]',
    summary: 'create a local account; prints "New password: …" last',
    options: { email: { type: 'string' }, confirmed: { type: 'boolean', default: false }, role: { type: 'string' } },
    async run(values, positionals) {
      const username = positionals[0];
      if (!username || positionals.length > 1) throw new UsageError('roost accounts create: give exactly one USERNAME', 'accounts create');
      if (!values.email) throw new UsageError('roost accounts create: --email is required', 'accounts create');
      const result = await operatorCommand('accounts.create', { username, email: values.email, confirmed: values.confirmed, role: values.role });
      out(`OK\nNew password: ${result.password}`);
    },
  },
  'accounts token': {
    usage: 'accounts token USERNAME [--scopes "read write …"]',
    summary: 'mint an access token for a local account (default scope: read); the last line printed is the token.\nUse it as `Authorization: Bearer TOKEN` (a first post without an app, a script)',
    options: { scopes: { type: 'string' } },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost accounts token: give exactly one USERNAME', 'accounts token');
      const result = await operatorCommand('accounts.token', { username: positionals[0], scopes: values.scopes });
      out(`OK: a token for ${result.username} with ${(result.scopes as string[]).join(' ')}`);
      out(String(result.token));
    },
  },
  'accounts modify': {
    usage: 'accounts modify USERNAME [--role ROLE | --remove-role] [--approve] [--confirm] [--disable | --enable] [--reset-password]',
    summary: "change a local account's role, approval, confirmation or login; --reset-password sets a new\nrandom password (printed last) and revokes the account's tokens",
    options: {
      'reset-password': { type: 'boolean', default: false },
      role: { type: 'string' },
      'remove-role': { type: 'boolean', default: false },
      approve: { type: 'boolean', default: false },
      confirm: { type: 'boolean', default: false },
      disable: { type: 'boolean', default: false },
      enable: { type: 'boolean', default: false },
    },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost accounts modify: give exactly one USERNAME', 'accounts modify');
      if (values.disable && values.enable) throw new UsageError('roost accounts modify: --disable and --enable exclude each other', 'accounts modify');
      if (values.role && values['remove-role']) throw new UsageError('roost accounts modify: --role and --remove-role exclude each other', 'accounts modify');
      const others = values.role !== undefined || values['remove-role'] || values.approve || values.confirm || values.disable || values.enable;
      if (others || !values['reset-password']) {
        const result = await operatorCommand('accounts.modify', {
          username: positionals[0],
          role: values.role,
          removeRole: values['remove-role'],
          approve: values.approve,
          confirm: values.confirm,
          disable: values.disable,
          enable: values.enable,
        });
        out(`OK: ${result.username}: ${(result.changes as string[]).join(', ')}`);
      }
      if (values['reset-password']) {
        const reset = await operatorCommand('accounts.reset_password', { username: positionals[0] });
        out(`OK: ${reset.username}: password reset, ${reset.revokedTokens} token(s) revoked`);
        out(`New password: ${reset.password}`);
      }
    },
  },
  'accounts alias': {
    usage: 'accounts alias USERNAME [--add ACCOUNT]... [--remove ACCOUNT]...',
    summary: 'add or remove aliases (alsoKnownAs): the accounts a Move to USERNAME is accepted from;\nACCOUNT is user@domain or an actor URL',
    options: { add: { type: 'string', multiple: true }, remove: { type: 'string', multiple: true } },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost accounts alias: give exactly one USERNAME', 'accounts alias');
      const add = (values.add as string[] | undefined) ?? [];
      const remove = (values.remove as string[] | undefined) ?? [];
      if (!add.length && !remove.length) throw new UsageError('roost accounts alias: give --add or --remove', 'accounts alias');
      const result = await operatorCommand('accounts.alias', { username: positionals[0], add, remove });
      const aliases = result.aliases as string[];
      out(`OK: ${result.username} is also known as: ${aliases.length ? aliases.join(', ') : '(nobody)'}`);
    },
  },
  'accounts migrate': {
    usage: 'accounts migrate USERNAME --target ACCOUNT [--force] | --replay',
    summary:
      'move a local account to ACCOUNT (which must list it as an alias): local followers move at once,\n' +
      'Move goes to the other servers; --replay sends the Move again, --force moves an account that\nalready redirects elsewhere',
    options: { target: { type: 'string' }, replay: { type: 'boolean', default: false }, force: { type: 'boolean', default: false } },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost accounts migrate: give exactly one USERNAME', 'accounts migrate');
      if (!values.target && !values.replay) throw new UsageError('roost accounts migrate: give --target ACCOUNT, or --replay', 'accounts migrate');
      if (values.replay && values.force) throw new UsageError('roost accounts migrate: --replay and --force exclude each other', 'accounts migrate');
      const result = await operatorCommand('accounts.migrate', { username: positionals[0], target: values.target, replay: values.replay, force: values.force });
      out(
        result.replayed
          ? `OK: the Move of ${result.username} to ${result.target} is sent again`
          : `OK: ${result.username} moved to ${result.target}; ${result.migrated} local follower(s) moved, ${result.failed} could not; the Move is on its way to the other servers`,
      );
    },
  },
  ...Object.fromEntries(
    (['suspend', 'unsuspend', 'silence', 'unsilence', 'approve', 'reject'] as const).map((verb) => [
      `accounts ${verb}`,
      {
        usage: `accounts ${verb} USER${verb === 'suspend' || verb === 'silence' ? ' [--text TEXT]' : ''}`,
        summary: {
          suspend: "suspend an account (USER: a local username or user@domain): its content is hidden at once, a local\naccount's Delete goes to its followers' servers, it cannot sign in",
          unsuspend: 'lift a suspension',
          silence: "silence an account: it is hidden from public timelines, its follow requests wait",
          unsilence: 'lift a silence',
          approve: 'approve a sign-up awaiting a moderator',
          reject: 'reject a sign-up awaiting a moderator: the account is deleted',
        }[verb],
        options: verb === 'suspend' || verb === 'silence' ? { text: { type: 'string' } } : {},
        async run(values: Values, positionals: string[]) {
          if (positionals.length !== 1) throw new UsageError(`roost accounts ${verb}: give exactly one USER`, `accounts ${verb}`);
          const result = await operatorCommand(`accounts.${verb}`, { user: positionals[0], text: values.text });
          out(`OK: ${result.user} ${result.done}`);
        },
      } satisfies CliCommand,
    ]),
  ),
  'accounts pending': {
    usage: 'accounts pending',
    summary: 'list the sign-ups awaiting a moderator (newest first, at most 200): username, e-mail, reason',
    options: {},
    async run(_values, positionals) {
      if (positionals.length) throw new UsageError('roost accounts pending: takes no arguments', 'accounts pending');
      const { accounts } = (await operatorCommand('accounts.pending', {})) as {
        accounts: { username: string; email: string; reason: string | null; createdAt: string }[];
      };
      if (accounts.length === 0) return out('No sign-ups awaiting approval.');
      const rows = [['USERNAME', 'EMAIL', 'CREATED', 'REASON'], ...accounts.map((a) => [a.username, a.email, a.createdAt.replace(/\.\d+Z$/, 'Z'), a.reason ?? ''])];
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      out(rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd()).join('\n'));
    },
  },
  'roles list': {
    usage: 'roles list',
    summary: 'list the roles, highest first: name, position, highlighted, permissions',
    options: {},
    async run(_values, positionals) {
      if (positionals.length) throw new UsageError('roost roles list: takes no arguments', 'roles list');
      const { roles } = (await operatorCommand('roles.list', {})) as {
        roles: { name: string; position: number; highlighted: boolean; color: string; permissions: string; permissionNames: string[] }[];
      };
      const rows = [
        ['NAME', 'POSITION', 'HIGHLIGHTED', 'COLOR', 'PERMISSIONS'],
        ...roles.map((r) => [r.name, String(r.position), r.highlighted ? 'yes' : 'no', r.color || '-', `${r.permissions} (${r.permissionNames.join(', ') || 'none'})`]),
      ];
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      out(rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n'));
    },
  },
  'roles create': {
    usage: 'roles create NAME [--position N] [--permissions LIST] [--color #RRGGBB] [--highlighted]',
    summary: "create a role; LIST is Mastodon's bit value or names: manage_users,manage_reports,… (default none)",
    options: { position: { type: 'string' }, permissions: { type: 'string' }, color: { type: 'string' }, highlighted: { type: 'boolean' } },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost roles create: give exactly one NAME', 'roles create');
      const { role } = (await operatorCommand('roles.create', { name: positionals[0], ...roleOptions(values) })) as { role: { name: string; id: string } };
      out(`OK: role ${role.name} created (id ${role.id})`);
    },
  },
  'roles update': {
    usage: 'roles update NAME [--name NEW] [--position N] [--permissions LIST] [--color #RRGGBB] [--highlighted | --no-highlighted]',
    summary: 'change a role',
    options: {
      name: { type: 'string' },
      position: { type: 'string' },
      permissions: { type: 'string' },
      color: { type: 'string' },
      highlighted: { type: 'boolean' },
      'no-highlighted': { type: 'boolean' },
    },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost roles update: give exactly one NAME', 'roles update');
      const { role } = (await operatorCommand('roles.update', { name: positionals[0], newName: values.name, ...roleOptions(values) })) as { role: { name: string } };
      out(`OK: role ${role.name} changed`);
    },
  },
  'roles delete': {
    usage: 'roles delete NAME',
    summary: 'delete a role; its users are left without one',
    options: {},
    async run(_values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost roles delete: give exactly one NAME', 'roles delete');
      const { role } = (await operatorCommand('roles.delete', { name: positionals[0] })) as { role: { name: string } };
      out(`OK: role ${role.name} deleted`);
    },
  },
  'roles assign': {
    usage: 'roles assign USERNAME ROLE | --none',
    summary: 'give a local account a role, or none',
    options: { none: { type: 'boolean', default: false } },
    async run(values, positionals) {
      if (positionals.length !== (values.none ? 1 : 2)) throw new UsageError('roost roles assign: give a USERNAME and a ROLE, or --none', 'roles assign');
      const result = await operatorCommand('roles.assign', { username: positionals[0], role: values.none ? undefined : positionals[1] });
      out(result.role ? `OK: ${result.username} is ${result.role}` : `OK: ${result.username} has no role`);
    },
  },
  'domains block': {
    usage:
      'domains block DOMAIN [--severity silence|suspend|noop] [--reject-media] [--reject-reports]\n' +
      '      [--public-comment TEXT] [--private-comment TEXT] [--obfuscate]',
    summary:
      'limit a server and its subdomains (default: silence); suspend cuts it off: its accounts are suspended,\n' +
      'their follows with local accounts end, nothing is delivered to or accepted from it. Blocking a\n' +
      'domain blocked already changes that block',
    options: {
      severity: { type: 'string' },
      'reject-media': { type: 'boolean', default: false },
      'reject-reports': { type: 'boolean', default: false },
      'public-comment': { type: 'string' },
      'private-comment': { type: 'string' },
      obfuscate: { type: 'boolean', default: false },
    },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost domains block: give exactly one DOMAIN', 'domains block');
      const severity = values.severity as string | undefined;
      if (severity !== undefined && !['silence', 'suspend', 'noop'].includes(severity)) {
        throw new UsageError(`roost domains block: --severity must be silence, suspend or noop, got "${severity}"`, 'domains block');
      }
      const result = await operatorCommand('domains.block', {
        domain: positionals[0],
        severity,
        rejectMedia: values['reject-media'],
        rejectReports: values['reject-reports'],
        publicComment: values['public-comment'],
        privateComment: values['private-comment'],
        obfuscate: values.obfuscate,
      });
      const b = result.block as { domain: string; severity: string; rejectMedia: boolean; rejectReports: boolean };
      const extras = [b.rejectMedia ? 'media rejected' : '', b.rejectReports ? 'reports rejected' : ''].filter(Boolean);
      out(`OK: ${b.domain} ${result.created ? 'blocked' : 'block changed'}: ${b.severity}${extras.length ? `, ${extras.join(', ')}` : ''}`);
    },
  },
  'domains unblock': {
    usage: 'domains unblock DOMAIN',
    summary: 'lift the block on DOMAIN (a suspension or silence it imposed on accounts is lifted; ended follows stay ended)',
    options: {},
    async run(_values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost domains unblock: give exactly one DOMAIN', 'domains unblock');
      const result = await operatorCommand('domains.unblock', { domain: positionals[0] });
      out(`OK: ${(result.block as { domain: string }).domain} unblocked`);
    },
  },
  'domains allow': {
    usage: 'domains allow DOMAIN',
    summary: 'allow a server and its subdomains to federate (used in allowlist mode: federation.mode = allowlist)',
    options: {},
    async run(_values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost domains allow: give exactly one DOMAIN', 'domains allow');
      const result = await operatorCommand('domains.allow', { domain: positionals[0] });
      out(`OK: ${result.domain} allowed${result.mode === 'allowlist' ? '' : ' (this matters once federation.mode is allowlist)'}`);
    },
  },
  'domains disallow': {
    usage: 'domains disallow DOMAIN',
    summary: 'remove DOMAIN from the allowed servers',
    options: {},
    async run(_values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost domains disallow: give exactly one DOMAIN', 'domains disallow');
      const result = await operatorCommand('domains.disallow', { domain: positionals[0] });
      out(`OK: ${result.domain} no longer allowed`);
    },
  },
  'domains list': {
    usage: 'domains list',
    summary: 'list the blocked servers (domain, severity, media, reports, public comment) and the allowed ones',
    options: {},
    async run(_values, positionals) {
      if (positionals.length) throw new UsageError('roost domains list: takes no arguments', 'domains list');
      const result = (await operatorCommand('domains.list', {})) as {
        mode: string;
        blocks: { domain: string; severity: string; rejectMedia: boolean; rejectReports: boolean; publicComment: string | null }[];
        allows: string[];
      };
      const lines: string[] = [`Federation mode: ${result.mode}`];
      if (result.blocks.length === 0) lines.push('No blocked domains.');
      else {
        const yes = (v: boolean) => (v ? 'rejected' : '-');
        const rows = [
          ['DOMAIN', 'SEVERITY', 'MEDIA', 'REPORTS', 'COMMENT'],
          ...result.blocks.map((b) => [b.domain, b.severity, yes(b.rejectMedia), yes(b.rejectReports), b.publicComment ?? '']),
        ];
        const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
        lines.push(...rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd()));
      }
      lines.push(result.allows.length ? `Allowed: ${result.allows.join(', ')}` : 'No allowed domains.');
      out(lines.join('\n'));
    },
  },
  'reports list': {
    usage: 'reports list [--resolved] [--limit N]',
    summary: 'list the open reports (--resolved: the resolved ones), newest first: id, filed, category, reporter,\nreported account, statuses cited, assignee, comment',
    options: { resolved: { type: 'boolean', default: false }, limit: { type: 'string' } },
    async run(values, positionals) {
      if (positionals.length) throw new UsageError('roost reports list: takes no arguments', 'reports list');
      const { reports } = (await operatorCommand('reports.list', { resolved: values.resolved === true, limit: limitOption(values, 'reports list') })) as {
        reports: { id: string; createdAt: string; category: string; reporter: string; target: string; statuses: number; assigned: string | null; comment: string }[];
      };
      if (reports.length === 0) return out(values.resolved ? 'No resolved reports.' : 'No open reports.');
      out(table([
        ['ID', 'FILED', 'CATEGORY', 'REPORTER', 'REPORTED', 'STATUSES', 'ASSIGNED', 'COMMENT'],
        ...reports.map((r) => [r.id, r.createdAt.replace(/\.\d+Z$/, 'Z'), r.category, r.reporter, r.target, String(r.statuses), r.assigned ?? '-', oneLine(r.comment, 60)]),
      ]));
    },
  },
  ...Object.fromEntries(
    (['resolve', 'reopen'] as const).map((verb) => [
      `reports ${verb}`,
      {
        usage: `reports ${verb} ID`,
        summary: verb === 'resolve' ? 'mark a report resolved (the audit log records the operator)' : 'open a resolved report again',
        options: {},
        async run(_values: Values, positionals: string[]) {
          if (positionals.length !== 1) throw new UsageError(`roost reports ${verb}: give exactly one report ID`, `reports ${verb}`);
          await operatorCommand(`reports.${verb}`, { id: positionals[0] });
          out(`OK: report ${positionals[0]} ${verb === 'resolve' ? 'resolved' : 'reopened'}`);
        },
      } satisfies CliCommand,
    ]),
  ),
  audit: {
    usage: 'audit [--limit N]',
    summary: 'the latest admin actions (through the admin API and this CLI), newest first: when, who, action, target',
    options: { limit: { type: 'string' } },
    async run(values, positionals) {
      if (positionals.length) throw new UsageError('roost audit: takes no arguments', 'audit');
      const { entries } = (await operatorCommand('audit.list', { limit: limitOption(values, 'audit') })) as {
        entries: { at: string; who: string | null; action: string; targetType: string; targetId: string | null; target: string | null }[];
      };
      if (entries.length === 0) return out('No admin actions recorded.');
      out(table([
        ['WHEN', 'WHO', 'ACTION', 'TARGET'],
        ...entries.map((e) => [e.at.replace(/\.\d+Z$/, 'Z'), e.who ?? '(operator)', e.action, `${e.targetType} ${e.target ?? e.targetId ?? ''}`.trim()]),
      ]));
    },
  },
  'ip-blocks add': {
    usage: 'ip-blocks add IP|CIDR --severity sign_up_requires_approval|sign_up_block|no_access [--comment TEXT] [--expires-in SECONDS]',
    summary: 'block an address or range: sign-ups wait for approval, sign-ups refused, or no access at all (every request 403)',
    options: { severity: { type: 'string' }, comment: { type: 'string' }, 'expires-in': { type: 'string' } },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost ip-blocks add: give exactly one IP or CIDR range', 'ip-blocks add');
      if (!values.severity) throw new UsageError('roost ip-blocks add: give --severity', 'ip-blocks add');
      const result = await operatorCommand('ip-blocks.add', { ip: positionals[0], severity: values.severity, comment: values.comment, expiresIn: values['expires-in'] });
      const b = result.block as { ip: string; severity: string; expires_at: string | null };
      out(`OK: ${b.ip} blocked: ${b.severity}${b.expires_at ? ` until ${b.expires_at}` : ''}`);
    },
  },
  'ip-blocks remove': {
    usage: 'ip-blocks remove IP|CIDR',
    summary: 'lift the IP block on that address or range',
    options: {},
    async run(_values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost ip-blocks remove: give exactly one IP or CIDR range', 'ip-blocks remove');
      const result = await operatorCommand('ip-blocks.remove', { ip: positionals[0] });
      out(`OK: ${result.ip} no longer blocked`);
    },
  },
  'ip-blocks list': {
    usage: 'ip-blocks list',
    summary: 'list the IP blocks (range, severity, expiry, comment)',
    options: {},
    async run(_values, positionals) {
      if (positionals.length) throw new UsageError('roost ip-blocks list: takes no arguments', 'ip-blocks list');
      const { blocks } = (await operatorCommand('ip-blocks.list', {})) as { blocks: { ip: string; severity: string; expires_at: string | null; comment: string }[] };
      out(blocks.length ? blocks.map((b) => [b.ip, b.severity, b.expires_at ?? 'never', b.comment].join('  ').trimEnd()).join('\n') : 'No IP blocks.');
    },
  },
  'email-domains block': {
    usage: 'email-domains block DOMAIN',
    summary: 'refuse sign-ups with an address at DOMAIN, its subdomains, or a domain whose mail goes through them (MX)',
    options: {},
    async run(_values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost email-domains block: give exactly one DOMAIN', 'email-domains block');
      const result = await operatorCommand('email-domains.block', { domain: positionals[0] });
      out(`OK: sign-ups from ${result.domain} refused`);
    },
  },
  'email-domains unblock': {
    usage: 'email-domains unblock DOMAIN',
    summary: 'lift the e-mail domain block on DOMAIN',
    options: {},
    async run(_values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost email-domains unblock: give exactly one DOMAIN', 'email-domains unblock');
      const result = await operatorCommand('email-domains.unblock', { domain: positionals[0] });
      out(`OK: ${result.domain} no longer blocked`);
    },
  },
  'email-domains list': {
    usage: 'email-domains list',
    summary: 'list the blocked e-mail domains',
    options: {},
    async run(_values, positionals) {
      if (positionals.length) throw new UsageError('roost email-domains list: takes no arguments', 'email-domains list');
      const { domains } = (await operatorCommand('email-domains.list', {})) as { domains: string[] };
      out(domains.length ? domains.join('\n') : 'No blocked e-mail domains.');
    },
  },
  'webhooks list': {
    usage: 'webhooks list',
    summary: 'list the admin webhooks: id, enabled, events, URL',
    options: {},
    async run(_values, positionals) {
      if (positionals.length) throw new UsageError('roost webhooks list: takes no arguments', 'webhooks list');
      const { webhooks } = (await operatorCommand('webhooks.list', {})) as { webhooks: { id: string; url: string; events: string[]; enabled: boolean }[] };
      if (webhooks.length === 0) return out('No webhooks.');
      const rows = [['ID', 'ENABLED', 'EVENTS', 'URL'], ...webhooks.map((w) => [w.id, w.enabled ? 'yes' : 'no', w.events.join(','), w.url])];
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      out(rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n'));
    },
  },
  'webhooks create': {
    usage: 'webhooks create URL --event EVENT [--event EVENT]…',
    summary:
      'add a webhook: Roost POSTs {event, created_at, object} to URL, signed X-Hub-Signature: sha256=HMAC;\n' +
      'events: account.created, account.approved, account.updated, report.created, report.updated,\n' +
      'status.created, status.updated. Prints its id and secret',
    options: { event: { type: 'string', multiple: true } },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost webhooks create: give exactly one URL', 'webhooks create');
      const events = (values.event as string[] | undefined) ?? [];
      if (events.length === 0) throw new UsageError('roost webhooks create: give at least one --event', 'webhooks create');
      const { webhook } = (await operatorCommand('webhooks.create', { url: positionals[0], events })) as { webhook: { id: string; secret: string } };
      out(`OK: webhook ${webhook.id} created\nSecret: ${webhook.secret}`);
    },
  },
  'webhooks delete': {
    usage: 'webhooks delete ID',
    summary: 'remove a webhook (its pending deliveries are dropped)',
    options: {},
    async run(_values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost webhooks delete: give exactly one ID', 'webhooks delete');
      await operatorCommand('webhooks.delete', { id: positionals[0] });
      out(`OK: webhook ${positionals[0]} deleted`);
    },
  },
  'webhooks failures': {
    usage: 'webhooks failures [ID]',
    summary: 'the deliveries that did not go through (of one webhook, or all): event, state (retrying or failed), attempts, last error',
    options: {},
    async run(_values, positionals) {
      if (positionals.length > 1) throw new UsageError('roost webhooks failures: give at most one ID', 'webhooks failures');
      const { failures } = (await operatorCommand('webhooks.failures', positionals.length ? { id: positionals[0] } : {})) as {
        failures: { webhook_id: string; event_id: string; event: string; state: string; attempts: number; last_error: string | null; updated_at: string }[];
      };
      if (failures.length === 0) return out('No failed deliveries.');
      const rows = [
        ['WEBHOOK', 'EVENT', 'FACT', 'STATE', 'ATTEMPTS', 'LAST TRY', 'LAST ERROR'],
        ...failures.map((f) => [f.webhook_id, f.event, f.event_id, f.state, String(f.attempts), f.updated_at, f.last_error ?? '']),
      ];
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      out(rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n'));
    },
  },
  'domains export': {
    usage: 'domains export',
    summary: "print this server's domain blocks as CSV, in Mastodon's export format (#domain,#severity,…)",
    options: {},
    async run(_values, positionals) {
      if (positionals.length) throw new UsageError('roost domains export: takes no arguments', 'domains export');
      process.stdout.write(((await operatorCommand('domains.export', {})) as { csv: string }).csv);
    },
  },
  'blocklists list': {
    usage: 'blocklists list',
    summary: 'the blocklist subscriptions: id, auto-apply, entries pending/applied, last fetch and its error, URL',
    options: {},
    async run(_values, positionals) {
      if (positionals.length) throw new UsageError('roost blocklists list: takes no arguments', 'blocklists list');
      const { subscriptions } = (await operatorCommand('blocklists.list', {})) as {
        subscriptions: { id: string; url: string; auto_apply: boolean; last_fetched_at: string | null; last_error: string | null; entries: Record<string, number> }[];
      };
      if (subscriptions.length === 0) return out('No blocklist subscriptions.');
      const rows = [
        ['ID', 'AUTO', 'PENDING', 'APPLIED', 'FETCHED', 'ERROR', 'URL'],
        ...subscriptions.map((s) => [s.id, s.auto_apply ? 'yes' : 'no', String(s.entries.pending), String(s.entries.applied), s.last_fetched_at ?? '-', s.last_error ?? '-', s.url]),
      ];
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      out(rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n'));
    },
  },
  'blocklists subscribe': {
    usage: 'blocklists subscribe URL [--auto-apply]',
    summary:
      "subscribe to a published blocklist (Mastodon's CSV export or a JSON list), fetched now and then\n" +
      'every blocklists.refreshIntervalSeconds; new entries wait for review unless --auto-apply',
    options: { 'auto-apply': { type: 'boolean', default: false } },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost blocklists subscribe: give exactly one URL', 'blocklists subscribe');
      const { subscription } = (await operatorCommand('blocklists.subscribe', { url: positionals[0], autoApply: values['auto-apply'] })) as { subscription: { id: string } };
      out(`OK: subscription ${subscription.id} created; its first fetch is queued`);
    },
  },
  'blocklists unsubscribe': {
    usage: 'blocklists unsubscribe ID [--retract]',
    summary: 'remove a subscription; --retract also lifts the blocks its entries made (otherwise they stay)',
    options: { retract: { type: 'boolean', default: false } },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost blocklists unsubscribe: give exactly one ID', 'blocklists unsubscribe');
      await operatorCommand('blocklists.unsubscribe', { id: positionals[0], retract: values.retract });
      out(`OK: subscription ${positionals[0]} removed`);
    },
  },
  'blocklists refresh': {
    usage: 'blocklists refresh ID',
    summary: 'fetch a subscribed list now and say what changed',
    options: {},
    async run(_values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost blocklists refresh: give exactly one ID', 'blocklists refresh');
      const { summary: s } = (await operatorCommand('blocklists.refresh', { id: positionals[0] })) as {
        summary: { added: number; changed: number; removed: number; applied: number; retracted: number; error: string | null };
      };
      if (s.error) throw new RoostError(422, `the list could not be used (${s.error}); nothing changed`);
      out(`OK: ${s.added} new, ${s.changed} changed, ${s.removed} gone; ${s.applied} block(s) applied, ${s.retracted} retracted`);
    },
  },
  'blocklists pending': {
    usage: 'blocklists pending',
    summary: 'the review queue: entries of the subscribed lists waiting to be approved or rejected',
    options: {},
    async run(_values, positionals) {
      if (positionals.length) throw new UsageError('roost blocklists pending: takes no arguments', 'blocklists pending');
      const { entries } = (await operatorCommand('blocklists.pending', {})) as { entries: { id: string; subscription_id: string; domain: string; severity: string; public_comment: string | null }[] };
      if (entries.length === 0) return out('No entries waiting for review.');
      const rows = [['ENTRY', 'LIST', 'DOMAIN', 'SEVERITY', 'COMMENT'], ...entries.map((e) => [e.id, e.subscription_id, e.domain, e.severity, e.public_comment ?? ''])];
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      out(rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd()).join('\n'));
    },
  },
  ...Object.fromEntries(
    (['approve', 'reject'] as const).map((verb) => [
      `blocklists ${verb}`,
      {
        usage: `blocklists ${verb} ENTRY-ID`,
        summary: verb === 'approve' ? 'approve an entry of the review queue: its domain block is created' : 'reject an entry of the review queue',
        options: {},
        async run(_values: Values, positionals: string[]) {
          if (positionals.length !== 1) throw new UsageError(`roost blocklists ${verb}: give exactly one ENTRY-ID`, `blocklists ${verb}`);
          const { entry } = (await operatorCommand(`blocklists.${verb}`, { id: positionals[0] })) as { entry: { domain: string; state: string } };
          out(`OK: ${entry.domain} ${entry.state === 'covered' ? 'approved (a block already covers it: nothing new)' : verb === 'approve' ? 'blocked' : 'rejected'}`);
        },
      } satisfies CliCommand,
    ]),
  ),
  'lab run': {
    usage: 'lab run SCENARIO [--seed N] [--out DIR] [--no-report]',
    summary:
      'run a federation lab scenario (YAML, see docs/lab.md): its instances in this process on a virtual\n' +
      'network under one clock; prints each assertion, writes the trace and its report into DIR (./lab-runs);\n' +
      'exits 1 when a step or an assertion failed. ROOST_DATABASE_URL: its server, else an embedded one',
    options: { seed: { type: 'string' }, out: { type: 'string' }, 'no-report': { type: 'boolean', default: false } },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost lab run: give exactly one SCENARIO file', 'lab run');
      const seed = values.seed === undefined ? undefined : Number(values.seed);
      if (seed !== undefined && (!Number.isInteger(seed) || seed < 0)) throw new UsageError('roost lab run: --seed is a whole number ≥ 0', 'lab run');
      const config = loadConfig();
      const { labRun } = await import('./lab/commands.ts');
      process.exitCode = await labRun(positionals[0]!, {
        seed,
        outDir: typeof values.out === 'string' ? values.out : 'lab-runs',
        report: values['no-report'] !== true,
        databaseUrl: config.databaseUrl ?? undefined,
        log: pino({ level: 'warn' }, pino.destination({ fd: 2, sync: true })),
        out,
      });
    },
  },
  'lab serve': {
    usage: 'lab serve SCENARIO [--port N]',
    summary:
      "start a scenario's lab, play its steps, then serve the lab's test-control API on 127.0.0.1:N\n" +
      '(accounts and tokens, settle, advance the clock, snapshot and reset) until Ctrl-C; prints its token',
    options: { port: { type: 'string' } },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost lab serve: give exactly one SCENARIO file', 'lab serve');
      const port = values.port === undefined ? 0 : Number(values.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('roost lab serve: --port is a port number', 'lab serve');
      const config = loadConfig();
      const { labServe } = await import('./lab/commands.ts');
      const stop = new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
      await labServe(positionals[0]!, {
        port,
        stop,
        databaseUrl: config.databaseUrl ?? undefined,
        log: pino({ level: 'warn' }, pino.destination({ fd: 2, sync: true })),
        out,
      });
    },
  },
  'lab report': {
    usage: 'lab report TRACE [--out DIR]',
    summary:
      "summarise a federation lab run from its trace (JSON Lines): writes NAME.report.html (plots, no\n" +
      'network needed to view it) and NAME.summary.json beside the trace, or into DIR; needs no database',
    options: { out: { type: 'string' } },
    async run(values, positionals) {
      if (positionals.length !== 1) throw new UsageError('roost lab report: give exactly one TRACE file', 'lab report');
      // Loaded here, not at the top: the report reads a file and writes two, and opens no database.
      const { writeReport, TraceError } = await import('./lab/report.ts');
      const trace = positionals[0]!;
      let written: Awaited<ReturnType<typeof writeReport>>;
      try {
        written = await writeReport(trace, typeof values.out === 'string' ? values.out : undefined);
      } catch (e) {
        if (e instanceof TraceError) throw new RoostError(422, `lab report: ${e.message}`);
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES') throw new RoostError(422, `lab report: ${(e as Error).message}`);
        throw e;
      }
      const a = written.summary.assertions;
      out(`OK: ${a.passed} of ${a.passed + a.failed} assertion(s) passed, ${written.summary.deliveries.attempts} delivery attempt(s)`);
      out(written.html);
      out(written.json);
    },
  },
  'emojis add': {
    usage: 'emojis add SHORTCODE FILE [--category NAME] [--unlisted]',
    summary: 'add a custom emoji (:SHORTCODE:) from a PNG, GIF or WebP file of at most 256 KB;\n--unlisted keeps it out of the picker (it still renders)',
    options: { category: { type: 'string' }, unlisted: { type: 'boolean', default: false } },
    async run(values, positionals) {
      if (positionals.length !== 2) throw new UsageError('roost emojis add: give a SHORTCODE and a FILE', 'emojis add');
      const [shortcode, file] = positionals as [string, string];
      await operatorCommand('emojis.add', { shortcode, file: path.resolve(file), category: values.category, unlisted: values.unlisted });
      out(`OK: :${shortcode}: added`);
    },
  },
  'emojis list': {
    usage: 'emojis list [--category NAME]',
    summary: 'list the local custom emojis: shortcode, category, picker, disabled, image URL',
    options: { category: { type: 'string' } },
    async run(values, positionals) {
      if (positionals.length) throw new UsageError('roost emojis list: takes no arguments', 'emojis list');
      const { emojis } = (await operatorCommand('emojis.list', { category: values.category })) as {
        emojis: { shortcode: string; category: string | null; visible_in_picker: boolean; disabled: boolean; url: string }[];
      };
      if (emojis.length === 0) return out('No custom emojis.');
      const rows = [
        ['SHORTCODE', 'CATEGORY', 'PICKER', 'DISABLED', 'URL'],
        ...emojis.map((e) => [e.shortcode, e.category ?? '-', e.visible_in_picker ? 'yes' : 'no', e.disabled ? 'yes' : 'no', e.url]),
      ];
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      out(rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n'));
    },
  },
  ...Object.fromEntries(
    (['disable', 'enable', 'remove'] as const).map((verb) => [
      `emojis ${verb}`,
      {
        usage: `emojis ${verb} SHORTCODE`,
        summary:
          verb === 'disable' ? 'stop rendering and listing a custom emoji' : verb === 'enable' ? 'render and list a disabled custom emoji again' : 'remove a custom emoji and its images',
        options: {},
        async run(_values: Values, positionals: string[]) {
          if (positionals.length !== 1) throw new UsageError(`roost emojis ${verb}: give exactly one SHORTCODE`, `emojis ${verb}`);
          await operatorCommand(`emojis.${verb}`, { shortcode: positionals[0] });
          out(`OK: :${positionals[0]}: ${verb === 'remove' ? 'removed' : `${verb}d`}`);
        },
      } satisfies CliCommand,
    ]),
  ),
  'emojis category': {
    usage: 'emojis category SHORTCODE NAME | --none',
    summary: "put a custom emoji in the picker's category NAME (created if new), or in none",
    options: { none: { type: 'boolean', default: false } },
    async run(values, positionals) {
      if (positionals.length !== (values.none ? 1 : 2)) throw new UsageError('roost emojis category: give a SHORTCODE and a category NAME, or --none', 'emojis category');
      await operatorCommand('emojis.category', { shortcode: positionals[0], category: positionals[1], none: values.none });
      out(values.none ? `OK: :${positionals[0]}: has no category` : `OK: :${positionals[0]}: is in ${positionals[1]}`);
    },
  },
};

function describe(names: string[]): string {
  return names
    .map((n) => {
      const c = COMMANDS[n];
      const summary = c.summary.split('\n').map((l) => `      ${l}`).join('\n');
      return `  roost ${c.usage}\n${summary}`;
    })
    .join('\n');
}

/** Usage of one command, of a group ("accounts"), or of everything (""). */
export function usage(of = ''): string {
  const names = Object.keys(COMMANDS).filter((n) => of === '' || n === of || n.startsWith(`${of} `));
  const head = of === '' ? 'Usage: roost <command> [options]\n\n  roost --help | --version\n' : `Usage:\n`;
  return `${head}${describe(names)}\n\nEvery command takes --help.\n${FOOTER}`;
}

function parse(name: string, args: string[]): { values: Values; positionals: string[] } | 'help' {
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: { ...COMMANDS[name].options, help: { type: 'boolean', short: 'h', default: false } },
    });
    if (values.help) return 'help';
    return { values: values as Values, positionals };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (!err.code?.startsWith('ERR_PARSE_ARGS')) throw e;
    const option = /'(-[^']*)'/.exec(err.message)?.[1];
    const problem =
      err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
        ? `unknown option ${option}`
        : err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
          ? err.message.replace(/\.$/, '').replace(/^Option '([^']+)'/, 'option $1').replace(/ argument missing$/, ' needs a value')
          : err.message;
    throw new UsageError(`roost ${name}: ${problem}`, name);
  }
}

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h') {
    out(usage());
    return 0;
  }
  if (first === '--version' || first === '-V' || first === 'version') {
    out(`roost ${VERSION}`);
    return 0;
  }
  if (first === 'help') {
    const of = rest.join(' ');
    if (of && !Object.keys(COMMANDS).some((n) => n === of || n.startsWith(`${of} `))) throw new UsageError(`roost help: no command ${of}`, '');
    out(usage(of));
    return 0;
  }
  if (first.startsWith('-')) throw new UsageError(`roost: unknown option ${first}`, '');
  // "accounts create …": the longest command name the arguments start with.
  const sub = rest[0];
  const name = sub !== undefined && COMMANDS[`${first} ${sub}`] ? `${first} ${sub}` : first;
  const args = name === first ? rest : rest.slice(1);
  if (!COMMANDS[name]) {
    const group = Object.keys(COMMANDS).some((n) => n.startsWith(`${first} `));
    if (!group) {
      const groups = new Set(Object.keys(COMMANDS).map((n) => n.split(' ')[0]!));
      const nearest = nearestName(first, groups);
      throw new UsageError(`roost: unknown command ${first}${nearest ? ` (did you mean roost ${nearest}?)` : ''}`, null);
    }
    if (sub === undefined) {
      process.stderr.write(`${usage(first)}\n`);
      return 2;
    }
    if (sub === '--help' || sub === '-h') {
      out(usage(first));
      return 0;
    }
    const subs = Object.keys(COMMANDS).filter((n) => n.startsWith(`${first} `)).map((n) => n.slice(first.length + 1));
    const nearest = nearestName(sub, subs);
    throw new UsageError(`roost ${first}: unknown subcommand ${sub}${nearest ? ` (did you mean roost ${first} ${nearest}?)` : ''}`, first);
  }
  const parsed = parse(name, args);
  if (parsed === 'help') {
    out(usage(name));
    return 0;
  }
  await COMMANDS[name].run(parsed.values, parsed.positionals);
  return 0;
}

function die(message: string, code = 1): never {
  process.stderr.write(message.endsWith('\n') ? message : `${message}\n`);
  process.exit(code);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof UsageError) die(e.usage === null ? `${e.message}\nRun roost --help for every command.` : `${e.message}\n\n${usage(e.usage)}`, 2);
    if (e instanceof ConfigError) die(`roost: ${e.message}`, 78);
    if (e instanceof ListenError) {
      die(
        e.code === 'EADDRINUSE'
          ? `roost: port ${e.port} on ${e.host} is already in use by another process: stop it, or set ROOST_PORT to a free port.`
          : `roost: ${e.message}: check ROOST_HOST and ROOST_PORT.`,
      );
    }
    if (e instanceof DataDirLockedError) {
      die(`roost: ${e.message} Stop that process first, or run this command while it is serving (it answers on its control socket).`);
    }
    if (e instanceof RoostError) {
      const details = e.details
        ? Object.entries(e.details)
            .map(([k, errs]) => errs.map((x) => `  ${k}: ${x.description} (${x.error})`).join('\n'))
            .join('\n')
        : '';
      die(`roost: ${e.message}${details ? `\n${details}` : ''}`);
    }
    die(`roost: ${(e as Error).stack ?? String(e)}`);
  },
);
