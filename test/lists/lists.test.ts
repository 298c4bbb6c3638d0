/**
 * /api/v1/lists through the real server: CRUD with Mastodon's validation errors, members (only
 * followed accounts, nothing written on a refusal), GET /api/v1/accounts/:id/lists, an unfollow
 * taking the account out of the follower's lists, another user's list as a 404, scopes, and the
 * members page: Link headers, limit=0, a fixed number of statements.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let me: TestUser;
let other: TestUser;
let followed: TestUser[] = [];
let stranger: TestUser;
let locked: TestUser;

const rows = async (text: string, params: unknown[] = []) => roost.services.db.sql.query<Record<string, any>>(text, params);
const memberIds = async (listId: string) =>
  (await rows(`select account_id::text as id from list_accounts where list_id = $1 order by account_id`, [listId])).map((r) => r.id);

beforeAll(async () => {
  roost = await startTestRoost();
  me = await createTestUser(roost, 'me');
  other = await createTestUser(roost, 'other');
  stranger = await createTestUser(roost, 'stranger');
  locked = await createTestUser(roost, 'locked');
  expect((await locked.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } })).status).toBe(200);
  for (let i = 0; i < 5; i++) {
    const u = await createTestUser(roost, `f${i}`);
    expect((await me.api(`/api/v1/accounts/${u.account.id}/follow`, { method: 'POST' })).body.following).toBe(true);
    followed.push(u);
  }
  // A pending request to a locked account counts as following for a list (Mastodon 4.3).
  expect((await me.api(`/api/v1/accounts/${locked.account.id}/follow`, { method: 'POST' })).body.requested).toBe(true);
}, 60_000);
afterAll(async () => roost?.close());

describe('list CRUD', () => {
  it('creates with the defaults, shows, updates, lists and deletes', async () => {
    const created = await me.api('/api/v1/lists', { method: 'POST', body: { title: 'Friends' } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^\d+$/), title: 'Friends', replies_policy: 'list', exclusive: false });
    const id = created.body.id;
    const second = await me.api('/api/v1/lists', {
      method: 'POST',
      body: new URLSearchParams({ title: 'News', replies_policy: 'none', exclusive: 'true' }),
    });
    expect(second.body).toEqual({ id: expect.any(String), title: 'News', replies_policy: 'none', exclusive: true });

    expect((await me.api(`/api/v1/lists/${id}`)).body).toEqual(created.body);
    const updated = await me.api(`/api/v1/lists/${id}`, { method: 'PUT', body: { title: 'Close friends', replies_policy: 'followed' } });
    expect(updated.body).toEqual({ id, title: 'Close friends', replies_policy: 'followed', exclusive: false });
    // Only what is given changes.
    expect((await me.api(`/api/v1/lists/${id}`, { method: 'PUT', body: { exclusive: true } })).body).toEqual({
      id, title: 'Close friends', replies_policy: 'followed', exclusive: true,
    });
    // A hash or an array where a scalar belongs is as if not sent (Rails' permit).
    expect((await me.api(`/api/v1/lists/${id}`, { method: 'PATCH', body: { exclusive: { a: 1 }, title: ['x'] } })).body).toEqual({
      id, title: 'Close friends', replies_policy: 'followed', exclusive: true,
    });
    expect((await me.api('/api/v1/lists')).body).toEqual([
      { id, title: 'Close friends', replies_policy: 'followed', exclusive: true },
      second.body,
    ]);
    // Nobody else sees them.
    expect((await other.api('/api/v1/lists')).body).toEqual([]);

    const del = await me.api(`/api/v1/lists/${second.body.id}`, { method: 'DELETE' });
    expect([del.status, del.body]).toEqual([200, {}]);
    expect((await me.api(`/api/v1/lists/${second.body.id}`)).status).toBe(404);
    expect((await me.api('/api/v1/lists')).body.map((l: { id: string }) => l.id)).toEqual([id]);
  });

  it("answers Mastodon's errors for a blank title and an unknown replies_policy, writing nothing", async () => {
    const before = await rows(`select count(*)::int as n from lists`);
    for (const body of [{}, { title: '' }, { title: '   ' }]) {
      const r = await me.api('/api/v1/lists', { method: 'POST', body });
      expect([r.status, r.body]).toEqual([422, { error: "Validation failed: Title can't be blank" }]);
    }
    const bad = await me.api('/api/v1/lists', { method: 'POST', body: { title: 'x', replies_policy: 'some' } });
    expect([bad.status, bad.body]).toEqual([422, { error: "'some' is not a valid replies_policy" }]);
    const list = (await me.api('/api/v1/lists', { method: 'POST', body: { title: 'kept' } })).body;
    const blank = await me.api(`/api/v1/lists/${list.id}`, { method: 'PUT', body: { title: '' } });
    expect([blank.status, blank.body]).toEqual([422, { error: "Validation failed: Title can't be blank" }]);
    expect((await me.api(`/api/v1/lists/${list.id}`, { method: 'PUT', body: { replies_policy: 'all' } })).status).toBe(422);
    expect((await me.api(`/api/v1/lists/${list.id}`)).body).toEqual({ id: list.id, title: 'kept', replies_policy: 'list', exclusive: false });
    expect((await rows(`select count(*)::int as n from lists`))[0].n).toBe(before[0].n + 1);
  });

  it('allows 50 lists per account, as Mastodon', async () => {
    const many = await createTestUser(roost, 'many');
    for (let i = 0; i < 50; i++) expect((await many.api('/api/v1/lists', { method: 'POST', body: { title: `l${i}` } })).status).toBe(200);
    const r = await many.api('/api/v1/lists', { method: 'POST', body: { title: 'one too many' } });
    expect([r.status, r.body]).toEqual([422, { error: 'Validation failed: You have reached the maximum number of lists' }]);
    expect((await many.api('/api/v1/lists')).body.length).toBe(50);
  });

  it("treats another user's list as missing", async () => {
    const mine = (await me.api('/api/v1/lists', { method: 'POST', body: { title: 'private' } })).body;
    const notFound = { error: 'Record not found' };
    for (const [method, path] of [
      ['GET', `/api/v1/lists/${mine.id}`],
      ['PUT', `/api/v1/lists/${mine.id}`],
      ['DELETE', `/api/v1/lists/${mine.id}`],
      ['GET', `/api/v1/lists/${mine.id}/accounts`],
      ['POST', `/api/v1/lists/${mine.id}/accounts`],
      ['DELETE', `/api/v1/lists/${mine.id}/accounts`],
      ['GET', `/api/v1/timelines/list/${mine.id}`],
    ] as const) {
      const r = await other.api(path, { method, body: method === 'GET' ? undefined : { title: 'taken', account_ids: [me.account.id] } });
      expect([method, path, r.status, r.body]).toEqual([method, path, 404, notFound]);
    }
    expect((await me.api(`/api/v1/lists/${mine.id}`)).body.title).toBe('private');
  });

  it('needs read:lists to read and write:lists to write', async () => {
    const reader = await createTestUser(roost, 'scoped', { scopes: ['read:lists'] });
    expect((await reader.api('/api/v1/lists')).status).toBe(200);
    const r = await reader.api('/api/v1/lists', { method: 'POST', body: { title: 'x' } });
    expect([r.status, r.body]).toEqual([403, { error: 'This action is outside the authorized scopes' }]);
    const statusesOnly = await createTestUser(roost, 'scoped2', { scopes: ['read:statuses'] });
    expect((await statusesOnly.api('/api/v1/lists')).status).toBe(403);
    expect((await apiRequest(roost, '/api/v1/lists')).status).toBe(401);
  });
});

describe('list members', () => {
  let listId: string;
  beforeAll(async () => {
    listId = (await me.api('/api/v1/lists', { method: 'POST', body: { title: 'members' } })).body.id;
  });

  it('adds followed accounts (a pending request and oneself too) and removes them', async () => {
    const add = await me.api(`/api/v1/lists/${listId}/accounts`, { method: 'POST', body: { account_ids: [followed[0]!.account.id, followed[1]!.account.id] } });
    expect([add.status, add.body]).toEqual([200, {}]);
    const form = new URLSearchParams();
    form.append('account_ids[]', locked.account.id);
    form.append('account_ids[]', me.account.id);
    expect((await me.api(`/api/v1/lists/${listId}/accounts`, { method: 'POST', body: form })).status).toBe(200);
    expect(await memberIds(listId)).toEqual([followed[0]!.account.id, followed[1]!.account.id, locked.account.id, me.account.id].sort());
    const shown = (await me.api(`/api/v1/lists/${listId}/accounts`)).body.map((a: { username: string }) => a.username);
    expect(shown.sort()).toEqual(['f0', 'f1', 'locked', 'me']);

    const removed = await me.api(`/api/v1/lists/${listId}/accounts?account_ids[]=${locked.account.id}&account_ids[]=${me.account.id}&account_ids[]=${stranger.account.id}`, { method: 'DELETE' });
    expect([removed.status, removed.body]).toEqual([200, {}]);
    expect(await memberIds(listId)).toEqual([followed[0]!.account.id, followed[1]!.account.id].sort());
  });

  it('refuses an account not followed (422) or unknown (404) and writes nothing, not even the followed ones', async () => {
    const before = await memberIds(listId);
    const notFollowed = await me.api(`/api/v1/lists/${listId}/accounts`, {
      method: 'POST',
      body: { account_ids: [followed[2]!.account.id, stranger.account.id] },
    });
    expect([notFollowed.status, notFollowed.body]).toEqual([422, { error: 'Validation failed: Account must be a followed account' }]);
    const unknown = await me.api(`/api/v1/lists/${listId}/accounts`, { method: 'POST', body: { account_ids: [followed[2]!.account.id, '12345'] } });
    expect([unknown.status, unknown.body]).toEqual([404, { error: 'Record not found' }]);
    const taken = await me.api(`/api/v1/lists/${listId}/accounts`, { method: 'POST', body: { account_ids: [followed[2]!.account.id, followed[0]!.account.id] } });
    expect([taken.status, taken.body]).toEqual([422, { error: 'Validation failed: Account has already been taken' }]);
    expect(await memberIds(listId)).toEqual(before);
  });

  it("shows the viewer's lists holding an account", async () => {
    const other2 = (await me.api('/api/v1/lists', { method: 'POST', body: { title: 'second' } })).body;
    await me.api(`/api/v1/lists/${other2.id}/accounts`, { method: 'POST', body: { account_ids: [followed[0]!.account.id] } });
    const r = await me.api(`/api/v1/accounts/${followed[0]!.account.id}/lists`);
    expect(r.body).toEqual([
      { id: listId, title: 'members', replies_policy: 'list', exclusive: false },
      { id: other2.id, title: 'second', replies_policy: 'list', exclusive: false },
    ]);
    expect((await me.api(`/api/v1/accounts/${stranger.account.id}/lists`)).body).toEqual([]);
    // Someone else's lists holding the same account are not shown.
    expect((await other.api(`/api/v1/accounts/${followed[0]!.account.id}/lists`)).body).toEqual([]);
    expect((await me.api('/api/v1/accounts/99999/lists')).status).toBe(404);
  });

  it("an unfollow takes the account out of the follower's lists (and only those)", async () => {
    const otherList = (await other.api('/api/v1/lists', { method: 'POST', body: { title: 'theirs' } })).body;
    expect((await other.api(`/api/v1/accounts/${followed[1]!.account.id}/follow`, { method: 'POST' })).status).toBe(200);
    expect((await other.api(`/api/v1/lists/${otherList.id}/accounts`, { method: 'POST', body: { account_ids: [followed[1]!.account.id] } })).status).toBe(200);
    expect(await memberIds(listId)).toContain(followed[1]!.account.id);
    expect((await me.api(`/api/v1/accounts/${followed[1]!.account.id}/unfollow`, { method: 'POST' })).status).toBe(200);
    expect(await memberIds(listId)).not.toContain(followed[1]!.account.id);
    expect(await memberIds(otherList.id)).toEqual([followed[1]!.account.id]);
    // Follow again: not a member until added again.
    expect((await me.api(`/api/v1/accounts/${followed[1]!.account.id}/follow`, { method: 'POST' })).status).toBe(200);
    expect(await memberIds(listId)).not.toContain(followed[1]!.account.id);
    // A block ends the follow, so the membership too (either side blocking).
    expect((await me.api(`/api/v1/lists/${listId}/accounts`, { method: 'POST', body: { account_ids: [followed[1]!.account.id, followed[2]!.account.id] } })).status).toBe(200);
    expect((await me.api(`/api/v1/accounts/${followed[1]!.account.id}/block`, { method: 'POST' })).status).toBe(200);
    expect((await followed[2]!.api(`/api/v1/accounts/${me.account.id}/block`, { method: 'POST' })).status).toBe(200);
    expect(await memberIds(listId)).toEqual([followed[0]!.account.id]);
    expect((await me.api(`/api/v1/accounts/${followed[1]!.account.id}/unblock`, { method: 'POST' })).status).toBe(200);
    expect((await followed[2]!.api(`/api/v1/accounts/${me.account.id}/unblock`, { method: 'POST' })).status).toBe(200);
    for (const u of [followed[1]!, followed[2]!]) expect((await me.api(`/api/v1/accounts/${u.account.id}/follow`, { method: 'POST' })).status).toBe(200);
  });

  it('pages members by account id with Link headers; limit=0 gives all; a fixed number of statements', async () => {
    const list = (await me.api('/api/v1/lists', { method: 'POST', body: { title: 'paged' } })).body;
    const ids = followed.map((u) => u.account.id);
    expect((await me.api(`/api/v1/lists/${list.id}/accounts`, { method: 'POST', body: { account_ids: ids } })).status).toBe(200);
    const desc = [...ids].sort((a, b) => (BigInt(b) > BigInt(a) ? 1 : -1));
    const base = `${roost.url}/api/v1/lists/${list.id}/accounts`;
    const first = await me.api(`/api/v1/lists/${list.id}/accounts?limit=2`);
    expect(first.body.map((a: { id: string }) => a.id)).toEqual(desc.slice(0, 2));
    expect(first.headers.get('link')).toBe(`<${base}?limit=2&max_id=${desc[1]}>; rel="next", <${base}?limit=2&since_id=${desc[0]}>; rel="prev"`);
    const second = await me.api(`/api/v1/lists/${list.id}/accounts?limit=2&max_id=${desc[1]}`);
    expect(second.body.map((a: { id: string }) => a.id)).toEqual(desc.slice(2, 4));
    const last = await me.api(`/api/v1/lists/${list.id}/accounts?limit=2&max_id=${desc[3]}`);
    expect(last.body.map((a: { id: string }) => a.id)).toEqual(desc.slice(4));
    expect(last.headers.get('link')).toBe(`<${base}?limit=2&since_id=${desc[4]}>; rel="prev"`);
    const all = await me.api(`/api/v1/lists/${list.id}/accounts?limit=0`);
    expect(all.body.map((a: { id: string }) => a.id)).toEqual(desc);
    expect(all.headers.get('link')).toBeNull();

    const q1 = await capturedStatements(roost, () => me.api(`/api/v1/lists/${list.id}/accounts?limit=1`));
    const q5 = await capturedStatements(roost, () => me.api(`/api/v1/lists/${list.id}/accounts?limit=5`));
    expect(q5).toEqual(q1);
    // The list, the page of member ids, the accounts' batched view.
    expect(q1.length).toBe(3);
  });
});
