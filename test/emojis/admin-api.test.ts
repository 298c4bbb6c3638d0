/**
 * /api/v1/admin/custom_emojis through the real server: an Admin uploads, lists (Link headers),
 * shows, recategorises, hides, disables and removes local emojis; a user without the permission
 * is refused; a bad upload or an unknown category id is a 422 and writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let admin: TestUser;
let plain: TestUser;
const SCOPES = ['read', 'write', 'admin:read', 'admin:write'];

async function upload(shortcode: string, body: Uint8Array | string, extra: Record<string, string> = {}) {
  const form = new FormData();
  form.append('shortcode', shortcode);
  form.append('image', new Blob([body as Uint8Array<ArrayBuffer>], { type: 'image/png' }), 'e.png');
  for (const [k, v] of Object.entries(extra)) form.append(k, v);
  return admin.api('/api/v1/admin/custom_emojis', { method: 'POST', body: form });
}
const png = async (color: string) => new Uint8Array(await sharp({ create: { width: 20, height: 20, channels: 4, background: color } }).png().toBuffer());
const tables = async () => roost.services.db.sql.query(`select (select count(*)::int from custom_emojis) as e, (select count(*)::int from custom_emoji_categories) as c`);

beforeAll(async () => {
  roost = await startTestRoost();
  admin = await createTestUser(roost, 'boss', { role: 'Admin', scopes: SCOPES });
  plain = await createTestUser(roost, 'plain', { scopes: SCOPES });
}, 60_000);
afterAll(async () => roost?.close());

describe('the custom emojis admin API', () => {
  it('uploads, lists, shows, changes and removes local emojis', async () => {
    const a = await upload('wave', await png('#ff8800'), { category: 'Hands' });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      shortcode: 'wave',
      url: expect.stringMatching(new RegExp(`^${roost.at('/system/custom_emojis/')}\\d+/original/[0-9a-f]{16}\\.png$`)),
      static_url: expect.stringMatching(/\/static\/[0-9a-f]{16}\.png$/),
      visible_in_picker: true,
      category: 'Hands',
      category_id: expect.stringMatching(/^\d+$/),
      disabled: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const b = await upload('nod', await png('#0088ff'), { visible_in_picker: 'false' });
    expect([b.status, b.body.visible_in_picker, b.body.category]).toEqual([200, false, null]);
    const page = await admin.api('/api/v1/admin/custom_emojis?limit=1');
    expect(page.body.map((e: { shortcode: string }) => e.shortcode)).toEqual(['nod']);
    expect(page.headers.get('link')).toContain(`max_id=${b.body.id}`);
    expect((await admin.api(`/api/v1/admin/custom_emojis/${a.body.id}`)).body.shortcode).toBe('wave');

    const moved = await admin.api(`/api/v1/admin/custom_emojis/${b.body.id}`, { method: 'PATCH', body: { category_id: a.body.category_id, visible_in_picker: true } });
    expect([moved.status, moved.body.category, moved.body.visible_in_picker]).toEqual([200, 'Hands', true]);
    const off = await admin.api(`/api/v1/admin/custom_emojis/${a.body.id}`, { method: 'PUT', body: { disabled: true, category: '' } });
    expect([off.body.disabled, off.body.category]).toEqual([true, null]);
    expect((await apiRequest(roost, '/api/v1/custom_emojis')).body.map((e: { shortcode: string }) => e.shortcode)).toEqual(['nod']);
    expect((await admin.api(`/api/v1/admin/custom_emojis/${a.body.id}`, { method: 'DELETE' })).body).toEqual({});
    expect((await admin.api(`/api/v1/admin/custom_emojis/${a.body.id}`)).status).toBe(404);
    expect((await fetch(a.body.url)).status).toBe(404);
  });

  it('refuses users without the permission, bad uploads and an unknown category, writing nothing', async () => {
    expect((await plain.api('/api/v1/admin/custom_emojis')).status).toBe(403);
    const before = await tables();
    const [nod] = (await admin.api('/api/v1/admin/custom_emojis')).body;
    const unknown = await admin.api(`/api/v1/admin/custom_emojis/${nod.id}`, { method: 'PATCH', body: { category_id: '12345', disabled: true } });
    expect([unknown.status, unknown.body.error]).toEqual([422, 'Validation failed: Category does not exist']);
    for (const outOfRange of ['9223372036854775808', '9999999999999999999']) {
      const far = await admin.api(`/api/v1/admin/custom_emojis/${nod.id}`, { method: 'PATCH', body: { category_id: outOfRange, disabled: true } });
      expect([far.status, far.body.error]).toEqual([422, 'Validation failed: Category does not exist']);
    }
    expect((await admin.api(`/api/v1/admin/custom_emojis/${nod.id}`)).body.disabled).toBe(false);
    expect((await upload('nod', await png('#123456'))).body.error).toBe('Validation failed: Shortcode has already been taken');
    expect((await upload('x', await png('#123456'))).status).toBe(422);
    expect((await upload('svg', '<svg onload=alert(1)>')).body.error).toBe('Validation failed: Image must be a PNG, GIF or WebP image');
    const big = new Uint8Array(300 * 1024);
    big.set(await png('#000000'));
    expect((await upload('big', big)).body.error).toBe('Validation failed: Image must be less than 256 KB');
    const noImage = await admin.api('/api/v1/admin/custom_emojis', { method: 'POST', body: { shortcode: 'none' } });
    expect([noImage.status, noImage.body.error]).toEqual([422, "Validation failed: Image can't be blank"]);
    expect(await tables()).toEqual(before);
  });
});
