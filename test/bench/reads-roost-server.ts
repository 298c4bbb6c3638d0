// Roost, the whole of it, for `npm run bench -- reads`: startRoost on the PostgreSQL database the
// bench prepared (argv: port, database URL, and optional configuration as JSON). The access log is on (info, as in production),
// written as Roost writes it (batched) to /dev/null. Prints `LISTENING <port>`.

import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/index.ts';
import { startRoost } from '../../src/main.ts';
import { batchedDestination } from '../../src/log.ts';

export const BENCH_DOMAIN = 'roost.example';

const port = Number(process.argv[2] ?? 0);
const databaseUrl = process.argv[3];
if (!databaseUrl) throw new Error('usage: reads-roost-server.ts <port> <database-url>');
const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-reads-'));
process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));
// The rate limiter runs (its cost, a counter per request in PostgreSQL, is part of the figure) but
// the bench's one token and one address never meet their limits.
const UNREACHED = { limit: 1_000_000_000, periodSeconds: 300 };
// argv[4], optional: more configuration as JSON (the pages bench turns the page cache off with it).
const extra = process.argv[4] ? (JSON.parse(process.argv[4]) as Record<string, unknown>) : {};
const config = loadConfig({ env: {}, overrides: { domain: BENCH_DOMAIN, port, dataDir, databaseUrl, rateLimits: { perToken: UNREACHED, perIp: UNREACHED }, ...extra } });
const roost = await startRoost(config, { logLevel: 'info', logDestination: batchedDestination(openSync('/dev/null', 'w')), controlSocket: false });
process.stdout.write(`LISTENING ${roost.port}\n`);
process.on('SIGTERM', () => void roost.close().then(() => process.exit(0)));
