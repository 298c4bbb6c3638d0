/**
 * Trends through the real server on a clock the test drives: tag scores count distinct accounts
 * (one account's 100 uses rank below 20 accounts' one), leave silenced accounts out, halve per
 * day; the lists wait for an admin's review (Mastodon's default) and show approved entries only;
 * statuses trend by favourites and reblogs, links by the statuses carrying their card. The
 * scores are computed by the refresh timer when the clock reaches it, never on request.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, startTestRoost, settled, eventually, type TestRoost } from '../helpers/roost.ts';
import { apiRequest as anon, createTestUser, type TestUser } from '../helpers/auth.ts';
import { createManualClock } from '../../src/lib/clock.ts';
import { stepAccount } from '../../src/services/account-actor.ts';

const clock = createManualClock(new Date('2026-03-02T10:00:00.000Z'));
const REFRESH_MS = 300_000;
let roost: TestRoost;
let admin: TestUser;
let moderatorless: TestUser;
let crowd: TestUser[];
let solo: TestUser;
let hushed: TestUser[];

type Json = Record<string, any>;
const post = async (u: TestUser, status: string, extra: Json = {}) => {
  const res = await u.api('/api/v1/statuses', { method: 'POST', body: { status, visibility: 'public', ...extra } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Json;
};
const scores = async (kind: string) =>
  Object.fromEntries(
    (
      await roost.services.db.sql.query<{ name: string; score: number }>(
        `select coalesce(t.name, tr.target_id::text) as name, tr.score from trends tr left join tags t on tr.kind = 'tag' and t.id = tr.target_id where tr.kind = $1`,
        [kind],
      )
    ).map((r) => [r.name, Number(r.score)]),
  );
/** Moves the clock to the next refresh and waits until it has run. */
async function refreshed(): Promise<void> {
  const due = (await roost.services.db.sql.query<{ run_at: string | Date }>(`select run_at from jobs where kind = 'timer' and dedupe_key = 'trends.refresh'`))[0]?.run_at;
  expect(due).toBeTruthy();
  const before = new Date(due!);
  clock.set(new Date(Math.max(clock.now().getTime(), before.getTime())));
  await eventually(
    async () => (await roost.services.db.sql.query(`select 1 from jobs where kind = 'timer' and dedupe_key = 'trends.refresh' and run_at > $1`, [before])).length > 0,
    20_000,
    'the trends refresh',
  );
  await settled(roost);
}
const names = (list: Json[]) => list.map((t) => t.name);

beforeAll(async () => {
  roost = await startTestRoost({ trends: { refreshSeconds: REFRESH_MS / 1000 } }, { clock });
  admin = await createTestUser(roost, 'trendadmin', { role: 'Admin', scopes: ['read', 'write', 'admin:read', 'admin:write'] });
  moderatorless = await createTestUser(roost, 'plainuser', { scopes: ['read', 'write', 'admin:read', 'admin:write'] });
  crowd = [];
  for (let i = 0; i < 20; i++) crowd.push(await createTestUser(roost, `crowd${i}`));
  solo = await createTestUser(roost, 'solo');
  hushed = [];
  for (let i = 0; i < 25; i++) hushed.push(await createTestUser(roost, `hushed${i}`));
  for (const h of hushed) await stepAccount(roost.services, h.account.id, { type: 'account.silence' }, { origin: 'operator' });
}, 300_000);
afterAll(async () => {
  await roost?.close();
});

describe('trending tags', () => {
  it('count distinct accounts, not uses; leave silenced accounts out; wait for review', async () => {
    for (let i = 0; i < 100; i++) await post(solo, `again #solo ${i}`);
    for (const u of crowd) await post(u, 'me too #crowd');
    for (const u of hushed) await post(u, 'psst #hushed');
    // Followers-only and unlisted posts are not trends.
    for (const u of crowd.slice(0, 5)) await post(u, 'quiet #private', { visibility: 'private' });
    for (const u of crowd.slice(0, 5)) await post(u, 'quiet #unlisted', { visibility: 'unlisted' });
    await settled(roost);
    // Nothing is computed on request: before the refresh, nothing trends.
    expect((await admin.api('/api/v1/admin/trends/tags')).body).toEqual([]);
    await refreshed();
    expect(await scores('tag')).toEqual({ crowd: 20, solo: 1 });

    // Unreviewed: the public list is empty (Mastodon's trendable_by_default is off), the admin list has both.
    expect((await moderatorless.api('/api/v1/trends/tags')).body).toEqual([]);
    const pending = await admin.api('/api/v1/admin/trends/tags');
    expect(pending.status).toBe(200);
    expect(names(pending.body)).toEqual(['crowd', 'solo']);
    expect(pending.body[0]).toMatchObject({ name: 'crowd', trendable: false, usable: true, requires_review: true });
    expect(pending.body[0].history).toHaveLength(7);
    expect(pending.body[0].history[0]).toEqual({ day: String(Date.UTC(2026, 2, 2) / 1000), uses: '20', accounts: '20' });
    expect(pending.body[1].history[0]).toMatchObject({ uses: '100', accounts: '1' });

    for (const t of pending.body) {
      const approved = await admin.api(`/api/v1/admin/trends/tags/${t.id}/approve`, { method: 'POST' });
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({ id: t.id, trendable: true, requires_review: false });
    }
    const publicList = await anon(roost, '/api/v1/trends/tags');
    expect(publicList.status).toBe(200);
    expect(names(publicList.body)).toEqual(['crowd', 'solo']);
    expect(publicList.body[0].history).toHaveLength(7);
    // The deprecated alias, and the page size: one per page, the next by offset.
    expect(names((await anon(roost, '/api/v1/trends')).body)).toEqual(['crowd', 'solo']);
    const first = await anon(roost, '/api/v1/trends/tags?limit=1');
    expect(names(first.body)).toEqual(['crowd']);
    expect(first.headers.get('link')).toMatch(/offset=1>; rel="next"$/);
    expect(names((await anon(roost, '/api/v1/trends/tags?limit=1&offset=1')).body)).toEqual(['solo']);

    // Search's exclude_unreviewed keeps only reviewed tags (approved here), not #hushed nor #private.
    const search = async (q: string, exclude: boolean) =>
      names((await admin.api(`/api/v2/search?type=hashtags&q=${q}&exclude_unreviewed=${exclude}`)).body.hashtags).sort();
    expect(await search('s', true)).toEqual(['solo']);
    expect(await search('s', false)).toEqual(['solo']);
    expect(await search('h', false)).toEqual(['hushed']);
    expect(await search('h', true)).toEqual([]);
    // A rejection takes it out of the public list, and the audit log says who did it.
    const rejected = await admin.api(`/api/v1/admin/trends/tags/${pending.body[1].id}/reject`, { method: 'POST' });
    expect(rejected.body).toMatchObject({ name: 'solo', trendable: false, requires_review: false });
    expect(names((await anon(roost, '/api/v1/trends/tags')).body)).toEqual(['crowd']);
    const audit = await roost.services.db.sql.query<{ account_id: string; action: string; target_type: string; human_identifier: string }>(
      `select account_id::text, action, target_type, human_identifier from admin_action_logs order by id`,
    );
    expect(audit).toEqual([
      { account_id: admin.account.id, action: 'approve', target_type: 'Tag', human_identifier: 'crowd' },
      { account_id: admin.account.id, action: 'approve', target_type: 'Tag', human_identifier: 'solo' },
      { account_id: admin.account.id, action: 'reject', target_type: 'Tag', human_identifier: 'solo' },
    ]);
  }, 300_000);

  it('halve with each day: yesterday weighs half of today', async () => {
    clock.advance(86_400_000);
    for (const u of crowd.slice(0, 12)) await post(u, 'new day #fresh');
    await settled(roost);
    await refreshed();
    const s = await scores('tag');
    expect(s).toMatchObject({ crowd: 10, fresh: 12 });
    // The rejected tag keeps its review at 0.5 points (reviewed rows stay).
    expect(s.solo).toBe(0.5);
    const fresh = (await admin.api('/api/v1/admin/trends/tags')).body.find((t: Json) => t.name === 'fresh');
    await admin.api(`/api/v1/admin/trends/tags/${fresh.id}/approve`, { method: 'POST' });
    expect(names((await anon(roost, '/api/v1/trends/tags')).body)).toEqual(['fresh', 'crowd']);
    const crowdTag = (await anon(roost, '/api/v1/trends/tags')).body[1];
    expect(crowdTag.history.slice(0, 2).map((d: Json) => d.accounts)).toEqual(['0', '20']);
    // Eight days on, nothing is left in the window and the unreviewed rows are gone.
    clock.advance(8 * 86_400_000);
    await refreshed();
    expect((await anon(roost, '/api/v1/trends/tags')).body).toEqual([]);
    expect(Object.keys(await scores('tag')).sort()).toEqual(['crowd', 'fresh', 'solo']);
    expect(Object.values(await scores('tag'))).toEqual([0, 0, 0]);
  }, 300_000);
});

describe('trending statuses and links', () => {
  it('rank statuses by favourites and reblogs, public originals by discoverable authors only', async () => {
    const [a, b] = crowd;
    for (const u of [a!, b!]) expect((await u.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { discoverable: true } })).status).toBe(200);
    const popular = await post(a!, 'a popular post');
    const liked = await post(b!, 'a liked post');
    const sensitive = await post(a!, 'careful', { sensitive: true, spoiler_text: 'cw' });
    const reply = await post(b!, 'a reply', { in_reply_to_id: liked.id });
    const hidden = await post(crowd[5]!, 'not discoverable');
    for (const u of crowd.slice(2, 8)) {
      for (const s of [popular, sensitive, reply, hidden]) expect((await u.api(`/api/v1/statuses/${s.id}/favourite`, { method: 'POST' })).status).toBe(200);
    }
    for (const u of crowd.slice(2, 5)) expect((await u.api(`/api/v1/statuses/${liked.id}/reblog`, { method: 'POST' })).status).toBe(200);
    await settled(roost);
    await refreshed();
    const adminList = await admin.api('/api/v1/admin/trends/statuses');
    expect(adminList.body.map((s: Json) => s.id)).toEqual([popular.id, liked.id]);
    expect(adminList.body[0]).toMatchObject({ requires_review: true, favourites_count: 6 });
    expect((await anon(roost, '/api/v1/trends/statuses')).body).toEqual([]);
    for (const s of adminList.body) expect((await admin.api(`/api/v1/admin/trends/statuses/${s.id}/approve`, { method: 'POST' })).body.requires_review).toBe(false);
    const shown = await anon(roost, '/api/v1/trends/statuses');
    expect(shown.body.map((s: Json) => s.id)).toEqual([popular.id, liked.id]);
    expect(shown.body[0]).not.toHaveProperty('requires_review');
    // A viewer who blocks the author does not see it.
    expect((await solo.api(`/api/v1/accounts/${a!.account.id}/block`, { method: 'POST' })).status).toBe(200);
    expect((await solo.api('/api/v1/trends/statuses')).body.map((s: Json) => s.id)).toEqual([liked.id]);
    // Deleted: gone from the list at once, before any refresh.
    expect((await b!.api(`/api/v1/statuses/${liked.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await anon(roost, '/api/v1/trends/statuses')).body.map((s: Json) => s.id)).toEqual([popular.id]);
  }, 300_000);

  it('rank links by the distinct accounts whose public statuses carry the card', async () => {
    const sql = roost.services.db.sql;
    const card = async (url: string, title: string) => {
      const id = roost.services.ids.next();
      await sql.query(`insert into preview_cards (id, url, title, created_at, updated_at) values ($1, $2, $3, now(), now())`, [id, url, title]);
      return id;
    };
    const wide = await card('https://wide.example/', 'Shared widely');
    const narrow = await card('https://narrow.example/', 'Shared by one');
    const attach = async (statusId: string, cardId: string, url: string) =>
      sql.query(`insert into preview_cards_statuses (status_id, preview_card_id, url) values ($1, $2, $3)`, [statusId, cardId, url]);
    for (const u of crowd.slice(0, 4)) await attach((await post(u, 'look at the wide one')).id, wide, 'https://wide.example/');
    for (let i = 0; i < 6; i++) await attach((await post(solo, `look ${i} at the narrow one`)).id, narrow, 'https://narrow.example/');
    await settled(roost);
    await refreshed();
    const listed = await admin.api('/api/v1/admin/trends/links');
    expect(listed.body.map((l: Json) => [l.id, l.title, l.requires_review])).toEqual([
      [wide, 'Shared widely', true],
      [narrow, 'Shared by one', true],
    ]);
    expect(listed.body[0].history[0]).toMatchObject({ uses: '4', accounts: '4' });
    expect((await admin.api(`/api/v1/admin/trends/links/${wide}/approve`, { method: 'POST' })).status).toBe(200);
    const links = await anon(roost, '/api/v1/trends/links');
    expect(links.body).toHaveLength(1);
    expect(links.body[0]).toMatchObject({ url: 'https://wide.example/', title: 'Shared widely', type: 'link' });
    expect(links.body[0].history).toHaveLength(7);
    expect(links.body[0]).not.toHaveProperty('id');
  }, 300_000);

  it('renders a page with a fixed number of statements, whatever its size', async () => {
    const count = async (path: string) =>
      (await capturedStatements(roost, () => admin.api(path), 200)).filter((t) => !/oauth_access_tokens|user_activity|user_roles/.test(t)).length;
    for (const u of crowd.slice(0, 3)) await post(u, '#alpha and #beta');
    await settled(roost);
    await refreshed();
    for (const t of (await admin.api('/api/v1/admin/trends/tags')).body) await admin.api(`/api/v1/admin/trends/tags/${t.id}/approve`, { method: 'POST' });
    expect(names((await anon(roost, '/api/v1/trends/tags')).body).sort()).toEqual(['alpha', 'beta']);
    for (const kind of ['tags', 'statuses', 'links']) {
      const one = await count(`/api/v1/trends/${kind}?limit=1`);
      const all = await count(`/api/v1/trends/${kind}?limit=20`);
      expect([kind, all]).toEqual([kind, one]);
      expect(await count(`/api/v1/admin/trends/${kind}?limit=20`)).toBe(await count(`/api/v1/admin/trends/${kind}?limit=1`));
    }
    // What they are: the ids, then one batched read (tags: one statement; links: one).
    expect(await count('/api/v1/trends/tags?limit=20')).toBe(2);
    expect(await count('/api/v1/trends/links?limit=20')).toBe(2);
  }, 120_000);

  it('refuses what it should: no permission, unknown targets, trends off', async () => {
    expect((await moderatorless.api('/api/v1/admin/trends/tags')).status).toBe(403);
    expect((await moderatorless.api(`/api/v1/admin/trends/links/1/approve`, { method: 'POST' })).status).toBe(403);
    for (const kind of ['tags', 'statuses', 'links']) {
      const missing = await admin.api(`/api/v1/admin/trends/${kind}/123456789/approve`, { method: 'POST' });
      expect([missing.status, missing.body]).toEqual([404, { error: 'Record not found' }]);
    }
    expect((await anon(roost, '/api/v1/trends/tags?limit=1000&offset=-4')).status).toBe(200);
    const off = await startTestRoost({ trends: { enabled: false } });
    try {
      for (const kind of ['tags', 'statuses', 'links']) expect((await anon(off, `/api/v1/trends/${kind}`)).body).toEqual([]);
      expect((await off.services.db.sql.query(`select 1 from jobs where dedupe_key = 'trends.refresh'`)).length).toBe(0);
    } finally {
      await off.close();
    }
  }, 120_000);
});
