/**
 * Timed mutes on an instance whose clock the test drives: the mute shows its expiry, holds until
 * then, and a job due at that time removes it (through the service, so a mute renewed meanwhile
 * stays). Bad durations are refused with a 422 and mute nothing.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { createManualClock } from '../../src/lib/clock.ts';

const clock = createManualClock(new Date('2026-03-01T12:00:00.000Z'));
let roost: TestRoost;

beforeAll(async () => {
  roost = await startTestRoost({}, { clock });
});
afterAll(async () => roost?.close());

const rel = async (viewer: TestUser, target: TestUser) => (await viewer.api(`/api/v1/accounts/relationships?id[]=${target.account.id}`)).body[0];
const muteRows = async (viewer: TestUser) =>
  (await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from mutes where account_id = $1`, [viewer.account.id]))[0].n;

describe('timed mutes', () => {
  it('expires a mute by itself when its duration has passed', async () => {
    const a = await createTestUser(roost, 'quinn');
    const b = await createTestUser(roost, 'rory');
    const res = await a.api(`/api/v1/accounts/${b.account.id}/mute`, { body: { duration: 3600, notifications: false } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: b.account.id, muting: true, muting_notifications: false });
    const mutes = await a.api('/api/v1/mutes');
    expect(mutes.body.map((x: { id: string }) => x.id)).toEqual([b.account.id]);
    expect(mutes.body[0].mute_expires_at).toBe(new Date(clock.now().getTime() + 3600_000).toISOString());

    clock.advance(3599_000);
    expect((await rel(a, b)).muting).toBe(true);
    expect(await muteRows(a)).toBe(1);

    clock.advance(2_000);
    // The job due at the expiry runs (workers poll at least every second) and removes the mute.
    await eventually(async () => (await muteRows(a)) === 0, 10_000, 'the expiry job');
    expect(await rel(a, b)).toMatchObject({ muting: false, muting_notifications: false });
    expect((await a.api('/api/v1/mutes')).body).toEqual([]);
  });

  it('keeps a mute renewed before its first expiry', async () => {
    const a = await createTestUser(roost, 'sage');
    const b = await createTestUser(roost, 'tate');
    const c = await createTestUser(roost, 'uma');
    await a.api(`/api/v1/accounts/${b.account.id}/mute`, { body: { duration: 60 } });
    // Renewed as indefinite: the first expiry job must leave it alone.
    await a.api(`/api/v1/accounts/${b.account.id}/mute`, { body: { duration: 0 } });
    // A second timed mute, whose job is the sign that the first job's time has been dealt with.
    await a.api(`/api/v1/accounts/${c.account.id}/mute`, { body: { duration: 60 } });
    expect(await muteRows(a)).toBe(2);
    clock.advance(61_000);
    await eventually(async () => (await muteRows(a)) === 1, 10_000, 'the second expiry job');
    await eventually(
      async () => (await roost.services.db.sql.query(`select 1 from jobs where payload::text like $1`, [`%${a.account.id}%`])).length === 0,
      10_000,
      'both expiry jobs to finish',
    );
    expect(await rel(a, b)).toMatchObject({ muting: true, muting_notifications: true });
    expect((await a.api('/api/v1/mutes')).body.map((x: { id: string; mute_expires_at: string | null }) => [x.id, x.mute_expires_at])).toEqual([
      [b.account.id, null],
    ]);
  });

  it('refuses a bad duration with a 422 and mutes nothing', async () => {
    const a = await createTestUser(roost, 'vic');
    const b = await createTestUser(roost, 'wes');
    for (const duration of ['soon', -5, 367 * 24 * 3600]) {
      const res = await a.api(`/api/v1/accounts/${b.account.id}/mute`, { body: { duration } });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatch(/^Validation failed: Duration /);
      expect(res.body.details.duration[0].error).toBe('ERR_INVALID');
    }
    expect(await muteRows(a)).toBe(0);
    expect((await rel(a, b)).muting).toBe(false);
  });
});
