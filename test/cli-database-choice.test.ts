/**
 * The data directory remembers the database its instance runs on: a `roost` command without
 * ROOST_DATABASE_URL on the directory of a server that runs on PostgreSQL refuses in one line
 * (naming the server without its password, and the variable) instead of starting the embedded
 * database beside it, an empty other instance; with the variable it works.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config/index.ts';
import { openRoostServices } from '../src/main.ts';
import { checkDatabaseChoice, redactDatabaseUrl } from '../src/control/database-choice.ts';
import { createTestDatabase } from './helpers/roost.ts';
import { runCli } from './helpers/cli.ts';

const dirs: string[] = [];
const newDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'roost-dbchoice-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const run = runCli;

describe('the database a data directory belongs to', () => {
  it('leaves the password out of what it records', () => {
    expect(redactDatabaseUrl('postgres://roost:s3cret@db.example:5432/roost?sslmode=require')).toBe('postgres://roost@db.example:5432/roost');
    expect(redactDatabaseUrl('not a url')).toBe('a PostgreSQL server');
  });

  it('is recorded at open, and a command without ROOST_DATABASE_URL refuses in one line', async () => {
    const db = await createTestDatabase();
    const dataDir = newDir();
    try {
      const config = loadConfig({ env: { ROOST_DATA_DIR: dataDir, ROOST_DATABASE_URL: db.url } });
      const opened = await openRoostServices(config, { logLevel: 'warn' });
      await opened.close();
      const recorded = JSON.parse(readFileSync(path.join(dataDir, 'database.json'), 'utf8')) as { database: string; url: string };
      expect(recorded).toEqual({ database: 'server', url: new URL(db.url).toString().replace(/\?.*$/, '') });
      expect(() => checkDatabaseChoice(dataDir, undefined)).toThrowError(/runs on PostgreSQL at .*: set ROOST_DATABASE_URL to reach it/);
      expect(() => checkDatabaseChoice(dataDir, db.url)).not.toThrow();

      const refused = await run(['accounts', 'list'], { ROOST_DATA_DIR: dataDir });
      expect(refused.code).toBe(78);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      expect(refused.stderr).toMatch(/^roost: The Roost of .* runs on PostgreSQL at postgres(ql)?:\/\/.*: set ROOST_DATABASE_URL to reach it/);
      // Nothing was started beside it: no embedded cluster in the directory.
      expect(existsSync(path.join(dataDir, 'postgres'))).toBe(false);

      const listed = await run(['accounts', 'list'], { ROOST_DATA_DIR: dataDir, ROOST_DATABASE_URL: db.url });
      expect([listed.code, listed.stdout]).toEqual([0, 'No local accounts.\n']);
    } finally {
      await db.drop();
    }
  }, 120_000);

  it('records an embedded instance too, and lets it be', async () => {
    const dataDir = newDir();
    const config = loadConfig({ env: { ROOST_DATA_DIR: dataDir } });
    const opened = await openRoostServices(config, { logLevel: 'warn' });
    await opened.close();
    expect(JSON.parse(readFileSync(path.join(dataDir, 'database.json'), 'utf8'))).toEqual({ database: 'embedded' });
    expect(() => checkDatabaseChoice(dataDir, undefined)).not.toThrow();
  }, 120_000);
});
