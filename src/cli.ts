#!/usr/bin/env node
/**
 * The `roost` command: start, migrate, accounts. Run it as `npx roost …` or `npm run roost -- …`
 * from the checkout.
 */
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from '../config/index.ts';
import { loadOrCreateSecrets } from '../config/secrets.ts';
import { startRoost, openRoostServices } from './main.ts';
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
    return await runCommand(roost.services, name, args);
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
