/**
 * GET /api/v1/bookmarks and GET /api/v1/favourites through the real server: in the order they were
 * made (not by status id), Link headers carrying bookmark / favourite ids, statuses the viewer may
 * no longer see left out, and a fixed number of statements per page.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let reader: TestUser;
let poster: TestUser;
/** The poster's statuses, oldest first. */
const posted: string[] = [];

beforeAll(async () => {
  roost = await startTestRoost();
  reader = await createTestUser(roost, 'reader');
  poster = await createTestUser(roost, 'poster');
  for (let i = 0; i < 6; i++) {
    const r = await poster.api('/api/v1/statuses', { method: 'POST', body: { status: `post ${i} #tag${i} @reader` } });
    expect(r.status).toBe(200);
    posted.push(r.body.id);
  }
}, 60_000);
afterAll(async () => roost?.close());

/**
 * The statements of a page request, leaving out the viewer lookup: it is cached for a few seconds
 * (reads/viewer.ts), which a loaded machine may outlast between two captures.
 */
async function pageStatements(fn: () => Promise<unknown>): Promise<string[]> {
  const all = await capturedStatements(roost, fn, 100_000);
  return all.filter((s) => !/ from oauth_access_tokens /.test(s)).map((s) => s.slice(0, 60));
}

const ids = (body: { id: string }[]) => body.map((s) => s.id);

/** The row ids of the reader's bookmarks or favourites, newest made first. */
async function rowIds(table: 'bookmarks' | 'favourites', statusIds: string[]): Promise<string[]> {
  const rows = await roost.services.db.sql.query<{ id: string; status_id: string }>(
    `select id::text, status_id::text from ${table} where account_id = $1`,
    [reader.account.id],
  );
  const byStatus = new Map(rows.map((r) => [r.status_id, r.id]));
  return statusIds.map((s) => byStatus.get(s)!);
}

for (const [which, action] of [['bookmarks', 'bookmark'], ['favourites', 'favourite']] as const) {
  describe(`GET /api/v1/${which}`, () => {
    // Made out of status order: the newest status first, then the oldest, then two in the middle.
    const order = () => [posted[5]!, posted[0]!, posted[2]!, posted[3]!];

    it('lists them newest made first, with the viewer flag set', async () => {
      for (const id of order()) expect((await reader.api(`/api/v1/statuses/${id}/${action}`, { method: 'POST' })).status).toBe(200);
      const r = await reader.api(`/api/v1/${which}`);
      expect(r.status).toBe(200);
      expect(ids(r.body)).toEqual([...order()].reverse());
      const flag = which === 'bookmarks' ? 'bookmarked' : 'favourited';
      expect(r.body.map((s: Record<string, unknown>) => s[flag])).toEqual([true, true, true, true]);
      // Only the viewer's own: the poster has none.
      expect((await poster.api(`/api/v1/${which}`)).body).toEqual([]);
    });

    it('pages by the row ids, with Link headers, as Mastodon', async () => {
      const statusOrder = [...order()].reverse();
      const rows = await rowIds(which, statusOrder);
      const first = await reader.api(`/api/v1/${which}?limit=2`);
      expect(ids(first.body)).toEqual(statusOrder.slice(0, 2));
      expect(first.headers.get('link')).toBe(
        `<${roost.at(`/api/v1/${which}?limit=2&max_id=${rows[1]}`)}>; rel="next", <${roost.at(`/api/v1/${which}?limit=2&min_id=${rows[0]}`)}>; rel="prev"`,
      );
      const second = await reader.api(`/api/v1/${which}?limit=2&max_id=${rows[1]}`);
      expect(ids(second.body)).toEqual(statusOrder.slice(2, 4));
      // min_id: the ones made after, still newest first.
      const newer = await reader.api(`/api/v1/${which}?limit=2&min_id=${rows[3]}`);
      expect(ids(newer.body)).toEqual(statusOrder.slice(1, 3));
      const since = await reader.api(`/api/v1/${which}?since_id=${rows[2]}`);
      expect(ids(since.body)).toEqual(statusOrder.slice(0, 2));
      // The last page has no next link.
      const last = await reader.api(`/api/v1/${which}?limit=2&max_id=${rows[3]}`);
      expect([last.body, last.headers.get('link')]).toEqual([[], null]);
      // 40 at most.
      expect((await reader.api(`/api/v1/${which}?limit=1000`)).status).toBe(200);
    });

    it('leaves out what the viewer may no longer see, and what was taken back', async () => {
      const undo = which === 'bookmarks' ? 'unbookmark' : 'unfavourite';
      expect((await reader.api(`/api/v1/statuses/${posted[2]}/${undo}`, { method: 'POST' })).status).toBe(200);
      expect(ids((await reader.api(`/api/v1/${which}`)).body)).toEqual([posted[3], posted[0], posted[5]]);
    });
  });
}

describe('deleted and hidden statuses', () => {
  it('a deleted status and one whose author now blocks the viewer are dropped', async () => {
    const other = await createTestUser(roost, 'other');
    const a = (await other.api('/api/v1/statuses', { method: 'POST', body: { status: 'soon blocking' } })).body.id;
    const b = (await poster.api('/api/v1/statuses', { method: 'POST', body: { status: 'soon gone' } })).body.id;
    for (const id of [a, b]) expect((await reader.api(`/api/v1/statuses/${id}/bookmark`, { method: 'POST' })).status).toBe(200);
    expect(ids((await reader.api('/api/v1/bookmarks?limit=2')).body)).toEqual([b, a]);
    expect((await poster.api(`/api/v1/statuses/${b}`, { method: 'DELETE' })).status).toBe(200);
    expect((await other.api(`/api/v1/accounts/${reader.account.id}/block`, { method: 'POST' })).status).toBe(200);
    // The page is still full: the next ones fill it.
    expect(ids((await reader.api('/api/v1/bookmarks?limit=2')).body)).toEqual([posted[3], posted[0]]);
  });
});

describe('a page costs a fixed number of statements', () => {
  it('2 and 12 alike, for both lists', async () => {
    const heavy = await createTestUser(roost, 'heavy');
    for (let i = 0; i < 12; i++) {
      const poll = i % 3 === 0 ? { options: ['a', 'b'], expires_in: 3600 } : undefined;
      const s = (await poster.api('/api/v1/statuses', { method: 'POST', body: { status: `more ${i} #x${i} @heavy`, poll } })).body;
      if (i % 4 === 0) expect((await heavy.api(`/api/v1/statuses/${s.id}/reblog`, { method: 'POST' })).status).toBe(200);
      expect((await heavy.api(`/api/v1/statuses/${s.id}/bookmark`, { method: 'POST' })).status).toBe(200);
      expect((await heavy.api(`/api/v1/statuses/${s.id}/favourite`, { method: 'POST' })).status).toBe(200);
    }
    for (const which of ['bookmarks', 'favourites']) {
      await heavy.api(`/api/v1/${which}?limit=1`);
      let small: { id: string }[] = [];
      let big: { id: string; reblogged: boolean; poll: unknown }[] = [];
      const q2 = await pageStatements(async () => (small = (await heavy.api(`/api/v1/${which}?limit=2`)).body));
      const q12 = await pageStatements(async () => (big = (await heavy.api(`/api/v1/${which}?limit=12`)).body));
      expect([small.length, big.length]).toEqual([2, 12]);
      expect(big.filter((s) => s.reblogged).length).toBe(3);
      expect(big.filter((s) => s.poll).length).toBe(4);
      expect(q12).toEqual(q2);
      // The page of ids, then the status view (statuses with their mentions, tags, media, flags and polls; authors).
      expect(q2.length).toBe(3);
    }
  });
});
