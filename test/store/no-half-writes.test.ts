/**
 * One use case, one transaction: an update_credentials that fails part-way (the avatar cannot be
 * stored: its directory is blocked by a file) changes nothing — not the lock (which would have
 * unlocked the account and accepted its pending request), not the display name, no event in the
 * outbox, no job queued.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, relationshipOf } from '../helpers/auth.ts';

let roost: TestRoost;
beforeAll(async () => {
  roost = await startTestRoost();
});
afterAll(async () => roost?.close());

describe('update_credentials that fails', () => {
  it('changes nothing at all', async () => {
    const kim = await createTestUser(roost, 'hw_kim');
    const lou = await createTestUser(roost, 'hw_lou');
    expect((await kim.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true, display_name: 'Kim' } })).status).toBe(200);
    expect((await lou.api(`/api/v1/accounts/${kim.account.id}/follow`, { method: 'POST' })).body.requested).toBe(true);
    await settled(roost);
    const count = async (table: string) => (await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n;
    const [eventsBefore, jobsBefore] = [await count('outbox_events'), await count('jobs')];
    const [rowBefore] = await roost.services.db.sql.query(`select * from accounts where id = $1`, [kim.account.id]);

    // Where the avatar would go is a file: storing it fails after the lock step ran.
    const dir = path.join(roost.dataDir, 'media', 'accounts', 'avatars');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, kim.account.id), 'in the way');
    const png = await sharp({ create: { width: 4, height: 4, channels: 4, background: '#c8c8c8' } }).png().toBuffer();
    const form = new FormData();
    form.append('locked', 'false');
    form.append('display_name', 'Someone else');
    form.append('avatar', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'me.png');
    const res = await kim.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: form });
    expect(res.status).toBe(500);
    expect(typeof res.body.error).toBe('string');

    const [rowAfter] = await roost.services.db.sql.query(`select * from accounts where id = $1`, [kim.account.id]);
    expect(rowAfter).toEqual(rowBefore);
    const creds = (await kim.api('/api/v1/accounts/verify_credentials')).body;
    expect(creds).toMatchObject({ locked: true, display_name: 'Kim', source: { follow_requests_count: 1 } });
    expect(await relationshipOf(lou, kim.account.id)).toMatchObject({ following: false, requested: true });
    expect(await count('outbox_events')).toBe(eventsBefore);
    expect(await count('jobs')).toBe(jobsBefore);
  });
});
