/**
 * Measures, dimensions and retention (POST /api/v1/admin/measures|dimensions|retention) through the
 * real server, on a controlled clock: users sign up and are active on chosen days, post, favourite,
 * reply, report; a remote server's account and statuses stand in as rows. Mastodon's shapes, the
 * figures per day, totals and previous totals, cohorts with `rate`, and the refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { createManualClock } from '../../src/lib/clock.ts';
import { forgetViewer } from '../../src/services/reads/viewer.ts';

const clock = createManualClock(new Date('2026-02-20T10:00:00.000Z'));
let roost: TestRoost;
let admin: TestUser;
let moderator: TestUser;
let plain: TestUser;
let ann: TestUser;
let ben: TestUser;
let cat: TestUser;
let tagId: string;

const at = (iso: string) => {
  clock.set(new Date(iso));
  forgetViewer(roost.services);
};
const dates = (from: string, n: number) => Array.from({ length: n }, (_, i) => `${new Date(Date.parse(from) + i * 86_400_000).toISOString().slice(0, 10)}T00:00:00Z`);
const series = (from: string, values: number[]) => dates(from, values.length).map((date, i) => ({ date, value: String(values[i]) }));

beforeAll(async () => {
  roost = await startTestRoost({}, { clock });
  const scopes = ['read', 'write', 'admin:read', 'admin:write'];
  admin = await createTestUser(roost, 'dashadmin', { role: 'Admin', scopes });
  moderator = await createTestUser(roost, 'dashmod', { role: 'Moderator', scopes });
  plain = await createTestUser(roost, 'dashplain', { scopes });

  // 03-01: ann and ben sign up; ann posts (#birds, English) and is active.
  at('2026-03-01T09:00:00Z');
  ann = await createTestUser(roost, 'ann', { locale: 'en' });
  ben = await createTestUser(roost, 'ben', { locale: 'de' });
  const post = await ann.api('/api/v1/statuses', { body: { status: 'Look #birds', language: 'en' } });
  expect(post.status).toBe(200);
  const tag = await ann.api('/api/v1/tags/birds');
  tagId = tag.body.id;
  // 03-02: cat signs up; ben favourites and boosts ann's post, cat replies; ben reports ann. A remote
  // server's account appears with two statuses (one with #birds, in French).
  at('2026-03-02T09:00:00Z');
  cat = await createTestUser(roost, 'cat', { locale: 'en' });
  expect((await ben.api(`/api/v1/statuses/${post.body.id}/favourite`, { method: 'POST' })).status).toBe(200);
  expect((await ben.api(`/api/v1/statuses/${post.body.id}/reblog`, { method: 'POST' })).status).toBe(200);
  expect((await cat.api('/api/v1/statuses', { body: { status: '@ann nice', in_reply_to_id: post.body.id } })).status).toBe(200);
  expect((await ben.api('/api/v1/reports', { body: { account_id: ann.account.id, comment: 'hm' } })).status).toBe(200);
  const sql = roost.services.db.sql;
  const now = clock.now();
  const remote = roost.services.ids.next();
  await sql.query(
    `insert into accounts (id, username, domain, uri, url, inbox_url, created_at, updated_at)
     values ($1, 'rex', 'far.example', 'https://far.example/users/rex', 'https://far.example/@rex', 'https://far.example/users/rex/inbox', $2, $2)`,
    [remote, now],
  );
  for (const [n, lang, tagged] of [[1, 'fr', true], [2, 'fr', false]] as const) {
    const id = roost.services.ids.next();
    await sql.query(
      `insert into statuses (id, account_id, uri, url, content, visibility, language, local, created_at, updated_at)
       values ($1, $2, $3, $3, 'x', 'public', $4, false, $5, $5)`,
      [id, remote, `https://far.example/s/${n}`, lang, now],
    );
    if (tagged) await sql.query(`insert into statuses_tags (status_id, tag_id) values ($1, $2)`, [id, tagId]);
  }
  // 03-03: ann is active again.
  at('2026-03-03T09:00:00Z');
  expect((await ann.api('/api/v1/accounts/verify_credentials')).status).toBe(200);
  await settled(roost);
  // The admin asks later (its own requests count as activity on the day they are made).
  at('2026-03-10T09:00:00Z');
});
afterAll(async () => {
  await roost?.close();
});

const range = { start_at: '2026-03-01', end_at: '2026-03-03T18:00:00Z' };

describe('POST /api/v1/admin/measures', () => {
  it('answers Mastodon’s measures per day, with totals and previous totals, in the order asked, unknown keys left out', async () => {
    const res = await admin.api('/api/v1/admin/measures', {
      body: { ...range, keys: ['new_users', 'no_such_key', 'active_users', 'interactions', 'opened_reports', 'resolved_reports'] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      // The previous period (02-27..03-01) shares the period's first day, as Mastodon's does.
      { key: 'new_users', unit: null, total: '3', previous_total: '2', data: series('2026-03-01', [2, 1, 0]) },
      // ann on 03-01 (her post), ben and cat on 03-02, ann on 03-03.
      { key: 'active_users', unit: null, total: '3', previous_total: '1', data: series('2026-03-01', [1, 2, 1]) },
      // A favourite, a boost and a reply, all on ann's local status.
      { key: 'interactions', unit: null, total: '3', previous_total: '0', data: series('2026-03-01', [0, 3, 0]) },
      { key: 'opened_reports', unit: null, total: '1', previous_total: '0', data: series('2026-03-01', [0, 1, 0]) },
      { key: 'resolved_reports', unit: null, total: '0', previous_total: '0', data: series('2026-03-01', [0, 0, 0]) },
    ]);
  });

  it('counts the previous period (Mastodon’s: both ends moved back by the length)', async () => {
    const res = await admin.api('/api/v1/admin/measures', { body: { start_at: '2026-03-03', end_at: '2026-03-04', keys: ['new_users', 'active_users'] } });
    expect(res.body).toEqual([
      // Previous period: 03-02..03-03.
      { key: 'new_users', unit: null, total: '0', previous_total: '1', data: series('2026-03-03', [0, 0]) },
      { key: 'active_users', unit: null, total: '1', previous_total: '3', data: series('2026-03-03', [1, 0]) },
    ]);
  });

  it('answers the tag and instance keys with their params; instance totals are of all time, without previous_total', async () => {
    const res = await admin.api('/api/v1/admin/measures', {
      body: {
        ...range,
        keys: ['tag_uses', 'tag_accounts', 'tag_servers', 'instance_accounts', 'instance_statuses', 'instance_follows', 'instance_followers', 'instance_reports', 'instance_media_attachments'],
        tag_uses: { id: tagId },
        tag_accounts: { id: tagId },
        tag_servers: { id: tagId },
        instance_accounts: { domain: 'far.example' },
        instance_statuses: { domain: 'FAR.example' },
        instance_follows: { domain: 'far.example' },
        instance_followers: { domain: 'far.example' },
        instance_reports: { domain: 'far.example' },
        instance_media_attachments: { domain: 'far.example' },
      },
    });
    expect(res.status).toBe(200);
    const byKey = Object.fromEntries((res.body as any[]).map((m) => [m.key, m]));
    expect(byKey.tag_uses).toEqual({ key: 'tag_uses', unit: null, total: '2', previous_total: '1', data: series('2026-03-01', [1, 1, 0]) });
    expect(byKey.tag_accounts).toMatchObject({ total: '2', data: series('2026-03-01', [1, 1, 0]) });
    expect(byKey.tag_servers).toMatchObject({ total: '1', data: series('2026-03-01', [0, 1, 0]) });
    expect(byKey.instance_accounts).toEqual({ key: 'instance_accounts', unit: null, total: '1', data: series('2026-03-01', [0, 1, 0]) });
    expect(byKey.instance_statuses).toEqual({ key: 'instance_statuses', unit: null, total: '2', data: series('2026-03-01', [0, 2, 0]) });
    expect(byKey.instance_followers).toMatchObject({ total: '0' });
    expect(byKey.instance_reports).toMatchObject({ total: '0' });
    expect(byKey.instance_media_attachments).toEqual({
      key: 'instance_media_attachments',
      unit: 'bytes',
      total: '0',
      human_value: '0 Bytes',
      data: dates('2026-03-01', 3).map((date) => ({ date, value: '0', human_value: '0 Bytes' })),
    });
    expect(byKey.instance_follows).toMatchObject({ total: '0' });
  });

  it('refuses what Mastodon refuses, and Roost’s own bad periods, writing nothing', async () => {
    expect(await admin.api('/api/v1/admin/measures', { body: { ...range, keys: ['tag_uses'] } })).toMatchObject({
      status: 400,
      body: { error: 'param is missing or the value is empty: tag_uses' },
    });
    expect((await admin.api('/api/v1/admin/measures', { body: { ...range, keys: ['tag_uses'], tag_uses: { id: '42' } } })).status).toBe(404);
    expect(await admin.api('/api/v1/admin/measures', { body: { start_at: '2026-03-05', end_at: '2026-03-01', keys: ['new_users'] } })).toMatchObject({
      status: 422,
      body: { error: 'end_at must not be before start_at' },
    });
    expect(await admin.api('/api/v1/admin/measures', { body: { start_at: '2026-02-30', end_at: '2026-03-01', keys: ['new_users'] } })).toMatchObject({
      status: 422,
      body: { error: 'start_at is not a valid date' },
    });
    expect((await admin.api('/api/v1/admin/measures', { body: { end_at: '2026-03-01', keys: ['new_users'] } })).status).toBe(400);
    expect((await admin.api('/api/v1/admin/measures', { body: { ...range } })).body).toEqual([]);
    expect(await plain.api('/api/v1/admin/measures', { body: { ...range, keys: ['new_users'] } })).toMatchObject({ status: 403, body: { error: 'This action is not allowed' } });
    expect((await moderator.api('/api/v1/admin/measures', { body: { ...range, keys: ['new_users'] } })).status).toBe(200);
  });
});

describe('POST /api/v1/admin/dimensions', () => {
  it('answers the top values with human keys, and the stack’s sizes and versions', async () => {
    const res = await admin.api('/api/v1/admin/dimensions', {
      body: {
        ...range,
        limit: 5,
        keys: ['languages', 'sources', 'servers', 'space_usage', 'software_versions', 'tag_servers', 'tag_languages', 'instance_accounts', 'instance_languages', 'nope'],
        tag_servers: { id: tagId },
        tag_languages: { id: tagId },
        instance_accounts: { domain: 'far.example' },
        instance_languages: { domain: 'far.example' },
      },
    });
    expect(res.status).toBe(200);
    const byKey = Object.fromEntries((res.body as any[]).map((d) => [d.key, d.data]));
    expect(Object.keys(byKey)).toEqual(['languages', 'sources', 'servers', 'space_usage', 'software_versions', 'tag_servers', 'tag_languages', 'instance_accounts', 'instance_languages']);
    expect(byKey.languages).toEqual([
      { key: 'en', human_key: 'English', value: '2' },
      { key: 'de', human_key: 'German', value: '1' },
    ]);
    expect(byKey.sources).toEqual([{ key: 'Web', human_key: 'Web', value: '2' }]);
    expect(byKey.servers).toEqual([{ key: 'far.example', human_key: 'far.example', value: '2' }]);
    expect(byKey.space_usage).toEqual([
      { key: 'postgresql', human_key: 'PostgreSQL', value: expect.stringMatching(/^\d+$/), unit: 'bytes', human_value: expect.stringMatching(/ (MB|GB|KB)$/) },
      { key: 'media', human_key: 'Media storage', value: '0', unit: 'bytes', human_value: '0 Bytes' },
    ]);
    expect(byKey.software_versions.slice(0, 3)).toEqual([
      { key: 'roost', human_key: 'Roost', value: roost.services.version, human_value: roost.services.version },
      { key: 'nodejs', human_key: 'Node.js', value: process.versions.node, human_value: process.versions.node },
      { key: 'postgresql', human_key: 'PostgreSQL', value: expect.stringMatching(/^\d+(\.\d+)?/), human_value: expect.any(String) },
    ]);
    expect(byKey.tag_servers).toEqual([{ key: 'far.example', human_key: 'far.example', value: '1' }]);
    expect(byKey.tag_languages).toEqual([
      { key: 'en', human_key: 'English', value: '1' },
      { key: 'fr', human_key: 'French', value: '1' },
    ]);
    expect(byKey.instance_accounts).toEqual([]);
    expect(byKey.instance_languages).toEqual([{ key: 'fr', human_key: 'French', value: '2' }]);
  });
});

describe('POST /api/v1/admin/retention', () => {
  it('answers daily cohorts with rate (not percent)', async () => {
    const res = await admin.api('/api/v1/admin/retention', { body: { ...range, frequency: 'day' } });
    expect(res.status).toBe(200);
    const d = (day: string) => `${day}T00:00:00+00:00`;
    expect(res.body).toEqual([
      {
        period: d('2026-03-01'),
        frequency: 'day',
        // ann (last active 03-03) and ben (03-02).
        data: [
          { date: d('2026-03-01'), rate: 1, value: '2' },
          { date: d('2026-03-02'), rate: 1, value: '2' },
          { date: d('2026-03-03'), rate: 0.5, value: '1' },
        ],
      },
      {
        period: d('2026-03-02'),
        frequency: 'day',
        data: [
          { date: d('2026-03-02'), rate: 1, value: '1' },
          { date: d('2026-03-03'), rate: 0, value: '0' },
        ],
      },
      { period: d('2026-03-03'), frequency: 'day', data: [{ date: d('2026-03-03'), rate: 0, value: '0' }] },
    ]);
  });

  it('answers monthly cohorts, and any other frequency as daily', async () => {
    const month = await admin.api('/api/v1/admin/retention', { body: { start_at: '2026-03-01', end_at: '2026-03-31', frequency: 'month' } });
    expect(month.body).toEqual([{ period: '2026-03-01T00:00:00+00:00', frequency: 'month', data: [{ date: '2026-03-01T00:00:00+00:00', rate: 1, value: '3' }] }]);
    const other = await admin.api('/api/v1/admin/retention', { body: { start_at: '2026-03-01', end_at: '2026-03-01', frequency: 'year' } });
    expect(other.body).toEqual([{ period: '2026-03-01T00:00:00+00:00', frequency: 'day', data: [{ date: '2026-03-01T00:00:00+00:00', rate: 1, value: '2' }] }]);
    expect((await admin.api('/api/v1/admin/retention', { body: { start_at: '2026-03-02', end_at: '2026-03-01' } })).status).toBe(422);
    expect((await plain.api('/api/v1/admin/retention', { body: range })).status).toBe(403);
  });
});
