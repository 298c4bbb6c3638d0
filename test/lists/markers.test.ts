/**
 * /api/v1/markers through the real server: two clients of one user (two tokens) saving and
 * reading each other's positions; `version` (Mastodon's lock_version: 1 after the first save,
 * +1 per change, unchanged when the same position is saved again) and `updated_at` from the
 * instance clock; unknown timelines ignored as Mastodon's MarkersController does; a timeline
 * without a usable last_read_id refused with nothing saved; JSON and form bodies; scopes.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';
import { createManualClock } from '../../src/lib/clock.ts';

const clock = createManualClock(new Date('2026-05-01T12:00:00.000Z'));
let roost: TestRoost;
let phone: TestUser;
let laptopToken: string;
const laptop = (path: string, init: { method?: string; body?: unknown } = {}) => apiRequest(roost, path, { ...init, token: laptopToken });

beforeAll(async () => {
  roost = await startTestRoost({}, { clock });
  phone = await createTestUser(roost, 'reader');
  laptopToken = (await issueAccessToken(roost.services, { applicationId: null, userId: phone.user.id, scopes: ['read', 'write'] })).token;
}, 60_000);
afterAll(async () => roost?.close());

const markerRows = async () =>
  roost.services.db.sql.query(`select timeline, last_read_id::text as last_read_id, version from markers order by timeline`);

describe('/api/v1/markers', () => {
  it('starts empty', async () => {
    expect((await phone.api('/api/v1/markers?timeline[]=home&timeline[]=notifications')).body).toEqual({});
    expect((await phone.api('/api/v1/markers')).body).toEqual({});
  });

  it('two clients of one user see each other, version moving on with each change', async () => {
    const first = await phone.api('/api/v1/markers', { method: 'POST', body: { home: { last_read_id: '103194548672408537' } } });
    expect([first.status, first.body]).toEqual([200, { home: { last_read_id: '103194548672408537', version: 1, updated_at: '2026-05-01T12:00:00.000Z' } }]);

    clock.advance(60_000);
    const form = new URLSearchParams({ 'home[last_read_id]': '103194548672408600', 'notifications[last_read_id]': '35098814' });
    const second = await laptop('/api/v1/markers', { method: 'POST', body: form });
    expect(second.body).toEqual({
      home: { last_read_id: '103194548672408600', version: 2, updated_at: '2026-05-01T12:01:00.000Z' },
      notifications: { last_read_id: '35098814', version: 1, updated_at: '2026-05-01T12:01:00.000Z' },
    });
    const seen = await phone.api('/api/v1/markers?timeline[]=home&timeline[]=notifications');
    expect(seen.body).toEqual(second.body);
    expect((await laptop('/api/v1/markers?timeline=notifications')).body).toEqual({ notifications: second.body.notifications });

    // The same position again changes nothing, not even updated_at.
    clock.advance(60_000);
    const same = await phone.api('/api/v1/markers', { method: 'POST', body: { home: { last_read_id: '103194548672408600' } } });
    expect(same.body).toEqual({ home: second.body.home });
    const back = await phone.api('/api/v1/markers', { method: 'POST', body: { home: { last_read_id: '103194548672408500' } } });
    expect(back.body).toEqual({ home: { last_read_id: '103194548672408500', version: 3, updated_at: '2026-05-01T12:02:00.000Z' } });
  });

  it('ignores unknown timelines, as Mastodon', async () => {
    const before = await markerRows();
    expect((await phone.api('/api/v1/markers?timeline[]=public&timeline[]=home')).body).toEqual({
      home: { last_read_id: '103194548672408500', version: 3, updated_at: '2026-05-01T12:02:00.000Z' },
    });
    const r = await phone.api('/api/v1/markers', { method: 'POST', body: { public: { last_read_id: '5' } } });
    expect([r.status, r.body]).toEqual([200, {}]);
    const mixed = await phone.api('/api/v1/markers', { method: 'POST', body: { lists: { last_read_id: '5' }, notifications: { last_read_id: '35098815' } } });
    expect(Object.keys(mixed.body)).toEqual(['notifications']);
    expect(mixed.body.notifications.version).toBe(2);
    expect((await markerRows()).map((m) => m.timeline)).toEqual(before.map((m) => m.timeline));
  });

  it('refuses a timeline without a usable last_read_id, saving nothing of the request', async () => {
    const before = await markerRows();
    for (const body of [
      { home: { last_read_id: '1' }, notifications: {} },
      { home: { last_read_id: 'abc' } },
      { home: { last_read_id: '99999999999999999999' } },
      { notifications: { last_read_id: ['1'] } },
    ]) {
      const r = await phone.api('/api/v1/markers', { method: 'POST', body });
      expect([r.status, r.body]).toEqual([422, { error: "Validation failed: Last read can't be blank" }]);
    }
    expect(await markerRows()).toEqual(before);
  });

  it('needs read:statuses to read and write:statuses to write; another user has their own', async () => {
    const other = await createTestUser(roost, 'other');
    expect((await other.api('/api/v1/markers?timeline[]=home')).body).toEqual({});
    const readOnly = await createTestUser(roost, 'readonly', { scopes: ['read:statuses'] });
    expect((await readOnly.api('/api/v1/markers?timeline[]=home')).status).toBe(200);
    const r = await readOnly.api('/api/v1/markers', { method: 'POST', body: { home: { last_read_id: '1' } } });
    expect([r.status, r.body]).toEqual([403, { error: 'This action is outside the authorized scopes' }]);
    expect((await apiRequest(roost, '/api/v1/markers')).status).toBe(401);
  });
});
