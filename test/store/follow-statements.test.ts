/**
 * How many SQL statements POST /api/v1/accounts/:id/follow costs, counted by the database layer's
 * statement counter (db.statements()) around a real request on a real server, minus those the job
 * workers sent meanwhile (db.statements('jobs'): the outbox event the follow leaves is handled
 * after commit, off the request). The queues are drained first; five follows of fresh accounts.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser } from '../helpers/auth.ts';

let roost: TestRoost;
beforeAll(async () => {
  roost = await startTestRoost();
});
afterAll(async () => roost?.close());

describe('statements per follow', () => {
  it('POST /api/v1/accounts/:id/follow of a local unlocked account', async () => {
    const counts: number[] = [];
    for (let i = 0; i < 5; i++) {
      const a = await createTestUser(roost, `stmt_a${i}`);
      const b = await createTestUser(roost, `stmt_b${i}`);
      await settled(roost);
      const db = roost.services.db;
      const before = db.statements() - db.statements('jobs');
      const res = await a.api(`/api/v1/accounts/${b.account.id}/follow`, { method: 'POST' });
      const used = db.statements() - db.statements('jobs') - before;
      expect(res.status).toBe(200);
      expect(res.body.following).toBe(true);
      counts.push(used);
    }
    console.log(`POST /api/v1/accounts/:id/follow: ${counts.join(', ')} statements (before the actor store: ${BEFORE})`);
    // Every follow of the same kind costs the same: nothing else runs in the request's window.
    expect(new Set(counts).size).toBe(1);
    expect(counts[0]).toBeLessThanOrEqual(BUDGET);
  });
});

/**
 * The budget this test holds the route to. Before this work, on PGlite: 21 (6 authenticating,
 * 7 following, 8 rendering the Relationship); now 10: authentication is one statement (cached
 * after the first request), the follow is 5 — the pair with its block and mute facts, the row
 * lock, the insert, the outbox, the counters (account_stats) — and the Relationship is one. The
 * counter also sees BEGIN and COMMIT: 25 before, 12 now.
 */
const BEFORE = 25;
const BUDGET = 12;
