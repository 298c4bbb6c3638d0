/**
 * A report cites only statuses its reporter may see (issue 24, item 7): citing a private or direct
 * status of the reported account is 404 "Record not found", exactly as for an id that does not
 * exist, so a report cannot tell whether a status it cannot see exists. Nothing is written.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

beforeAll(async () => {
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
  carol = await createTestUser(roost, 'carol');
});
afterAll(async () => roost?.close());

async function post(user: TestUser, status: string, visibility: string): Promise<string> {
  const res = await user.api('/api/v1/statuses', { body: { status, visibility } });
  expect(res.status).toBe(200);
  return res.body.id;
}

const reports = async () => (await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from reports`))[0]!.n;

describe('the statuses a report cites', () => {
  it('are refused with 404, as an unknown id, when the reporter cannot see them', async () => {
    const open = await post(alice, 'public words', 'public');
    const followersOnly = await post(alice, 'for followers', 'private');
    const direct = await post(alice, '@carol for carol only', 'direct');
    const before = await reports();
    for (const hidden of [followersOnly, direct]) {
      const res = await bob.api('/api/v1/reports', { body: { account_id: alice.account.id, status_ids: [hidden] } });
      expect([res.status, res.body]).toEqual([404, { error: 'Record not found' }]);
      const mixed = await bob.api('/api/v1/reports', { body: { account_id: alice.account.id, status_ids: [open, hidden] } });
      expect([mixed.status, mixed.body]).toEqual([404, { error: 'Record not found' }]);
    }
    const unknown = await bob.api('/api/v1/reports', { body: { account_id: alice.account.id, status_ids: ['123456789'] } });
    expect([unknown.status, unknown.body]).toEqual([404, { error: 'Record not found' }]);
    expect(await reports()).toBe(before);

    // What the reporter can see is cited: the public status; the direct one by the one it mentions.
    const ok = await bob.api('/api/v1/reports', { body: { account_id: alice.account.id, status_ids: [open] } });
    expect([ok.status, ok.body.status_ids]).toEqual([200, [open]]);
    const byCarol = await carol.api('/api/v1/reports', { body: { account_id: alice.account.id, status_ids: [direct] } });
    expect([byCarol.status, byCarol.body.status_ids]).toEqual([200, [direct]]);

    // A follower sees the followers-only one; a deleted status stays reportable (Mastodon's with_discarded).
    expect((await bob.api(`/api/v1/accounts/${alice.account.id}/follow`, { method: 'POST' })).body.following).toBe(true);
    const asFollower = await bob.api('/api/v1/reports', { body: { account_id: alice.account.id, status_ids: [followersOnly] } });
    expect([asFollower.status, asFollower.body.status_ids]).toEqual([200, [followersOnly]]);
    expect((await alice.api(`/api/v1/statuses/${open}`, { method: 'DELETE' })).status).toBe(200);
    expect((await carol.api('/api/v1/reports', { body: { account_id: alice.account.id, status_ids: [open] } })).status).toBe(200);
  });
});
