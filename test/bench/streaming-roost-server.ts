// The Roost side of `npm run bench -- streaming`: one Roost process (embedded database) with one
// user; writes that user's token to the file named by argv[3], then prints LISTENING <port>. Its
// clients all share that one account: the per-account cap on streaming connections is lifted.

import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/index.ts';
import { startRoost } from '../../src/main.ts';
import { batchedDestination } from '../../src/log.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';
import { writeStreamingEvent, type StreamingEventInput } from '../../src/streaming/store.ts';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const port = Number(process.argv[2] ?? 0);
const tokenFile = process.argv[3];
if (!tokenFile) throw new Error('usage: streaming-roost-server.ts <port> <token-file>');
const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-streaming-'));
process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));
const UNREACHED = { limit: 1_000_000_000, periodSeconds: 300 };
const config = loadConfig({ env: {}, overrides: { domain: 'roost.example', host: '127.0.0.1', port, dataDir, databaseUrl: null, rateLimits: { perToken: UNREACHED, perIp: UNREACHED }, streaming: { maxConnectionsPerAccount: 100_000 } } });
const roost = await startRoost(config, { logLevel: 'warn', logDestination: batchedDestination(openSync('/dev/null', 'w')), controlSocket: false });
const alice = await createLocalAccount(roost.services, { username: 'alice', email: 'alice@example.test', confirmed: true });
const { token } = await issueAccessToken(roost.services, { applicationId: null, userId: alice.user.id, scopes: ['read', 'write'] });
writeFileSync(tokenFile, token);
process.stdout.write(`LISTENING ${roost.port}\n`);
// SIGUSR2: a full GC (the bench measures resident memory after one).
process.on('SIGUSR2', () => gc());
// SIGUSR1: the last status event written again (event log → NOTIFY → hub → clients, without the REST path),
// with its author, mentions and author's domain, so the hub screens it as it screens a status's event.
// The event is read once (the first signal), so what follows a signal is the event log's path.
let event: StreamingEventInput | null = null;
process.on('SIGUSR1', () => {
  void (async () => {
    if (event === null) {
      const [row] = await roost.services.db.sql.query<{ payload: string; author_id: string | null; mention_ids: string[]; author_domain: string | null }>(
        `select payload, author_id::text, mention_ids::text[], author_domain from streaming_events where event = 'update' order by id desc limit 1`,
      );
      if (row) event = { streams: ['public'], event: 'update', payload: row.payload, authorId: row.author_id, mentionIds: row.mention_ids, authorDomain: row.author_domain };
    }
    if (event !== null) await writeStreamingEvent(roost.services, event);
  })();
});
process.on('SIGTERM', () => void roost.close().then(() => process.exit(0)));
