/**
 * Hashtags through the real server: GET /api/v1/tags/:name (the name as first written, a week of
 * history), follow / unfollow and GET /api/v1/followed_tags (Link headers, a fixed number of
 * statements per page), feature / unfeature and /api/v1/featured_tags up to the instance maximum
 * (one over it refused, nothing written), suggestions, an account's featured tags, the actor's
 * `featuredTags` collection, and a followed tag's public posts arriving in home.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedStatements, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { createManualClock } from '../../src/lib/clock.ts';

const clock = createManualClock(new Date('2026-05-01T12:00:00.000Z'));
const DAY = 86_400;
const today = Date.UTC(2026, 4, 1) / 1000;
let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

async function post(u: TestUser, body: Record<string, unknown>): Promise<{ id: string }> {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body });
  expect(r.status).toBe(200);
  return r.body;
}

beforeAll(async () => {
  roost = await startTestRoost({}, { clock });
  [alice, bob, carol] = [await createTestUser(roost, 'alice'), await createTestUser(roost, 'bob'), await createTestUser(roost, 'carol')];
}, 60_000);
afterAll(async () => roost?.close());

describe('tags', () => {
  it('shows a tag as first written, with its week of use; an unknown one with no id; an invalid name is a 404', async () => {
    await post(alice, { status: 'first #CatURDay' });
    clock.advance(60_000);
    await post(bob, { status: 'again #caturday #caturday' });
    await post(bob, { status: 'quietly #caturday', visibility: 'private' });
    clock.set(new Date('2026-04-29T08:00:00.000Z'));
    await post(alice, { status: 'earlier #caturday' });
    clock.set(new Date('2026-05-01T12:10:00.000Z'));
    const r = await apiRequest(roost, '/api/v1/tags/CATURDAY');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      name: 'CatURDay',
      url: roost.at('/tags/caturday'),
      history: [0, 1, 2, 3, 4, 5, 6].map((i) => ({
        day: String(today - i * DAY),
        uses: i === 0 ? '2' : i === 2 ? '1' : '0',
        accounts: i === 0 ? '2' : i === 2 ? '1' : '0',
      })),
    });
    const signedIn = await carol.api('/api/v1/tags/caturday');
    expect([signedIn.body.following, signedIn.body.featuring]).toEqual([false, false]);
    const unknown = await carol.api('/api/v1/tags/Nowhere');
    expect(unknown.body).toMatchObject({ id: '', name: 'Nowhere', url: roost.at('/tags/nowhere'), following: false, featuring: false });
    expect(unknown.body.history).toHaveLength(7);
    expect((await roost.services.db.sql.query(`select 1 from tags where lower(name) = 'nowhere'`)).length).toBe(0);
    for (const bad of ['123', 'a-b', '%20']) expect((await carol.api(`/api/v1/tags/${bad}`)).status).toBe(404);
    // These posts' event jobs finish here: run after carol follows #caturday below, they would
    // push them into her home feed (CI on PostgreSQL saw one arrive in the last test's rows).
    await settled(roost);
  });

  it('follows and unfollows (idempotent); followed_tags pages with Link headers in a fixed number of statements', async () => {
    const f = await carol.api('/api/v1/tags/Caturday/follow', { method: 'POST' });
    expect([f.status, f.body.name, f.body.following, f.body.featuring]).toEqual([200, 'CatURDay', true, false]);
    expect((await carol.api('/api/v1/tags/caturday/follow', { method: 'POST' })).body.following).toBe(true);
    for (const name of ['Dogs', 'birds', 'Fish', 'frogs', 'Newts']) expect((await carol.api(`/api/v1/tags/${name}/follow`, { method: 'POST' })).status).toBe(200);
    const page = await carol.api('/api/v1/followed_tags?limit=2');
    expect(page.body.map((t: { name: string }) => t.name)).toEqual(['Newts', 'frogs']);
    expect(page.body[0]).toMatchObject({ following: true, featuring: false, url: roost.at('/tags/newts') });
    const followIds = await roost.services.db.sql.query<{ id: string }>(`select id::text from tag_follows where account_id = $1 order by id desc`, [carol.account.id]);
    expect(page.headers.get('link')).toBe(
      `<${roost.at(`/api/v1/followed_tags?limit=2&max_id=${followIds[1]!.id}`)}>; rel="next", <${roost.at(`/api/v1/followed_tags?limit=2&since_id=${followIds[0]!.id}`)}>; rel="prev"`,
    );
    const next = await carol.api(`/api/v1/followed_tags?limit=2&max_id=${followIds[1]!.id}`);
    expect(next.body.map((t: { name: string }) => t.name)).toEqual(['Fish', 'birds']);
    await carol.api('/api/v1/followed_tags?limit=1');
    const q2 = await capturedStatements(roost, () => carol.api('/api/v1/followed_tags?limit=2'));
    const q6 = await capturedStatements(roost, () => carol.api('/api/v1/followed_tags?limit=6'));
    expect(q6).toEqual(q2);
    // The page of follows, then the tags with their history and the viewer's flags.
    expect(q2.length).toBe(2);
    const un = await carol.api('/api/v1/tags/frogs/unfollow', { method: 'POST' });
    expect([un.status, un.body.following]).toEqual([200, false]);
    expect((await carol.api('/api/v1/tags/neverfollowed/unfollow', { method: 'POST' })).body).toMatchObject({ id: '', following: false });
    expect((await carol.api('/api/v1/followed_tags')).body.map((t: { name: string }) => t.name)).toEqual(['Newts', 'Fish', 'birds', 'Dogs', 'CatURDay']);
  });

  it("a followed tag's public posts arrive in home; private ones, blocked authors and unfollowed tags do not", async () => {
    const dave = await createTestUser(roost, 'dave');
    const hank = await createTestUser(roost, 'hank');
    expect((await carol.api(`/api/v1/accounts/${hank.account.id}/block`, { method: 'POST' })).status).toBe(200);
    const shown = await post(dave, { status: 'look #DOGS' });
    const hidden = await post(dave, { status: 'psst #dogs', visibility: 'private' });
    const unlisted = await post(dave, { status: 'quiet #dogs', visibility: 'unlisted' });
    const blocked = await post(hank, { status: 'me too #dogs' });
    const untagged = await post(dave, { status: 'no tag' });
    const fish = await post(dave, { status: 'and #fish' });
    await settled(roost);
    const home = async () => (await carol.api('/api/v1/timelines/home')).body.map((s: { id: string }) => s.id);
    const ids = await home();
    expect(ids).toContain(shown.id);
    expect(ids).toContain(fish.id);
    for (const s of [hidden, unlisted, blocked, untagged]) expect(ids).not.toContain(s.id);
    // Feed rows only for the public ones; the block is checked when the page is read.
    const rows = await roost.services.db.sql.query<{ status_id: string }>(`select status_id::text from tag_home_feeds where account_id = $1 order by status_id`, [carol.account.id]);
    expect(rows.map((r) => r.status_id)).toEqual([shown.id, blocked.id, fish.id]);
    await carol.api('/api/v1/tags/fish/unfollow', { method: 'POST' });
    expect(await home()).toEqual([shown.id]);
  });

  it('features tags up to the maximum; one over it is refused and writes nothing; lists, suggests, shows and federates them', async () => {
    const max = roost.config.limits.accounts.maxFeaturedTags;
    expect(max).toBe(10);
    expect((await apiRequest(roost, '/api/v2/instance')).body.configuration.accounts.max_featured_tags).toBe(10);
    const viaTags = await alice.api('/api/v1/tags/Caturday/feature', { method: 'POST' });
    expect([viaTags.status, viaTags.body.name, viaTags.body.featuring]).toEqual([200, 'CatURDay', true]);
    expect((await alice.api('/api/v1/tags/caturday/feature', { method: 'POST' })).body.featuring).toBe(true);
    const created = [];
    for (let i = 1; i < max; i++) {
      const r = await alice.api('/api/v1/featured_tags', { method: 'POST', body: { name: `#Topic${i}` } });
      expect(r.status).toBe(200);
      created.push(r.body);
    }
    expect(created[0]).toEqual({ id: expect.stringMatching(/^\d+$/), name: 'Topic1', url: roost.at('/@alice/tagged/topic1'), statuses_count: '0', last_status_at: null });
    const tagsBefore = await roost.services.db.sql.query(`select count(*)::int as n from tags`);
    const over = await alice.api('/api/v1/featured_tags', { method: 'POST', body: { name: 'OneTooMany' } });
    expect(over.status).toBe(422);
    expect(over.body).toEqual({
      error: 'Validation failed: You have already featured the maximum number of hashtags',
      details: { base: [{ error: 'ERR_INVALID', description: 'You have already featured the maximum number of hashtags' }] },
    });
    expect((await alice.api('/api/v1/tags/OneTooMany/feature', { method: 'POST' })).status).toBe(422);
    expect(await roost.services.db.sql.query(`select count(*)::int as n from tags`)).toEqual(tagsBefore);
    expect((await roost.services.db.sql.query(`select 1 from featured_tags where account_id = $1`, [alice.account.id])).length).toBe(max);
    const invalid = await alice.api('/api/v1/featured_tags', { method: 'POST', body: { name: '123' } });
    expect([invalid.status, invalid.body.error]).toEqual([422, 'Validation failed: Name is invalid']);

    const mine = await alice.api('/api/v1/featured_tags');
    expect(mine.body).toHaveLength(max);
    expect(mine.body[0]).toEqual({
      id: expect.stringMatching(/^\d+$/),
      name: 'CatURDay',
      url: roost.at('/@alice/tagged/caturday'),
      statuses_count: '2',
      last_status_at: '2026-05-01',
    });
    expect((await apiRequest(roost, `/api/v1/accounts/${alice.account.id}/featured_tags`)).body).toEqual(mine.body);
    const actor = await fetch(roost.at('/users/alice/collections/tags'), { headers: { accept: 'application/activity+json' } });
    const collection = (await actor.json()) as any;
    expect(collection.totalItems).toBe(max);
    expect(collection.orderedItems?.[0] ?? collection.items?.[0]).toMatchObject({ type: 'Hashtag', href: roost.at('/@alice/tagged/caturday'), name: '#CatURDay' });

    // Removing one makes room; another's or an unknown id is a 404.
    expect((await bob.api(`/api/v1/featured_tags/${created[0].id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await alice.api(`/api/v1/featured_tags/${created[0].id}`, { method: 'DELETE' })).body).toEqual({});
    expect((await alice.api('/api/v1/tags/topic2/unfeature', { method: 'POST' })).body.featuring).toBe(false);
    // Suggestions: the tags of alice's latest statuses, most used first, not featured.
    await post(alice, { status: '#Roost #Roost-less #roost and #Yarn' });
    await post(alice, { status: '#yarn and #roost' });
    await post(alice, { status: 'just #ROOST' });
    const suggested = await alice.api('/api/v1/featured_tags/suggestions');
    expect(suggested.body.map((t: { name: string }) => t.name)).toEqual(['Roost', 'Yarn']);
    expect(suggested.body[0]).toMatchObject({ following: false, featuring: false, url: roost.at('/tags/roost') });
  });
});
