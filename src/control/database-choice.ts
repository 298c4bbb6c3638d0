/**
 * The data directory remembers which database its instance uses (`DATA_DIR/database.json`), so a
 * `roost` command run without `ROOST_DATABASE_URL` on the directory of a server that runs on
 * PostgreSQL does not quietly start the embedded database beside it and act on an empty instance:
 * it refuses, in one line, naming the server (its password left out) and the variable to set.
 * Written after a successful open; a server's choice is kept until the file is removed.
 */
import { existsSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../../config/index.ts';

const FILE = 'database.json';

interface Choice {
  database: 'server' | 'embedded';
  /** The server's URL without its password. */
  url?: string;
}

/** `postgres://user:secret@host/db` → `postgres://user@host/db` (and any query left out). */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    u.search = '';
    return u.toString();
  } catch {
    return 'a PostgreSQL server';
  }
}

function read(dataDir: string): Choice | null {
  const file = path.join(dataDir, FILE);
  if (!existsSync(file)) return null;
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Choice;
    return parsed.database === 'server' || parsed.database === 'embedded' ? parsed : null;
  } catch {
    return null;
  }
}

/** Throws when this directory's instance runs on a server and no server was given. */
export function checkDatabaseChoice(dataDir: string, databaseUrl: string | undefined): void {
  if (databaseUrl) return;
  const choice = read(dataDir);
  if (choice?.database === 'server') {
    throw new ConfigError(
      `The Roost of ${dataDir} runs on PostgreSQL at ${choice.url ?? 'a server'}: set ROOST_DATABASE_URL to reach it ` +
        `(without it this would start the embedded database, a different and empty instance; remove ${path.join(dataDir, FILE)} to mean that).`,
    );
  }
}

/** Records the database this directory's instance uses (after a successful open). */
export function recordDatabaseChoice(dataDir: string, databaseUrl: string | undefined): void {
  const choice: Choice = databaseUrl ? { database: 'server', url: redactDatabaseUrl(databaseUrl) } : { database: 'embedded' };
  const current = read(dataDir);
  if (current && current.database === choice.database && current.url === choice.url) return;
  const file = path.join(dataDir, FILE);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(choice)}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}
