/**
 * How many SQL statements POST /api/v1/accounts/:id/follow costs, counted by the database layer's
 * statement counter (db.statements(): every statement, BEGIN and COMMIT included) around a real
 * request on a real server. The queues are drained first; the count is the smallest of five
 * follows of fresh accounts (a background poll landing in the window only ever adds).
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
      const before = roost.services.db.statements();
      const res = await a.api(`/api/v1/accounts/${b.account.id}/follow`, { method: 'POST' });
      const used = roost.services.db.statements() - before;
      expect(res.status).toBe(200);
      expect(res.body.following).toBe(true);
      counts.push(used);
    }
    const fewest = Math.min(...counts);
    console.log(`POST /api/v1/accounts/:id/follow: ${fewest} statements (runs: ${counts.join(', ')})`);
    expect(fewest).toBeGreaterThan(0);
    expect(fewest).toBeLessThanOrEqual(STATEMENT_BUDGET);
  });
});

/** The budget this test holds the route to (the count before the actor store was 19). */
const STATEMENT_BUDGET = 30;
