// Server (c) of `npm run bench -- http`: the full Roost HTTP stack.
//
// The whole of Roost (startRoost: uWS, router, CORS, request id, access log, auth-free route,
// instance service with its cache, serializer) serving GET /api/v1/instance; createHandler() gives
// the same route's handler to the baselines.
//
// Run directly by the bench in its own process: prints `LISTENING <port>` on stdout.

import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { Handler } from '../../src/http/index.ts';
import { loadConfig } from '../../config/index.ts';
import { openRoostServices, startRoost } from '../../src/main.ts';
import { buildRouter } from '../../src/api/routes.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { batchedDestination } from '../../src/log.ts';
import type { Services } from '../../src/context.ts';

/**
 * The seam: the real Roost handler for GET /api/v1/instance (router, service, serializer), on its
 * own embedded database with one account, the contact Owner. The node:http (b) and bare uWS (a')
 * baselines call this same handler; (c) starts the whole of Roost.
 */
export async function createHandler(): Promise<Handler> {
  const { services } = await openRoostServices(benchConfig(0), { logLevel: 'silent' });
  await seed(services);
  const match = buildRouter(services).match('GET', BENCH_PATH);
  if (!match || !('handler' in match)) throw new Error(`no route for ${BENCH_PATH}`);
  return match.handler;
}

function benchConfig(port: number) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-http-'));
  process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  return loadConfig({
    env: {},
    overrides: {
      domain: 'roost.example',
      port,
      dataDir,
      // The limiter runs (its cost is part of the figure) but wrk's one address never meets it.
      rateLimits: { perIp: { limit: 1_000_000_000, periodSeconds: 300 } },
      instance: {
        title: 'Roost',
        contactEmail: 'admin@roost.example',
        languages: ['en', 'de', 'fr'],
        rules: [
          { text: 'Be kind and respectful to other people.', hint: 'No harassment, no dogpiling.' },
          { text: 'No illegal content.', hint: 'Content that is illegal where the server is hosted is removed.' },
          { text: 'Mark sensitive media and content warnings.', hint: 'Use CWs for spoilers and heavy topics.' },
          { text: 'No spam or automated advertising.', hint: 'Bots must be marked as bots.' },
        ],
      },
    },
  });
}

async function seed(services: Services): Promise<void> {
  await createLocalAccount(services, { username: 'owner', email: 'owner@roost.example', role: 'Owner', confirmed: true });
}

export const BENCH_PATH = '/api/v1/instance';

async function main(): Promise<void> {
  const port = Number(process.argv[2] ?? 0);
  // --log=on (default): the access log on (info) as in production, written as Roost writes it
  //   (batched, once per event-loop turn) to /dev/null: the logging cost counts, the disk does not.
  // --log=sync: the same lines written the way pino writes to stdout by default (one write per
  //   line), to show what batching saves.
  // --log=off: no access log (level warn).
  const mode = process.argv.find((a) => a.startsWith('--log='))?.slice(6) ?? 'on';
  const devNull = openSync('/dev/null', 'w');
  const destination = mode === 'sync' ? pino.destination({ dest: devNull, sync: true }) : batchedDestination(devNull);
  const roost = await startRoost(benchConfig(port), { logLevel: mode === 'off' ? 'warn' : 'info', logDestination: destination });
  await seed(roost.services);
  process.stdout.write(`LISTENING ${roost.port}\n`);
  process.on('SIGTERM', () => void roost.close().then(() => process.exit(0)));
}

if (process.argv[1] && import.meta.filename === (await import('node:path')).resolve(process.argv[1])) await main();
