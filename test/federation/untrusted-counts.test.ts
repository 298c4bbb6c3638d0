/**
 * Untrusted counts (Mastodon 4.3's status_stats.untrusted_favourites_count / _reblogs_count)
 * through the real inbox of a real Roost, from a fake remote server signing with its own key: a
 * remote Note's `likes` / `shares` totalItems are taken on Create and Update, clamped (negative →
 * 0, 10^12 → 100,000,000), anything not a number ignored, a collection given only by its URL never
 * fetched; the API shows the larger of Roost's own count and the untrusted one, and a local
 * favourite moves both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled, startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { AS_CONTEXT, startFakePeer, type FakePeer } from '../security/fake-peer.ts';

const PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';

let roost: TestRoost;
let peer: FakePeer;
let alice: TestUser;
let n = 0;

beforeAll(async () => {
  [roost, peer] = await Promise.all([startTestRoost(), startFakePeer()]);
  alice = await createTestUser(roost, 'alice');
}, 120_000);
afterAll(async () => {
  await Promise.all([roost?.close(), peer?.close()]);
});

const note = (uri: string, extra: Record<string, unknown>) => ({
  id: uri,
  type: 'Note',
  attributedTo: peer.actorId,
  to: [PUBLIC, roost.at('/users/alice')],
  content: '<p>counted elsewhere</p>',
  published: '2026-11-01T00:00:00Z',
  ...extra,
});

async function create(uri: string, extra: Record<string, unknown>): Promise<string> {
  const res = await peer.deliver(roost.at('/inbox'), {
    '@context': AS_CONTEXT, id: `${uri}/activity`, type: 'Create', actor: peer.actorId, to: [PUBLIC, roost.at('/users/alice')], object: note(uri, extra),
  });
  expect(res.status).toBe(202);
  return eventually(
    async () => (await roost.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [uri]))[0]?.id,
    20_000,
    'the Note',
  );
}

async function update(uri: string, extra: Record<string, unknown>): Promise<void> {
  const res = await peer.deliver(roost.at('/inbox'), {
    '@context': AS_CONTEXT, id: `${uri}#updates/${++n}`, type: 'Update', actor: peer.actorId, to: [PUBLIC], object: note(uri, extra),
  });
  expect(res.status).toBe(202);
  await settled(roost);
}

const stats = async (id: string) =>
  (
    await roost.services.db.sql.query(
      `select favourites_count as fav, reblogs_count as reb, untrusted_favourites_count as ufav, untrusted_reblogs_count as ureb
         from status_stats where status_id = $1`,
      [id],
    )
  )[0];

const shown = async (id: string) => {
  const r = await alice.api(`/api/v1/statuses/${id}`);
  expect(r.status).toBe(200);
  return { favourites: r.body.favourites_count, reblogs: r.body.reblogs_count };
};

describe("a remote Note's likes/shares totalItems", () => {
  it('are taken on Create and Update, clamped, bogus ones ignored, and shown as max(own, untrusted)', async () => {
    const uri = `${peer.base}/statuses/${++n}`;
    const id = await create(uri, {
      likes: { id: `${uri}/likes`, type: 'Collection', totalItems: 5 },
      shares: { id: `${uri}/shares`, type: 'Collection', totalItems: 3 },
    });
    await settled(roost);
    expect(await stats(id)).toEqual({ fav: 0, reb: 0, ufav: 5, ureb: 3 });
    expect(await shown(id)).toEqual({ favourites: 5, reblogs: 3 });

    // A favourite from here moves both counts (the origin will count it too), as Mastodon's.
    expect((await alice.api(`/api/v1/statuses/${id}/favourite`, { method: 'POST' })).status).toBe(200);
    expect(await stats(id)).toEqual({ fav: 1, reb: 0, ufav: 6, ureb: 3 });
    expect(await shown(id)).toEqual({ favourites: 6, reblogs: 3 });

    // An Update with a negative count (clamped to 0: our own 1 shows) and a string (ignored).
    await update(uri, {
      updated: '2026-11-02T00:00:00Z',
      likes: { id: `${uri}/likes`, type: 'Collection', totalItems: -5 },
      shares: { id: `${uri}/shares`, type: 'Collection', totalItems: 'abc' },
    });
    expect(await stats(id)).toEqual({ fav: 1, reb: 0, ufav: 0, ureb: 3 });
    expect(await shown(id)).toEqual({ favourites: 1, reblogs: 3 });

    // An absurd count is capped at 100,000,000 (Mastodon's MAX_UNTRUSTED_COUNT); even from an
    // Update older than the last edit (its text is not applied, its counts are).
    await update(uri, {
      updated: '2026-11-01T12:00:00Z',
      content: '<p>stale text</p>',
      likes: { id: `${uri}/likes`, type: 'Collection', totalItems: 1e12 },
      shares: { id: `${uri}/shares`, type: 'Collection', totalItems: 2.9 },
    });
    expect(await stats(id)).toEqual({ fav: 1, reb: 0, ufav: 100_000_000, ureb: 2 });
    expect(await shown(id)).toEqual({ favourites: 100_000_000, reblogs: 2 });
    const [row] = await roost.services.db.sql.query<{ content: string }>(`select content from statuses where id = $1`, [id]);
    expect(row!.content).toBe('<p>counted elsewhere</p>');

    // Undoing the favourite moves both down again.
    expect((await alice.api(`/api/v1/statuses/${id}/unfavourite`, { method: 'POST' })).status).toBe(200);
    expect(await stats(id)).toEqual({ fav: 0, reb: 0, ufav: 99_999_999, ureb: 2 });
  });

  it('a Note without counts, or with its collections given only by URL, has none (and nothing is fetched)', async () => {
    const uri = `${peer.base}/statuses/${++n}`;
    const before = peer.hits.length;
    const id = await create(uri, { likes: `${uri}/likes`, shares: `${uri}/shares` });
    await settled(roost);
    expect(peer.hits.slice(before).filter((h) => h.includes('/likes') || h.includes('/shares'))).toEqual([]);
    expect((await stats(id)) ?? null).toEqual(null);
    expect(await shown(id)).toEqual({ favourites: 0, reblogs: 0 });
    // A favourite from here: the own count only (no untrusted one to move).
    expect((await alice.api(`/api/v1/statuses/${id}/favourite`, { method: 'POST' })).status).toBe(200);
    expect(await stats(id)).toEqual({ fav: 1, reb: 0, ufav: null, ureb: null });
    expect(await shown(id)).toEqual({ favourites: 1, reblogs: 0 });
  });

  it("a local status's Note carries its own likes/shares totalItems", async () => {
    const posted = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'count me', visibility: 'public' } });
    expect(posted.status).toBe(200);
    const bob = await createTestUser(roost, 'bob');
    expect((await bob.api(`/api/v1/statuses/${posted.body.id}/favourite`, { method: 'POST' })).status).toBe(200);
    const served = await fetch(posted.body.uri, { headers: { accept: 'application/activity+json' } });
    expect(served.status).toBe(200);
    const json = (await served.json()) as { likes: { totalItems: number }; shares: { totalItems: number } };
    expect(json.likes).toMatchObject({ id: `${posted.body.uri}/likes`, totalItems: 1 });
    expect(json.shares).toMatchObject({ id: `${posted.body.uri}/shares`, totalItems: 0 });
  });
});
