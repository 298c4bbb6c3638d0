/**
 * update_credentials in JSON, urlencoded (Rails nested keys) and multipart (avatar/header files),
 * DELETE /api/v1/profile/avatar|header, and every refusal: one 422 with Mastodon's details and
 * nothing changed.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import sharp from 'sharp';
import { AccountSchema } from '../../src/db/entities/index.ts';

let roost: TestRoost;
let me: TestUser;
beforeAll(async () => {
  roost = await startTestRoost();
  me = await createTestUser(roost, 'prof');
});
afterAll(async () => roost?.close());

// 4×4 pixels, every channel 200 (alpha too), and a 1×1 GIF.
const png = await sharp(Buffer.alloc(4 * 4 * 4, 200), { raw: { width: 4, height: 4, channels: 4 } }).png().toBuffer();
const gif = await sharp({ create: { width: 1, height: 1, channels: 3, background: { r: 0, g: 0, b: 0 } } }).gif().toBuffer();
const update = (user: TestUser, body: unknown, method = 'PATCH') => user.api('/api/v1/accounts/update_credentials', { method, body });

describe('update_credentials', () => {
  it('takes JSON: names, bio and fields rendered as Mastodon renders them, flags, and source', async () => {
    const res = await update(me, {
      display_name: 'Pro F',
      note: 'Hello <you>\nSee https://example.com/a/very/long/path/that/goes/on/and/on.\n\nBye',
      bot: true,
      discoverable: true,
      indexable: true,
      hide_collections: true,
      fields_attributes: [{ name: ' Site ', value: 'https://prof.example' }, { name: '', value: '' }, { name: 'Pronouns', value: 'she/her' }],
      source: { privacy: 'unlisted', sensitive: true, language: 'de' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ display_name: 'Pro F', bot: true, discoverable: true, indexable: true, noindex: false, hide_collections: true });
    expect(res.body.note).toBe(
      '<p>Hello &lt;you&gt;<br />See <a href="https://example.com/a/very/long/path/that/goes/on/and/on" target="_blank" rel="nofollow noopener" translate="no">' +
        '<span class="invisible">https://</span><span class="ellipsis">example.com/a/very/long/path/t</span><span class="invisible">hat/goes/on/and/on</span></a>.</p><p>Bye</p>',
    );
    expect(res.body.fields).toEqual([
      {
        name: 'Site',
        value:
          '<a href="https://prof.example" target="_blank" rel="nofollow noopener me" translate="no"><span class="invisible">https://</span><span class="">prof.example</span><span class="invisible"></span></a>',
        verified_at: null,
      },
      { name: 'Pronouns', value: 'she/her', verified_at: null },
    ]);
    expect(res.body.source).toEqual({
      privacy: 'unlisted',
      sensitive: true,
      language: 'de',
      note: 'Hello <you>\nSee https://example.com/a/very/long/path/that/goes/on/and/on.\n\nBye',
      fields: [
        { name: 'Site', value: 'https://prof.example', verified_at: null },
        { name: 'Pronouns', value: 'she/her', verified_at: null },
      ],
      follow_requests_count: 0,
      hide_collections: true,
      discoverable: true,
      indexable: true,
      attribution_domains: [],
      quote_policy: 'public',
    });
    // What others see is the same Account.
    const seen = await apiRequest(roost, `/api/v1/accounts/${me.account.id}`);
    expect(seen.body.fields).toEqual(res.body.fields);
    expect(seen.body.note).toBe(res.body.note);
    // bot: false puts the actor type back.
    expect((await update(me, { bot: false })).body.bot).toBe(false);
  });

  it('takes urlencoded Rails-style nested keys (any indexes, in order), with PUT too', async () => {
    const body = new URLSearchParams({
      'fields_attributes[3][name]': 'A',
      'fields_attributes[3][value]': '1',
      'fields_attributes[9][name]': 'B',
      'fields_attributes[9][value]': '2',
      'source[privacy]': 'private',
      'source[sensitive]': '0',
      locked: 'false',
      discoverable: '0',
    });
    const res = await update(me, body, 'PUT');
    expect(res.status).toBe(200);
    expect(res.body.fields).toEqual([
      { name: 'A', value: '1', verified_at: null },
      { name: 'B', value: '2', verified_at: null },
    ]);
    expect(res.body.source).toMatchObject({ privacy: 'private', sensitive: false });
    expect(res.body).toMatchObject({ discoverable: false, noindex: true, locked: false, display_name: 'Pro F' });
    // An empty fields_attributes hash clears the fields; absent ones leave them alone.
    expect((await update(me, { display_name: 'Still' })).body.fields).toHaveLength(2);
    expect((await update(me, { fields_attributes: {} })).body.fields).toEqual([]);
  });

  it('stores uploaded images under the data directory, serves them, replaces and removes them', async () => {
    const form = new FormData();
    form.append('avatar', new Blob([new Uint8Array(png)], { type: 'application/octet-stream' }), 'me.png');
    form.append('header', new Blob([new Uint8Array(gif)], { type: 'image/gif' }), 'h.gif');
    form.append('display_name', 'With Pictures');
    const res = await update(me, form);
    expect(res.status).toBe(200);
    expect(res.body.display_name).toBe('With Pictures');
    expect(res.body.avatar).toMatch(new RegExp(`^${roost.url}/system/accounts/avatars/${me.account.id}/[0-9a-f]{24}\\.png$`));
    expect(res.body.avatar_static).toBe(res.body.avatar);
    expect(res.body.header).toMatch(new RegExp(`^${roost.url}/system/accounts/headers/${me.account.id}/[0-9a-f]{24}\\.gif$`));
    const file = await fetch(res.body.avatar);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    // Re-encoded, not stored as sent: the same pixels come back.
    const served = sharp(Buffer.from(await file.arrayBuffer()));
    expect(await served.metadata()).toMatchObject({ format: 'png', width: 4, height: 4 });
    expect((await served.ensureAlpha().raw().toBuffer()).equals(Buffer.alloc(64, 200))).toBe(true);
    expect((await fetch(res.body.header)).headers.get('content-type')).toBe('image/gif');
    const avatarDir = path.join(roost.dataDir, 'media', 'accounts', 'avatars', me.account.id);
    expect(readdirSync(avatarDir)).toEqual([path.basename(res.body.avatar)]);

    // A new avatar replaces the old file.
    const again = new FormData();
    again.append('avatar', new Blob([new Uint8Array(gif)]), 'second.gif');
    const replaced = await update(me, again);
    expect(replaced.body.avatar).not.toBe(res.body.avatar);
    expect((await fetch(res.body.avatar)).status).toBe(404);
    expect(readdirSync(avatarDir)).toEqual([path.basename(replaced.body.avatar)]);
    expect(replaced.body.header).toBe(res.body.header);

    const removed = await me.api('/api/v1/profile/avatar', { method: 'DELETE' });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ avatar: `${roost.url}/avatars/original/missing.png`, avatar_static: `${roost.url}/avatars/original/missing.png`, header: res.body.header });
    expect(removed.body.source).toBeDefined();
    expect((await fetch(replaced.body.avatar)).status).toBe(404);
    expect(existsSync(avatarDir)).toBe(false);
    const noHeader = await me.api('/api/v1/profile/header', { method: 'DELETE' });
    expect(noHeader.body.header).toBe(`${roost.url}/headers/original/missing.png`);
    // Deleting what is not there still answers the CredentialAccount.
    expect((await me.api('/api/v1/profile/header', { method: 'DELETE' })).status).toBe(200);
    expect((await fetch(`${roost.url}/system/accounts/avatars/../../../secrets.json`)).status).toBe(404);
  });

  it('refuses what Mastodon refuses, all problems in one 422, and changes nothing', async () => {
    const user = await createTestUser(roost, 'strict');
    await update(user, { display_name: 'Before', note: 'before', fields_attributes: [{ name: 'Keep', value: 'me' }] });

    const long = await update(user, { display_name: 'x'.repeat(31), note: 'n'.repeat(501) });
    expect(long).toMatchObject({
      status: 422,
      body: {
        error: 'Validation failed: Display name is too long (maximum is 30 characters), Note is too long (maximum is 500 characters)',
        details: {
          display_name: [{ error: 'ERR_TOO_LONG', description: 'is too long (maximum is 30 characters)' }],
          note: [{ error: 'ERR_TOO_LONG', description: 'is too long (maximum is 500 characters)' }],
        },
      },
    });
    const fields = await update(user, {
      fields_attributes: [1, 2, 3, 4, 5].map((i) => ({ name: i === 5 ? '' : `n${i}`, value: i === 1 ? 'v'.repeat(256) : 'v' })),
      source: { language: 'xx', privacy: 'direct' },
    });
    expect(fields.status).toBe(422);
    expect(fields.body.details).toEqual({
      fields: [
        { error: 'ERR_TOO_LONG', description: 'is too long (maximum is 4 fields)' },
        { error: 'ERR_TOO_LONG', description: 'names and values are limited to 255 characters' },
        { error: 'ERR_FIELDS_WITH_VALUES_MISSING_LABELS', description: 'contains values with missing labels' },
      ],
      'source.privacy': [{ error: 'ERR_INCLUSION', description: 'is not included in the list' }],
      'source.language': [{ error: 'ERR_INCLUSION', description: 'is not included in the list' }],
    });

    const notImage = new FormData();
    notImage.append('header', new Blob([new TextEncoder().encode('not an image at all')], { type: 'image/png' }), 'x.png');
    notImage.append('display_name', 'Changed?');
    const bad = await update(user, notImage);
    expect(bad).toMatchObject({
      status: 422,
      body: {
        error: 'Validation failed: Header must be a PNG, JPEG, GIF or WebP image',
        details: { header: [{ error: 'ERR_INVALID', description: 'must be a PNG, JPEG, GIF or WebP image' }] },
      },
    });
    const huge = new Uint8Array(16 * 1024 * 1024 + 1);
    huge.set(png);
    const tooBig = new FormData();
    tooBig.append('avatar', new Blob([huge], { type: 'image/png' }), 'big.png');
    expect(await update(user, tooBig)).toMatchObject({ status: 422, body: { details: { avatar: [{ error: 'ERR_LESS_THAN', description: 'must be less than 16 MB' }] } } });

    const after = await user.api('/api/v1/accounts/verify_credentials');
    expect(after.body).toMatchObject({ display_name: 'Before', note: '<p>before</p>', fields: [{ name: 'Keep', value: 'me', verified_at: null }], avatar: `${roost.url}/avatars/original/missing.png` });
    expect(existsSync(path.join(roost.dataDir, 'media', 'accounts', 'avatars', user.account.id))).toBe(false);

    // A URL in a bio counts 23 characters, however long it is.
    const withUrl = await update(user, { note: `${'n'.repeat(470)} https://example.com/${'p'.repeat(100)}` });
    expect(withUrl.status).toBe(200);
  });

  it('keeps the verification of a field whose value did not change', async () => {
    const user = await createTestUser(roost, 'verified');
    await update(user, { fields_attributes: [{ name: 'Web', value: 'https://kept.example' }] });
    const em = roost.services.db.em();
    const account = await em.findOneOrFail(AccountSchema, { id: user.account.id });
    account.fields = [{ name: 'Web', value: 'https://kept.example', verified_at: '2026-02-03T04:05:06.000Z' }];
    await em.flush();
    const res = await update(user, { fields_attributes: [{ name: 'Other', value: 'x' }, { name: 'Renamed', value: 'https://kept.example' }] });
    expect(res.body.source.fields).toEqual([
      { name: 'Other', value: 'x', verified_at: null },
      { name: 'Renamed', value: 'https://kept.example', verified_at: '2026-02-03T04:05:06.000Z' },
    ]);
    const changed = await update(user, { fields_attributes: [{ name: 'Renamed', value: 'https://other.example' }] });
    expect(changed.body.source.fields).toEqual([{ name: 'Renamed', value: 'https://other.example', verified_at: null }]);
  });

  it('needs write:accounts', async () => {
    const reader = await createTestUser(roost, 'onlyreads', { scopes: ['read'] });
    expect(await update(reader, { display_name: 'No' })).toMatchObject({ status: 403, body: { error: 'This action is outside the authorized scopes' } });
    expect(await reader.api('/api/v1/profile/avatar', { method: 'DELETE' })).toMatchObject({ status: 403, body: { error: 'This action is outside the authorized scopes' } });
    expect((await apiRequest(roost, '/api/v1/accounts/update_credentials', { method: 'PATCH', body: { display_name: 'No' } })).status).toBe(401);
    const narrow = await createTestUser(roost, 'narrowwriter', { scopes: ['write:accounts'] });
    expect((await update(narrow, { display_name: 'Yes' })).body.display_name).toBe('Yes');
  });
});
