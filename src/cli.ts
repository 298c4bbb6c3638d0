#!/usr/bin/env node
/**
 * The `roost` command: start, migrate, accounts. Run it as `npx roost …` or `npm run roost -- …`
 * from the checkout.
 */
import './node-version.ts'; // first: refuses an old Node before anything else loads
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from '../config/index.ts';
import { loadOrCreateSecrets } from '../config/secrets.ts';
import { startRoost, openRoostServices, federationOn } from './main.ts';
import { sendControlCommand } from './control/socket.ts';
import { runCommand, type CommandArgs } from './control/commands.ts';
import { RoostError } from './lib/errors.ts';
import { DataDirLockedError } from './control/lock.ts';

const USAGE = `Usage: roost <command>

  roost start                         serve Roost in the foreground
  roost migrate                       apply pending database migrations and exit
  roost accounts create USERNAME --email EMAIL [--confirmed] [--role Owner|Admin|Moderator]
                                      create a local account; prints "New password: …" last
  roost accounts modify USERNAME [--role ROLE | --remove-role] [--approve] [--confirm] [--disable | --enable]
                                      change a local account's role, approval, confirmation or login
  roost accounts alias USERNAME [--add ACCOUNT]... [--remove ACCOUNT]...
                                      add or remove aliases (alsoKnownAs): the accounts a Move to
                                      USERNAME is accepted from; ACCOUNT is user@domain or an actor URL
  roost accounts migrate USERNAME --target ACCOUNT [--force] | --replay
                                      move a local account to ACCOUNT (which must list it as an alias):
                                      local followers move at once, Move goes to the other servers;
                                      --replay sends the Move again, --force moves an account that
                                      already redirects elsewhere

Configuration comes from ROOST_* environment variables and an optional roost.config.json
(see README.md).`;

function die(message: string, code = 1): never {
  process.stderr.write(message.endsWith('\n') ? message : `${message}\n`);
  process.exit(code);
}

/** Runs an operator command in the running server when it holds the embedded database, else here. */
async function operatorCommand(name: string, args: CommandArgs): Promise<Record<string, unknown>> {
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
  const roost = await openRoostServices(config, { logLevel: 'warn' });
  try {
    return await runCommand(roost.services, name, args, { federation: federationOn(roost.services) });
  } finally {
    await roost.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start': {
      const config = loadConfig();
      loadOrCreateSecrets(config.dataDir);
      const roost = await startRoost(config);
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        roost.services.log.info({ signal }, 'shutting down');
        await roost.close();
        process.exit(0);
      };
      process.on('SIGTERM', () => void stop('SIGTERM'));
      process.on('SIGINT', () => void stop('SIGINT'));
      return;
    }
    case 'migrate': {
      const config = loadConfig();
      const roost = await openRoostServices(config, { logLevel: 'warn', migrate: false });
      try {
        const applied = await roost.services.db.migrate();
        process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'The database is up to date.\n');
      } finally {
        await roost.close();
      }
      return;
    }
    case 'accounts': {
      const [sub, ...args] = rest;
      if (sub === 'modify') {
        const { values, positionals } = parseArgs({
          args,
          allowPositionals: true,
          options: {
            role: { type: 'string' },
            'remove-role': { type: 'boolean', default: false },
            approve: { type: 'boolean', default: false },
            confirm: { type: 'boolean', default: false },
            disable: { type: 'boolean', default: false },
            enable: { type: 'boolean', default: false },
          },
        });
        if (positionals.length !== 1) die(`roost accounts modify: give exactly one USERNAME\n\n${USAGE}`, 2);
        if (values.disable && values.enable) die('roost accounts modify: --disable and --enable exclude each other', 2);
        if (values.role && values['remove-role']) die('roost accounts modify: --role and --remove-role exclude each other', 2);
        const result = await operatorCommand('accounts.modify', {
          username: positionals[0],
          role: values.role,
          removeRole: values['remove-role'],
          approve: values.approve,
          confirm: values.confirm,
          disable: values.disable,
          enable: values.enable,
        });
        process.stdout.write(`OK: ${result.username}: ${(result.changes as string[]).join(', ')}\n`);
        return;
      }
      if (sub === 'alias') {
        const { values, positionals } = parseArgs({
          args,
          allowPositionals: true,
          options: { add: { type: 'string', multiple: true }, remove: { type: 'string', multiple: true } },
        });
        if (positionals.length !== 1) die(`roost accounts alias: give exactly one USERNAME\n\n${USAGE}`, 2);
        if (!values.add?.length && !values.remove?.length) die('roost accounts alias: give --add or --remove', 2);
        const result = await operatorCommand('accounts.alias', { username: positionals[0], add: values.add ?? [], remove: values.remove ?? [] });
        const aliases = result.aliases as string[];
        process.stdout.write(`OK: ${result.username} is also known as: ${aliases.length ? aliases.join(', ') : '(nobody)'}\n`);
        return;
      }
      if (sub === 'migrate') {
        const { values, positionals } = parseArgs({
          args,
          allowPositionals: true,
          options: { target: { type: 'string' }, replay: { type: 'boolean', default: false }, force: { type: 'boolean', default: false } },
        });
        if (positionals.length !== 1) die(`roost accounts migrate: give exactly one USERNAME\n\n${USAGE}`, 2);
        if (!values.target && !values.replay) die('roost accounts migrate: give --target ACCOUNT, or --replay', 2);
        if (values.replay && values.force) die('roost accounts migrate: --replay and --force exclude each other', 2);
        const result = await operatorCommand('accounts.migrate', {
          username: positionals[0],
          target: values.target,
          replay: values.replay,
          force: values.force,
        });
        process.stdout.write(
          result.replayed
            ? `OK: the Move of ${result.username} to ${result.target} is sent again\n`
            : `OK: ${result.username} moved to ${result.target}; ${result.migrated} local follower(s) moved, ${result.failed} could not; the Move is on its way to the other servers\n`,
        );
        return;
      }
      if (sub !== 'create') die(`roost accounts: unknown subcommand ${sub ?? '(none)'}\n\n${USAGE}`, 2);
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: {
          email: { type: 'string' },
          confirmed: { type: 'boolean', default: false },
          role: { type: 'string' },
        },
      });
      const username = positionals[0];
      if (!username || positionals.length > 1) die(`roost accounts create: give exactly one USERNAME\n\n${USAGE}`, 2);
      if (!values.email) die('roost accounts create: --email is required', 2);
      const result = await operatorCommand('accounts.create', {
        username,
        email: values.email,
        confirmed: values.confirmed,
        role: values.role,
      });
      process.stdout.write(`OK\nNew password: ${result.password}\n`);
      return;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      die(`roost: unknown command ${command}\n\n${USAGE}`, 2);
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  if (e instanceof ConfigError) die(`roost: ${e.message}`, 78);
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
});
