/**
 * A timeline page renders with a fixed number of statements: 5 and 20 statuses (with reblogs,
 * mentions, tags, favourites) cost the same statements on home, public and hashtag timelines.
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
  const other = await createTestUser(roost, 'other');
  expect((await reader.api(`/api/v1/accounts/${poster.account.id}/follow`, { method: 'POST' })).body.following).toBe(true);
  for (let i = 0; i < 24; i++) {
    if (i % 4 === 0) {
      const s = (await other.api('/api/v1/statuses', { method: 'POST', body: { status: `by other #topic` } })).body;
      expect((await poster.api(`/api/v1/statuses/${s.id}/reblog`, { method: 'POST' })).status).toBe(200);
    } else {
      const s = (await poster.api('/api/v1/statuses', { method: 'POST', body: { status: `post ${i} @reader @other #topic #n${i}` } })).body;
      await reader.api(`/api/v1/statuses/${s.id}/favourite`, { method: 'POST' });
    }
  }
}, 120_000);
afterAll(async () => roost?.close());

type Page = { status: number; body: { reblog: unknown; mentions: unknown[]; tags: unknown[]; favourited: boolean }[] };

async function fiveAndTwenty(path: string): Promise<{ q5: string[]; q20: string[]; five: Page; twenty: Page }> {
  await reader.api(`${path}${path.includes('?') ? '&' : '?'}limit=1`); // the token is now cached, like any busy client's
  let five: Page | undefined;
  let twenty: Page | undefined;
  const sep = path.includes('?') ? '&' : '?';
  const q5 = await capturedStatements(roost, async () => (five = await reader.api(`${path}${sep}limit=5`)));
  const q20 = await capturedStatements(roost, async () => (twenty = await reader.api(`${path}${sep}limit=20`)));
  expect([five!.status, five!.body.length, twenty!.status, twenty!.body.length]).toEqual([200, 5, 200, 20]);
  return { q5, q20, five: five!, twenty: twenty! };
}

describe('a timeline page costs a fixed number of queries', () => {
  it('home: 5 and 20 alike', async () => {
    const { q5, q20, twenty } = await fiveAndTwenty('/api/v1/timelines/home');
    expect(twenty.body.filter((s) => s.reblog).length).toBe(5);
    expect(twenty.body.filter((s) => s.favourited).length).toBe(15);
    expect(q20).toEqual(q5);
    // The page of ids, the statuses with their mentions, tags, media, polls, the viewer's flags and
    // the viewer's filters, their authors.
    expect(q5.length).toBe(3);
  });

  it('public and hashtag: 5 and 20 alike', async () => {
    for (const path of ['/api/v1/timelines/public', '/api/v1/timelines/tag/topic']) {
      const { q5, q20, twenty } = await fiveAndTwenty(path);
      expect(twenty.body.every((s) => s.tags.length >= 1)).toBe(true);
      expect(q20).toEqual(q5);
      expect(q5.length).toBe(3);
    }
  });
});
