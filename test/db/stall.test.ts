/**
 * Issue 24 items 5 and 6 beyond the wedge itself: the stall detector logs what is stuck behind a
 * held lock, shutdown gives up on stuck work after its bound and says what it abandoned, and on a
 * PostgreSQL server Roost's connections run without JIT and migrations leave the tables analysed.
 */
import { Writable } from 'node:stream';
import { describe, it, expect, afterEach } from 'vitest';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { handleShutdownSignals } from '../../src/http/index.ts';
import { stuckWork } from '../../src/db/stall.ts';
import { createTestSql } from '../helpers/sql.ts';
import { openDatabase } from '../../src/db/orm.ts';

function logSink(): { lines: Record<string, any>[]; stream: Writable } {
  const lines: Record<string, any>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { lines, stream };
}

let roost: TestRoost | undefined;
let release: (() => void) | undefined;
afterEach(async () => {
  release?.();
  await roost?.close();
  roost = undefined;
});

/** Holds `lock table accounts` in a transaction until release() (on PGlite: its only session). */
function holdAccountsLock(r: TestRoost): Promise<void> {
  let locked!: () => void;
  const isLocked = new Promise<void>((res) => (locked = res));
  const held = new Promise<void>((res) => (release = res));
  void r.services.db.sql.transaction(async (tx) => {
    await tx.query('lock table accounts in access exclusive mode');
    locked();
    await held;
  });
  return isLocked;
}

describe('the stall detector', () => {
  it('logs the pending statements when a lock holds them', { timeout: 60_000 }, async () => {
    const log = logSink();
    roost = await startTestRoost({ databaseStallSeconds: 1, logLevel: 'error', logFormat: 'json' }, { logDestination: log.stream, logLevel: 'error' });
    expect(log.lines.filter((l) => String(l.msg).startsWith('database stalled'))).toEqual([]);
    await holdAccountsLock(roost);
    const stuck = roost.services.db.sql.query(`select count(*) from accounts where username = 'stuck_probe'`);
    const line = await eventually(async () => log.lines.find((l) => String(l.msg).startsWith('database stalled')), 20_000, 'the stall logged');
    expect(line.level).toBe(50);
    expect(line.pending.map((p: { text: string }) => p.text)).toContainEqual(expect.stringContaining('stuck_probe'));
    expect(line.pending[0].ageMs).toBeGreaterThanOrEqual(1000);
    expect(line.transactions.length).toBeGreaterThanOrEqual(1);
    {
      // The server's view names the session waiting and the one holding the lock.
      const sessions = line.server.sessions as { pid: number; query: string; blocked_by: number[]; state: string }[];
      const waiting = sessions.find((s) => s.query.includes('stuck_probe'))!;
      expect(waiting.blocked_by.length).toBe(1);
      expect(sessions.find((s) => s.pid === waiting.blocked_by[0])!.query).toContain('lock table accounts');
    }
    release!();
    await stuck;
  });
});

describe('bounded shutdown', () => {
  it('exits after its bound when a statement is stuck, logging what it abandoned', { timeout: 60_000 }, async () => {
    roost = await startTestRoost();
    const r = roost;
    await holdAccountsLock(r);
    const log = logSink();
    const pino = (await import('pino')).default({ level: 'info' }, log.stream);
    const exits: number[] = [];
    const dispose = handleShutdownSignals(
      // A drain that waits on a statement the lock holds.
      async () => void (await r.services.db.sql.query(`select count(*) from accounts where username = 'drain_probe'`)),
      { log: pino, signals: ['SIGUSR2'], forceAfterMs: 500, exit: (c) => exits.push(c), abandoned: () => stuckWork(r.services.db.tracker) },
    );
    try {
      process.emit('SIGUSR2', 'SIGUSR2');
      await eventually(async () => exits.length > 0, 10_000, 'the exit');
      expect(exits).toEqual([1]);
      const line = log.lines.find((l) => String(l.msg).startsWith('shutdown took too long'))!;
      expect(line.abandoned.pending.map((p: { text: string }) => p.text)).toContainEqual(expect.stringContaining('drain_probe'));
    } finally {
      dispose();
    }
  });
});

describe('JIT and statistics', () => {
  it('runs without JIT and leaves the tables analysed after migrating a new database', { timeout: 60_000 }, async () => {
    const fresh = await createTestSql();
    const db = await openDatabase({ databaseUrl: fresh.url, poolMax: 2 });
    try {
      expect((await db.migrate()).length).toBeGreaterThan(0);
      expect(await db.sql.query('show jit')).toEqual([{ jit: 'off' }]);
      const rows = await db.sql.query<{ relname: string; analysed: boolean }>(
        `select relname, last_analyze is not null as analysed from pg_stat_user_tables where relname in ('accounts', 'statuses', 'follows', 'jobs')`,
      );
      expect(rows.length).toBe(4);
      expect(rows.filter((r) => !r.analysed)).toEqual([]);
    } finally {
      await db.close();
      await fresh.close();
    }
  });
});
