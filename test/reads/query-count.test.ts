/**
 * The read side renders a page with a fixed number of queries: followers and blocks pages of 5
 * and of 40 accounts cost the same statements (no query per row).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let star: TestUser;
let fans: TestUser[];
beforeAll(async () => {
  roost = await startTestRoost();
  star = await createTestUser(roost, 'star');
  fans = [];
  for (let i = 0; i < 40; i++) fans.push(await createTestUser(roost, `fan${i}`));
  for (const fan of fans) {
    await fan.api(`/api/v1/accounts/${star.account.id}/follow`, { method: 'POST' });
    await star.api(`/api/v1/accounts/${fan.account.id}/block`, { method: 'POST' });
  }
  // (The blocks ended those follows: the followers test follows a second account.)
}, 120_000);
afterAll(async () => roost?.close());

const statements = (fn: () => Promise<unknown>) => capturedStatements(roost, fn, 60);

describe('a page costs a fixed number of queries', () => {
  it('for blocks: 5 and 40 accounts alike', async () => {
    await star.api('/api/v1/blocks?limit=1'); // the token is now cached, like any busy client's
    let five: { status: number; body: unknown[] } | undefined;
    let forty: { status: number; body: unknown[] } | undefined;
    const q5 = await statements(async () => (five = await star.api('/api/v1/blocks?limit=5')));
    const q40 = await statements(async () => (forty = await star.api('/api/v1/blocks?limit=40')));
    expect([five!.status, five!.body.length, forty!.status, forty!.body.length]).toEqual([200, 5, 200, 40]);
    expect(q40).toEqual(q5);
    expect(q5.length).toBe(2); // the page of rows, then the accounts with their stats and roles
  });

  it('for followers: 5 and 40 accounts alike, moved-to accounts included', async () => {
    const idol = await createTestUser(roost, 'idol');
    for (const fan of fans) await fan.api(`/api/v1/accounts/${idol.account.id}/follow`, { method: 'POST' });
    // Some followers moved away: their targets render nested, in the same statement.
    await roost.services.db.sql.query(`update accounts set moved_to_account_id = $1 where id = any($2::bigint[])`, [
      star.account.id,
      fans.slice(0, 3).map((f) => f.account.id),
    ]);
    await idol.api(`/api/v1/accounts/${idol.account.id}/followers?limit=1`);
    let five: { status: number; body: { moved?: unknown }[] } | undefined;
    let forty: { status: number; body: { moved?: unknown }[] } | undefined;
    const q5 = await statements(async () => (five = await idol.api(`/api/v1/accounts/${idol.account.id}/followers?limit=5`)));
    const q40 = await statements(async () => (forty = await idol.api(`/api/v1/accounts/${idol.account.id}/followers?limit=40`)));
    expect([five!.status, five!.body.length, forty!.status, forty!.body.length]).toEqual([200, 5, 200, 40]);
    expect(forty!.body.filter((a) => a.moved).length).toBe(3);
    expect(q40).toEqual(q5);
    expect(q5.length).toBe(3); // who may see the list, the page of rows, the accounts
  });
});
