/**
 * Trends across three real instances on loopback (real HTTP, real signatures): the uses that A
 * ranks come from accounts on B and C, whose public tagged posts reach A because A's watcher
 * follows them. A counts distinct accounts (one account's 100 uses rank below 20 accounts' one),
 * leaves out a remote account its admin silenced, halves yesterday when the clocks move a day, and
 * keeps 7 daily buckets of history. Each instance has a manual clock; the three move together,
 * because a remote post's day is its `published` time, which the sender's clock wrote. The scores
 * change only when A's `trends.refresh` timer runs, which the test reaches by moving the clocks.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, settled, eventually, type TestRoost } from '../helpers/roost.ts';
import { apiRequest as anon, createTestUser, type TestUser } from '../helpers/auth.ts';
import { createManualClock, type ManualClock } from '../../src/lib/clock.ts';

const START = new Date('2026-03-02T10:00:00.000Z');
const DAY_MS = 86_400_000;
const REFRESH_SECONDS = 300;
const W = 30_000;
const clocks: ManualClock[] = [createManualClock(START), createManualClock(START), createManualClock(START)];
let a: TestRoost; // ranks the trends
let b: TestRoost;
let c: TestRoost;
let admin: TestUser; // A's moderator
let watcher: TestUser; // A: follows every remote poster, so their posts are delivered to A
let solo: TestUser; // B: one account, 100 uses of #solo
let crowd: TestUser[]; // 10 on B and 10 on C: one use of #crowd each
let hushed: TestUser[]; // C: silenced by A's admin

type Json = Record<string, any>;
const names = (list: Json[]) => list.map((t) => t.name);

/** Moves the three clocks to `at` together (never backwards). */
function setClocks(at: Date): void {
  for (const clock of clocks) if (clock.now().getTime() < at.getTime()) clock.set(at);
}

async function post(u: TestUser, status: string): Promise<Json> {
  const res = await u.api('/api/v1/statuses', { method: 'POST', body: { status, visibility: 'public' } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The id on A of `user@domain`, found by search with resolve (webfinger and the actor fetched). */
async function resolveOnA(r: TestRoost, u: TestUser): Promise<string> {
  const acct = `${u.account.username}@${r.config.domain}`;
  const res = await watcher.api(`/api/v2/search?type=accounts&resolve=true&q=${encodeURIComponent(acct)}`);
  expect(res.status).toBe(200);
  expect(res.body.accounts.map((x: Json) => x.acct)).toEqual([acct]);
  return res.body.accounts[0].id;
}

/** The ids on A of the remote accounts, in order; the watcher follows each and waits for the Accept. */
const idOnA = new Map<TestUser, string>();
async function followFromA(r: TestRoost, users: TestUser[]): Promise<void> {
  for (const u of users) idOnA.set(u, await resolveOnA(r, u));
  await Promise.all(
    users.map(async (u) => {
      const id = idOnA.get(u)!;
      expect((await watcher.api(`/api/v1/accounts/${id}/follow`, { method: 'POST' })).status).toBe(200);
      await eventually(async () => (await watcher.api(`/api/v1/accounts/relationships?id[]=${id}`)).body[0]?.following === true, W, `following ${u.account.username}`);
    }),
  );
}

/** How many statuses of these remote accounts A holds. */
async function heldOnA(users: TestUser[]): Promise<number> {
  const [row] = await a.services.db.sql.query<{ n: number }>(`select count(*)::int as n from statuses where account_id = any($1::bigint[]) and deleted_at is null`, [
    users.map((u) => idOnA.get(u)!),
  ]);
  return row!.n;
}

/** A's tag scores by name, as the last refresh wrote them. */
async function scores(): Promise<Record<string, number>> {
  const rows = await a.services.db.sql.query<{ name: string; score: number }>(
    `select t.name, tr.score from trends tr join tags t on t.id = tr.target_id where tr.kind = 'tag'`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.score)]));
}

/** Moves the clocks to A's next trends refresh and waits until it has run (it schedules the next). */
async function refreshed(): Promise<void> {
  const sql = a.services.db.sql;
  const [due] = await sql.query<{ run_at: string | Date }>(`select run_at from jobs where kind = 'timer' and dedupe_key = 'trends.refresh'`);
  expect(due).toBeTruthy();
  const before = new Date(due!.run_at);
  setClocks(before);
  await eventually(
    async () => (await sql.query(`select 1 from jobs where kind = 'timer' and dedupe_key = 'trends.refresh' and run_at > $1`, [before])).length > 0,
    W,
    'the trends refresh on A',
  );
  await settled(a, b, c);
}

beforeAll(async () => {
  [a, b, c] = await Promise.all([
    startTestRoost({ trends: { refreshSeconds: REFRESH_SECONDS } }, { clock: clocks[0] }),
    startTestRoost({}, { clock: clocks[1] }),
    startTestRoost({}, { clock: clocks[2] }),
  ]);
  admin = await createTestUser(a, 'trendadmin', { role: 'Admin', scopes: ['read', 'write', 'admin:read', 'admin:write'] });
  watcher = await createTestUser(a, 'watcher');
  solo = await createTestUser(b, 'solo');
  crowd = [];
  for (let i = 0; i < 10; i++) crowd.push(await createTestUser(b, `crowdb${i}`));
  for (let i = 0; i < 10; i++) crowd.push(await createTestUser(c, `crowdc${i}`));
  hushed = [];
  for (let i = 0; i < 3; i++) hushed.push(await createTestUser(c, `hushed${i}`));
  await followFromA(b, [solo, ...crowd.slice(0, 10)]);
  await followFromA(c, [...crowd.slice(10), ...hushed]);
}, 180_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), c?.close()]);
});

describe('trending tags from remote accounts', () => {
  it('count distinct accounts, not uses, and leave out an account A silenced', async () => {
    // A's admin silences the three hushed accounts of C (the admin API, on A's copies of them).
    for (const h of hushed) {
      const res = await admin.api(`/api/v1/admin/accounts/${idOnA.get(h)}/action`, { method: 'POST', body: { type: 'silence' } });
      expect(res.status).toBe(200);
    }
    for (let i = 0; i < 100; i++) await post(solo, `again #solo ${i}`);
    for (const u of crowd) await post(u, 'me too #crowd');
    for (const u of hushed) await post(u, 'psst #hushed');
    // Delivered, signed, to A: every post is there (a silenced account's followers still get its posts).
    await eventually(async () => (await heldOnA([solo])) === 100 && (await heldOnA(crowd)) === 20 && (await heldOnA(hushed)) === 3, W, 'the posts on A');
    await settled(a, b, c);
    // Nothing is computed on request: before the refresh, nothing trends.
    expect((await admin.api('/api/v1/admin/trends/tags')).body).toEqual([]);

    await refreshed();
    // Counted by distinct accounts: #crowd 20, #solo 1 (100 uses); #hushed's 3 accounts count 0.
    expect(await scores()).toEqual({ crowd: 20, solo: 1 });
    const listed = await admin.api('/api/v1/admin/trends/tags');
    expect(listed.status).toBe(200);
    expect(names(listed.body)).toEqual(['crowd', 'solo']);
    const today = String(Date.UTC(2026, 2, 2) / 1000);
    expect(listed.body[0].history).toHaveLength(7);
    expect(listed.body[0].history[0]).toEqual({ day: today, uses: '20', accounts: '20' });
    expect(listed.body[1].history).toHaveLength(7);
    expect(listed.body[1].history[0]).toEqual({ day: today, uses: '100', accounts: '1' });

    // The uses of #hushed were recorded: lifting one silence makes that one account count.
    const lifted = await admin.api(`/api/v1/admin/accounts/${idOnA.get(hushed[0]!)}/unsilence`, { method: 'POST' });
    expect(lifted.status).toBe(200);
    await refreshed();
    expect(await scores()).toEqual({ crowd: 20, solo: 1, hushed: 1 });
    const again = await admin.api(`/api/v1/admin/accounts/${idOnA.get(hushed[0]!)}/action`, { method: 'POST', body: { type: 'silence' } });
    expect(again.status).toBe(200);
    await refreshed();
    expect(await scores()).toEqual({ crowd: 20, solo: 1 });

    // Reviewed, they show on A's public list, remote uses and all.
    for (const t of listed.body) expect((await admin.api(`/api/v1/admin/trends/tags/${t.id}/approve`, { method: 'POST' })).status).toBe(200);
    const shown = await anon(a, '/api/v1/trends/tags');
    expect(names(shown.body)).toEqual(['crowd', 'solo']);
    expect(shown.body.map((t: Json) => t.history.length)).toEqual([7, 7]);
  }, 300_000);

  it('halve with each day: yesterday weighs half of today', async () => {
    setClocks(new Date(clocks[0]!.now().getTime() + DAY_MS));
    // Twelve of the crowd (six on B, six on C) post a new tag on the new day, dated by their clocks.
    const fresh = [...crowd.slice(0, 6), ...crowd.slice(10, 16)];
    for (const u of fresh) await post(u, 'a new day #fresh');
    await eventually(async () => (await heldOnA(crowd)) === 32, W, 'the new posts on A');
    await settled(a, b, c);
    await refreshed();
    // Yesterday's 20 accounts weigh 10, today's 12 weigh 12; #solo's one account 0.5.
    expect(await scores()).toEqual({ crowd: 10, solo: 0.5, fresh: 12 });
    const listed = (await admin.api('/api/v1/admin/trends/tags')).body as Json[];
    expect(names(listed)).toEqual(['fresh', 'crowd', 'solo']);
    const byName = Object.fromEntries(listed.map((t) => [t.name, t]));
    const days = [0, 1].map((n) => String(Date.UTC(2026, 2, 3 - n) / 1000));
    for (const t of listed) {
      expect(t.history).toHaveLength(7);
      expect(t.history.slice(0, 2).map((d: Json) => d.day)).toEqual(days);
    }
    expect(byName.crowd.history.slice(0, 2).map((d: Json) => [d.uses, d.accounts])).toEqual([['0', '0'], ['20', '20']]);
    expect(byName.fresh.history.slice(0, 2).map((d: Json) => [d.uses, d.accounts])).toEqual([['12', '12'], ['0', '0']]);
    expect(byName.solo.history[1]).toMatchObject({ uses: '100', accounts: '1' });
  }, 300_000);
});
