/**
 * Concurrent first follows of one pair: with no follow row yet there is nothing to lock, so on
 * PostgreSQL two transactions may both insert and the loser hits the unique (account_id,
 * target_account_id) index. Every request must still answer 200 with the settled relationship,
 * and the pair must end with exactly one row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

describe('concurrent first follows of the same pair', () => {
  let roost: TestRoost;
  let alice: TestUser;

  beforeAll(async () => {
    roost = await startTestRoost();
    alice = await createTestUser(roost, 'alice');
  });
  afterAll(async () => {
    await roost?.close();
  });

  it('answer 200 with the relationship, and leave one follow row per pair', async () => {
    const statuses: number[] = [];
    const targets: TestUser[] = [];
    for (let round = 0; round < 12; round++) {
      // Every other target is locked: the racing requests then settle on a pending request.
      const target = await createTestUser(roost, `target${round}`);
      if (round % 2 === 1) expect((await target.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } })).status).toBe(200);
      targets.push(target);
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => alice.api(`/api/v1/accounts/${target.account.id}/follow`, { method: 'POST' })),
      );
      for (const a of answers) {
        statuses.push(a.status);
        if (a.status === 200) {
          expect(a.body.id).toBe(target.account.id);
          expect(round % 2 === 1 ? a.body.requested : a.body.following).toBe(true);
        }
      }
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const rows = await roost.services.db.sql.query<{ target: string; n: number }>(
      `select target_account_id::text as target, count(*)::int as n from follows where account_id = $1 group by 1`,
      [alice.account.id],
    );
    expect(rows.map((r) => r.n)).toEqual(targets.map(() => 1));
  }, 120_000);
});
