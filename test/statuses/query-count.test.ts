/**
 * A page of statuses renders with a fixed number of statements: 5 and 20 statuses (with
 * reblogs, mentions, tags, favourites and an application) cost the same statements.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let poster: TestUser;
let reader: TestUser;
beforeAll(async () => {
  roost = await startTestRoost();
  poster = await createTestUser(roost, 'poster');
  reader = await createTestUser(roost, 'reader');
  const others: TestUser[] = [];
  for (let i = 0; i < 4; i++) others.push(await createTestUser(roost, `other${i}`));
  for (let i = 0; i < 24; i++) {
    if (i % 3 === 0) {
      // A reblog of another account's status: its original renders nested, in the same statements.
      const other = others[i % others.length]!;
      const s = (await other.api('/api/v1/statuses', { method: 'POST', body: { status: `by ${other.account.username} #topic` } })).body;
      expect((await poster.api(`/api/v1/statuses/${s.id}/reblog`, { method: 'POST' })).status).toBe(200);
    } else {
      const s = (await poster.api('/api/v1/statuses', { method: 'POST', body: { status: `post ${i} @reader @other${i % 4} #n${i}` } })).body;
      await reader.api(`/api/v1/statuses/${s.id}/favourite`, { method: 'POST' });
    }
  }
}, 120_000);
afterAll(async () => roost?.close());

describe('a page of statuses costs a fixed number of queries', () => {
  it("for an account's statuses: 5 and 20 alike, signed in", async () => {
    const path = `/api/v1/accounts/${poster.account.id}/statuses`;
    await reader.api(`${path}?limit=1`); // the token is now cached, like any busy client's
    let five: { status: number; body: { reblog: unknown; mentions: unknown[]; favourited: boolean }[] } | undefined;
    let twenty: typeof five;
    const q5 = await capturedStatements(roost, async () => (five = await reader.api(`${path}?limit=5`)));
    const q20 = await capturedStatements(roost, async () => (twenty = await reader.api(`${path}?limit=20`)));
    expect([five!.status, five!.body.length, twenty!.status, twenty!.body.length]).toEqual([200, 5, 200, 20]);
    expect(twenty!.body.filter((s) => s.reblog).length).toBeGreaterThanOrEqual(6);
    expect(twenty!.body.filter((s) => s.favourited).length).toBeGreaterThanOrEqual(12);
    expect(q20).toEqual(q5);
    // Who the account is, the page of ids, the statuses, their authors, mentions and tags, the viewer's flags.
    expect(q5.length).toBe(6);
  });
});
