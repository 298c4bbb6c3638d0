/**
 * Filters through the real server (Mastodon's methods/filters.md): v2 filters with their keywords
 * (created, edited and destroyed in one request) and statuses, both keyword path families, the v1
 * legacy API over the same store, Mastodon's errors, one `filters.changed` event per change, and
 * expiry by the instance's (manual) clock.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { createManualClock } from '../../src/lib/clock.ts';

const T0 = new Date('2026-03-01T12:00:00.000Z');
const clock = createManualClock(T0);
let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let readOnly: TestUser;

beforeAll(async () => {
  roost = await startTestRoost({}, { clock });
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
  readOnly = await createTestUser(roost, 'reader', { scopes: ['read:filters'] });
}, 60_000);
afterAll(async () => roost?.close());

const ID = expect.stringMatching(/^\d+$/);

async function changedEvents(accountId: string): Promise<number> {
  const [{ n }] = await roost.services.db.sql.query<{ n: number }>(
    `select count(*)::int as n from outbox_events where type = 'filters.changed' and actor_kind = 'account' and actor_id = $1 and payload->>'accountId' = $1::text`,
    [accountId],
  );
  return n;
}

async function count(table: string): Promise<number> {
  const [{ n }] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from ${table}`);
  return n;
}

describe('v2 filters', () => {
  it('creates a filter with keywords (JSON) in the exact Filter shape', async () => {
    const before = await changedEvents(alice.account.id);
    const res = await alice.api('/api/v2/filters', {
      method: 'POST',
      body: {
        title: 'Spoilers',
        context: ['home', 'public'],
        filter_action: 'warn',
        expires_in: 3600,
        keywords_attributes: [{ keyword: 'spoiler', whole_word: true }, { keyword: 'ending', whole_word: false }, { keyword: '' }],
      },
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['id', 'title', 'context', 'expires_at', 'filter_action', 'keywords', 'statuses']);
    expect(res.body).toEqual({
      id: ID,
      title: 'Spoilers',
      context: ['home', 'public'],
      expires_at: new Date(T0.getTime() + 3600_000).toISOString(),
      filter_action: 'warn',
      keywords: [
        { id: ID, keyword: 'spoiler', whole_word: true },
        { id: ID, keyword: 'ending', whole_word: false },
      ],
      statuses: [],
    });
    expect(Object.keys(res.body.keywords[0])).toEqual(['id', 'keyword', 'whole_word']);
    expect(await changedEvents(alice.account.id)).toBe(before + 1);
    expect((await alice.api(`/api/v2/filters/${res.body.id}`)).body).toEqual(res.body);
    expect((await alice.api('/api/v2/filters')).body).toContainEqual(res.body);
  });

  it('takes Rails-style forms (keywords_attributes[][keyword]); defaults: warn, never expires, whole_word true', async () => {
    const form = new URLSearchParams();
    form.append('title', 'Form');
    form.append('context[]', 'thread');
    form.append('context[]', 'account');
    form.append('keywords_attributes[][keyword]', 'one');
    form.append('keywords_attributes[][keyword]', 'two');
    form.append('keywords_attributes[][whole_word]', 'false');
    const res = await alice.api('/api/v2/filters', { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: ID,
      title: 'Form',
      context: ['thread', 'account'],
      expires_at: null,
      filter_action: 'warn',
      keywords: [
        { id: ID, keyword: 'one', whole_word: true },
        { id: ID, keyword: 'two', whole_word: false },
      ],
      statuses: [],
    });
  });

  it('edits, destroys and adds keywords in ONE request, one transaction, ONE filters.changed', async () => {
    const created = await alice.api('/api/v2/filters', {
      method: 'POST',
      body: { title: 'Five', context: ['home'], keywords_attributes: ['k1', 'k2', 'k3', 'k4', 'k5'].map((keyword) => ({ keyword })) },
    });
    const [k1, k2, k3, k4, k5] = created.body.keywords.map((k: { id: string }) => k.id);
    const before = await changedEvents(alice.account.id);
    const res = await alice.api(`/api/v2/filters/${created.body.id}`, {
      method: 'PUT',
      body: {
        title: 'Five edited',
        filter_action: 'hide',
        keywords_attributes: [
          { id: k1, keyword: 'k1 edited' },
          { id: k2, whole_word: false },
          { id: k3, _destroy: true },
          { id: k4, keyword: 'k4 edited', whole_word: 'false' },
          { id: k5, _destroy: '1' },
          { keyword: 'k6' },
          { keyword: 'never', _destroy: true },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: created.body.id,
      title: 'Five edited',
      context: ['home'],
      expires_at: null,
      filter_action: 'hide',
      keywords: [
        { id: k1, keyword: 'k1 edited', whole_word: true },
        { id: k2, keyword: 'k2', whole_word: false },
        { id: k4, keyword: 'k4 edited', whole_word: false },
        { id: ID, keyword: 'k6', whole_word: true },
      ],
      statuses: [],
    });
    expect(await changedEvents(alice.account.id)).toBe(before + 1);
    // The event as effects/ (and the streaming side's filters_changed) receive it, handled without a failure.
    const [last] = await roost.services.db.sql.query<{ payload: unknown; origin: string }>(
      `select payload, origin from outbox_events where type = 'filters.changed' order by id desc limit 1`,
    );
    expect(last).toEqual({ payload: { type: 'filters.changed', accountId: alice.account.id }, origin: 'client' });
    await settled(roost);
    expect(await roost.services.db.sql.query(`select id from jobs where state = 'dead'`)).toEqual([]);

    // A keyword id not of this filter: 404, and nothing of the request is written.
    const other = await bob.api('/api/v2/filters', { method: 'POST', body: { title: 'Bob', context: ['home'], keywords_attributes: [{ keyword: 'b' }] } });
    const snapshot = (await alice.api(`/api/v2/filters/${created.body.id}`)).body;
    const events = await changedEvents(alice.account.id);
    const bad = await alice.api(`/api/v2/filters/${created.body.id}`, {
      method: 'PUT',
      body: { title: 'Changed?', keywords_attributes: [{ id: k1, keyword: 'nope' }, { id: other.body.keywords[0].id, keyword: 'stolen' }] },
    });
    expect(bad).toMatchObject({ status: 404, body: { error: 'Record not found' } });
    // A blank keyword: 422, nothing written either.
    const blank = await alice.api(`/api/v2/filters/${created.body.id}`, { method: 'PUT', body: { title: 'Changed?', keywords_attributes: [{ keyword: '', whole_word: true }] } });
    expect(blank.status).toBe(422);
    expect(blank.body.error).toBe("Validation failed: Keywords keyword can't be blank");
    expect((await alice.api(`/api/v2/filters/${created.body.id}`)).body).toEqual(snapshot);
    expect(await changedEvents(alice.account.id)).toBe(events);
    expect((await bob.api(`/api/v2/filters/${other.body.id}`)).body.keywords[0].keyword).toBe('b');
  });

  it("Mastodon's errors: validation 422, unknown context, bad action, another's or a missing filter 404, scopes", async () => {
    const rows = await count('filters');
    const empty = await alice.api('/api/v2/filters', { method: 'POST', body: {} });
    expect(empty.status).toBe(422);
    expect(empty.body.error).toBe("Validation failed: Title can't be blank, Context can't be blank, Context None or invalid context supplied");
    expect(empty.body.details).toEqual({
      title: [{ error: 'ERR_BLANK', description: "can't be blank" }],
      context: [
        { error: 'ERR_BLANK', description: "can't be blank" },
        { error: 'ERR_INVALID', description: 'None or invalid context supplied' },
      ],
    });
    const unknown = await alice.api('/api/v2/filters', { method: 'POST', body: { title: 'x', context: ['home', 'timeline'] } });
    expect(unknown).toMatchObject({ status: 422, body: { error: 'Validation failed: Context None or invalid context supplied' } });
    const action = await alice.api('/api/v2/filters', { method: 'POST', body: { title: 'x', context: ['home'], filter_action: 'drop' } });
    expect(action).toMatchObject({ status: 422, body: { error: "'drop' is not a valid action" } });
    const long = await alice.api('/api/v2/filters', { method: 'POST', body: { title: 'x'.repeat(257), context: ['home'] } });
    expect(long).toMatchObject({ status: 422, body: { error: 'Validation failed: Title is too long (maximum is 256 characters)' } });
    const withId = await alice.api('/api/v2/filters', { method: 'POST', body: { title: 'x', context: ['home'], keywords_attributes: [{ id: '1', keyword: 'k' }] } });
    expect(withId).toMatchObject({ status: 404, body: { error: 'Record not found' } });
    expect(await count('filters')).toBe(rows);

    const bobs = await bob.api('/api/v2/filters', { method: 'POST', body: { title: 'Mine', context: ['public'], filter_action: 'blur' } });
    expect(bobs.body.filter_action).toBe('blur');
    for (const [method, path] of [
      ['GET', `/api/v2/filters/${bobs.body.id}`],
      ['PUT', `/api/v2/filters/${bobs.body.id}`],
      ['DELETE', `/api/v2/filters/${bobs.body.id}`],
      ['GET', '/api/v2/filters/123456789'],
      ['GET', '/api/v2/filters/abc'],
      ['GET', `/api/v2/filters/${bobs.body.id}/keywords`],
      ['POST', `/api/v2/filters/${bobs.body.id}/keywords`],
      ['GET', `/api/v2/filters/${bobs.body.id}/statuses`],
    ] as const) {
      const res = await alice.api(path, { method, body: method === 'GET' || method === 'DELETE' ? undefined : { title: 'x', keyword: 'y' } });
      expect([path, res.status, res.body]).toEqual([path, 404, { error: 'Record not found' }]);
    }
    expect((await bob.api(`/api/v2/filters/${bobs.body.id}`)).body.title).toBe('Mine');

    expect((await readOnly.api('/api/v2/filters')).status).toBe(200);
    expect(await readOnly.api('/api/v2/filters', { method: 'POST', body: { title: 'x', context: ['home'] } })).toMatchObject({
      status: 403,
      body: { error: 'This action is outside the authorized scopes' },
    });
    expect((await roostAnonymous('/api/v2/filters')).status).toBe(401);
  });

  it('updates the expiry (blank: never) and deletes', async () => {
    const f = (await alice.api('/api/v2/filters', { method: 'POST', body: { title: 'Temp', context: ['home'], expires_in: 60 } })).body;
    const longer = await alice.api(`/api/v2/filters/${f.id}`, { method: 'PUT', body: { expires_in: 86400, context: ['notifications'] } });
    expect(longer.body).toMatchObject({ title: 'Temp', context: ['notifications'], expires_at: new Date(T0.getTime() + 86_400_000).toISOString() });
    const never = await alice.api(`/api/v2/filters/${f.id}`, { method: 'PATCH', body: { expires_in: '' } });
    expect(never.body.expires_at).toBeNull();
    const before = await changedEvents(alice.account.id);
    expect(await alice.api(`/api/v2/filters/${f.id}`, { method: 'DELETE' })).toMatchObject({ status: 200, body: {} });
    expect(await changedEvents(alice.account.id)).toBe(before + 1);
    expect((await alice.api(`/api/v2/filters/${f.id}`)).status).toBe(404);
    expect((await alice.api(`/api/v2/filters/${f.id}`, { method: 'DELETE' })).status).toBe(404);
  });
});

async function roostAnonymous(path: string) {
  const res = await fetch(roost.at(path));
  return { status: res.status, body: await res.json() };
}

describe('keywords, at both path families', () => {
  it("shipped Mastodon's: /api/v2/filters/:filter_id/keywords and /api/v2/filters/keywords/:id", async () => {
    const f = (await alice.api('/api/v2/filters', { method: 'POST', body: { title: 'Kw', context: ['home'] } })).body;
    const before = await changedEvents(alice.account.id);
    const added = await alice.api(`/api/v2/filters/${f.id}/keywords`, { method: 'POST', body: { keyword: 'first', whole_word: false } });
    expect(added).toMatchObject({ status: 200 });
    expect(added.body).toEqual({ id: ID, keyword: 'first', whole_word: false });
    expect((await alice.api(`/api/v2/filters/${f.id}/keywords`)).body).toEqual([added.body]);
    expect((await alice.api(`/api/v2/filters/keywords/${added.body.id}`)).body).toEqual(added.body);
    const edited = await alice.api(`/api/v2/filters/keywords/${added.body.id}`, { method: 'PUT', body: { keyword: 'second', whole_word: true } });
    expect(edited.body).toEqual({ id: added.body.id, keyword: 'second', whole_word: true });
    const blank = await alice.api(`/api/v2/filters/keywords/${added.body.id}`, { method: 'PUT', body: { keyword: ' ' } });
    expect(blank).toMatchObject({ status: 422, body: { error: "Validation failed: Keyword can't be blank" } });
    expect(await alice.api(`/api/v2/filters/${f.id}/keywords`, { method: 'POST', body: {} })).toMatchObject({ status: 422, body: { error: "Validation failed: Keyword can't be blank" } });
    expect((await bob.api(`/api/v2/filters/keywords/${added.body.id}`)).status).toBe(404);
    expect((await bob.api(`/api/v2/filters/keywords/${added.body.id}`, { method: 'DELETE' })).status).toBe(404);
    expect(await alice.api(`/api/v2/filters/keywords/${added.body.id}`, { method: 'DELETE' })).toMatchObject({ status: 200, body: {} });
    expect((await alice.api(`/api/v2/filters/keywords/${added.body.id}`)).status).toBe(404);
    // add, edit, delete: three changes, three events (the refused ones none).
    expect(await changedEvents(alice.account.id)).toBe(before + 3);
  });

  it("the mission spec's: POST /api/v2/filters/:filter_id/keywords/:id and /api/v1/filters/keywords/:id", async () => {
    const f = (await alice.api('/api/v2/filters', { method: 'POST', body: { title: 'Spec', context: ['home'] } })).body;
    const added = await alice.api(`/api/v2/filters/${f.id}/keywords/0`, { method: 'POST', body: { keyword: 'spec word' } });
    expect(added.body).toEqual({ id: ID, keyword: 'spec word', whole_word: true });
    expect((await alice.api(`/api/v2/filters/${f.id}/keywords/x`, { method: 'POST', body: { keyword: 'y' } })).status).toBe(404);
    expect((await alice.api(`/api/v1/filters/keywords/${added.body.id}`)).body).toEqual(added.body);
    const edited = await alice.api(`/api/v1/filters/keywords/${added.body.id}`, { method: 'PUT', body: { whole_word: false } });
    expect(edited.body).toEqual({ id: added.body.id, keyword: 'spec word', whole_word: false });
    expect((await alice.api(`/api/v2/filters/${f.id}`)).body.keywords).toEqual([edited.body]);
    expect((await bob.api(`/api/v1/filters/keywords/${added.body.id}`)).status).toBe(404);
    expect(await alice.api(`/api/v1/filters/keywords/${added.body.id}`, { method: 'DELETE' })).toMatchObject({ status: 200, body: {} });
    expect((await alice.api(`/api/v2/filters/${f.id}`)).body.keywords).toEqual([]);
  });
});

describe('status filters', () => {
  it('adds, lists, shows and removes a status of a filter', async () => {
    const f = (await alice.api('/api/v2/filters', { method: 'POST', body: { title: 'Posts', context: ['home'] } })).body;
    const post = (await bob.api('/api/v1/statuses', { method: 'POST', body: { status: 'a post to filter' } })).body;
    const added = await alice.api(`/api/v2/filters/${f.id}/statuses`, { method: 'POST', body: { status_id: post.id } });
    expect(added.body).toEqual({ id: ID, status_id: post.id });
    expect(Object.keys(added.body)).toEqual(['id', 'status_id']);
    expect((await alice.api(`/api/v2/filters/${f.id}/statuses`)).body).toEqual([added.body]);
    expect((await alice.api(`/api/v2/filters/statuses/${added.body.id}`)).body).toEqual(added.body);
    expect((await alice.api(`/api/v2/filters/${f.id}`)).body.statuses).toEqual([added.body]);
    expect(await alice.api(`/api/v2/filters/${f.id}/statuses`, { method: 'POST', body: { status_id: post.id } })).toMatchObject({
      status: 422,
      body: { error: 'Validation failed: Status has already been taken' },
    });
    expect(await alice.api(`/api/v2/filters/${f.id}/statuses`, { method: 'POST', body: { status_id: '42' } })).toMatchObject({
      status: 422,
      body: { error: 'Validation failed: Status must exist' },
    });
    const secret = (await bob.api('/api/v1/statuses', { method: 'POST', body: { status: 'followers only', visibility: 'private' } })).body;
    expect(await alice.api(`/api/v2/filters/${f.id}/statuses`, { method: 'POST', body: { status_id: secret.id } })).toMatchObject({
      status: 422,
      body: { error: 'Validation failed: Status is invalid' },
    });
    expect((await bob.api(`/api/v2/filters/statuses/${added.body.id}`)).status).toBe(404);
    expect((await bob.api(`/api/v2/filters/statuses/${added.body.id}`, { method: 'DELETE' })).status).toBe(404);
    expect(await alice.api(`/api/v2/filters/statuses/${added.body.id}`, { method: 'DELETE' })).toMatchObject({ status: 200, body: {} });
    expect((await alice.api(`/api/v2/filters/${f.id}/statuses`)).body).toEqual([]);
  });
});

describe('v1 legacy filters over the same store', () => {
  it('create, list, show, update, delete in the V1::Filter shape', async () => {
    const v1user = await createTestUser(roost, 'legacy');
    const created = await v1user.api('/api/v1/filters', {
      method: 'POST',
      body: { phrase: 'test', context: ['home', 'notifications', 'public', 'thread'], irreversible: true, whole_word: false, expires_in: 600 },
    });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body)).toEqual(['id', 'phrase', 'context', 'whole_word', 'expires_at', 'irreversible']);
    expect(created.body).toEqual({
      id: ID,
      phrase: 'test',
      context: ['home', 'notifications', 'public', 'thread'],
      whole_word: false,
      expires_at: new Date(T0.getTime() + 600_000).toISOString(),
      irreversible: true,
    });
    // The same store: a v2 filter titled after the phrase, hiding, with the phrase as its keyword (same id).
    const [v2] = (await v1user.api('/api/v2/filters')).body;
    expect(v2).toMatchObject({ title: 'test', filter_action: 'hide', keywords: [{ id: created.body.id, keyword: 'test', whole_word: false }] });
    expect((await v1user.api('/api/v1/filters')).body).toEqual([created.body]);
    expect((await v1user.api(`/api/v1/filters/${created.body.id}`)).body).toEqual(created.body);

    const updated = await v1user.api(`/api/v1/filters/${created.body.id}`, { method: 'PUT', body: { phrase: 'tested', context: ['home'], irreversible: false, expires_in: '' } });
    expect(updated.body).toEqual({ id: created.body.id, phrase: 'tested', context: ['home'], whole_word: false, expires_at: null, irreversible: false });

    // With a second keyword, context / action / expiry may no longer change through v1 (phrase may).
    await v1user.api(`/api/v2/filters/${v2.id}/keywords`, { method: 'POST', body: { keyword: 'other' } });
    const refused = await v1user.api(`/api/v1/filters/${created.body.id}`, { method: 'PUT', body: { phrase: 'x', context: ['public'] } });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatch(/^These parameters cannot be changed from this application because they apply to more than one filter keyword/);
    expect((await v1user.api(`/api/v1/filters/${created.body.id}`)).body.phrase).toBe('tested');
    expect((await v1user.api(`/api/v1/filters/${created.body.id}`, { method: 'PUT', body: { phrase: 'renamed', context: ['home'] } })).body.phrase).toBe('renamed');
    expect((await v1user.api('/api/v1/filters')).body.map((f: { phrase: string }) => f.phrase)).toEqual(['renamed', 'other']);

    // DELETE removes the keyword only: the v2 filter stays, with the other keyword.
    expect(await v1user.api(`/api/v1/filters/${created.body.id}`, { method: 'DELETE' })).toMatchObject({ status: 200, body: {} });
    expect((await v1user.api(`/api/v2/filters/${v2.id}`)).body.keywords.map((k: { keyword: string }) => k.keyword)).toEqual(['other']);
    expect((await v1user.api(`/api/v1/filters/${created.body.id}`)).status).toBe(404);
  });

  it("errors: blank phrase, bad context, another's filter", async () => {
    const rows = await count('filter_keywords');
    const bad = await alice.api('/api/v1/filters', { method: 'POST', body: { context: ['nowhere'] } });
    expect(bad).toMatchObject({ status: 422, body: { error: "Validation failed: Phrase can't be blank, Context None or invalid context supplied" } });
    const noContext = await alice.api('/api/v1/filters', { method: 'POST', body: { phrase: 'p' } });
    expect(noContext.body.error).toBe("Validation failed: Context can't be blank, Context None or invalid context supplied");
    expect(await count('filter_keywords')).toBe(rows);
    const bobs = (await bob.api('/api/v1/filters', { method: 'POST', body: { phrase: 'mine', context: ['home'] } })).body;
    for (const method of ['GET', 'PUT', 'DELETE']) {
      expect(await alice.api(`/api/v1/filters/${bobs.id}`, { method, body: method === 'PUT' ? { phrase: 'x' } : undefined })).toMatchObject({ status: 404, body: { error: 'Record not found' } });
    }
  });
});

describe('expiry by the clock', () => {
  it('an expired filter is still listed, and stops applying', async () => {
    const viewer = await createTestUser(roost, 'expiring');
    const f = (await viewer.api('/api/v2/filters', { method: 'POST', body: { title: 'Soon', context: ['public'], expires_in: 60, keywords_attributes: [{ keyword: 'ephemeral' }] } })).body;
    const post = (await bob.api('/api/v1/statuses', { method: 'POST', body: { status: 'An ephemeral thought' } })).body;
    const find = async () => ((await viewer.api('/api/v1/timelines/public?limit=40')).body as { id: string; filtered: unknown[] }[]).find((s) => s.id === post.id);
    expect((await find())!.filtered).toEqual([
      { filter: { id: f.id, title: 'Soon', context: ['public'], expires_at: f.expires_at, filter_action: 'warn' }, keyword_matches: ['ephemeral'], status_matches: null },
    ]);
    clock.advance(60_000);
    try {
      expect((await find())!.filtered).toEqual([]);
      expect((await viewer.api(`/api/v2/filters/${f.id}`)).body.expires_at).toBe(f.expires_at);
      // Extended again: applies again.
      await viewer.api(`/api/v2/filters/${f.id}`, { method: 'PUT', body: { expires_in: 60 } });
      expect((await find())!.filtered).toHaveLength(1);
    } finally {
      clock.set(T0);
    }
  });
});
