/**
 * The database server a benchmark runs on: `ROOST_BENCH_DATABASE_URL` (default the local
 * PostgreSQL server), or, with `ROOST_BENCH_DATABASE_URL=embedded`, an embedded PostgreSQL started
 * for the run with the settings the default install uses (src/db/embedded.ts), in a scratch
 * directory removed at the end. Either way a URL to its maintenance database.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../../src/db/embedded.ts';

export interface BenchServer {
  url: string;
  label: string;
  stop(): Promise<void>;
}

export async function benchServer(): Promise<BenchServer> {
  const setting = process.env.ROOST_BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  if (setting !== 'embedded') return { url: setting, label: 'PostgreSQL server', stop: async () => {} };
  const dir = mkdtempSync(path.join(tmpdir(), 'roost-bench-pg-'));
  const server = await startEmbeddedPostgres({ dataDir: dir, database: 'postgres' });
  return {
    url: server.url,
    label: 'embedded PostgreSQL',
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
