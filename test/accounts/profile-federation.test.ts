/**
 * A profile edit reaches remote followers: update_credentials queues an Update(Person) that
 * Fedify sends to the followers (asked of the followers dispatcher, which lists them only for
 * internal use: over HTTP the collection shows its count and no items). Unlocking accepts the
 * pending remote request, and the Accept travels back.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { AccountSchema } from '../../src/db/entities/index.ts';
import sharp from 'sharp';

let a: TestRoost;
let b: TestRoost;
beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
});
afterAll(async () => Promise.all([a?.close(), b?.close()]));

const rel = async (viewer: TestUser, id: string) => (await viewer.api(`/api/v1/accounts/relationships?id[]=${id}`)).body[0];

describe('profile changes across instances', () => {
  it('sends Update(Person) with the new name, bio, fields and avatar to a remote follower', async () => {
    const star = await createTestUser(a, 'star');
    const fan = await createTestUser(b, 'fan');
    const starOnB = (await lookupRemoteAccount(b.services, b.federation, `star@${a.config.domain}`))!;
    await fan.api(`/api/v1/accounts/${starOnB.id}/follow`, { method: 'POST' });
    await eventually(async () => (await rel(fan, starOnB.id))?.following === true, 20_000, 'the Accept');

    const form = new FormData();
    form.append('display_name', 'Star Bright');
    form.append('note', 'Shining https://star.example');
    form.append('fields_attributes[0][name]', 'Site');
    form.append('fields_attributes[0][value]', 'https://star.example');
    form.append('avatar', new Blob([new Uint8Array(await sharp(Buffer.alloc(64, 9), { raw: { width: 4, height: 4, channels: 4 } }).png().toBuffer())]), 'a.png');
    const res = await star.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: form });
    expect(res.status).toBe(200);

    const seen = await eventually(async () => {
      const acc = await b.services.db.em().findOne(AccountSchema, { id: starOnB.id });
      return acc?.displayName === 'Star Bright' ? acc : null;
    }, 20_000, 'the Update(Person)');
    expect(seen.avatarUrl).toBe(res.body.avatar);
    expect(seen.fields.map((f) => f.name)).toEqual(['Site']);
    const shown = (await fan.api(`/api/v1/accounts/${starOnB.id}`)).body;
    expect(shown).toMatchObject({ display_name: 'Star Bright', avatar: res.body.avatar, avatar_static: res.body.avatar });

    // Over HTTP the followers collection shows how many, not who.
    const collection = await fetch(a.at('/users/star/followers'), { headers: { accept: 'application/activity+json' } });
    const body = (await collection.json()) as Record<string, unknown>;
    expect(body.totalItems).toBe(1);
    expect(body.orderedItems ?? body.items ?? []).toEqual([]);
  });

  it('accepts a pending remote request when the account unlocks', async () => {
    const shy = await createTestUser(a, 'shy');
    const asker = await createTestUser(b, 'asker');
    expect((await shy.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } })).body.locked).toBe(true);
    const shyOnB = (await lookupRemoteAccount(b.services, b.federation, `shy@${a.config.domain}`))!;
    expect((await asker.api(`/api/v1/accounts/${shyOnB.id}/follow`, { method: 'POST' })).body.requested).toBe(true);
    await eventually(async () => (await shy.api('/api/v1/accounts/verify_credentials')).body.source.follow_requests_count === 1, 20_000, 'the request');
    const unlocked = await shy.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: false } });
    expect(unlocked.body).toMatchObject({ locked: false, followers_count: 1, source: { follow_requests_count: 0 } });
    await eventually(async () => (await rel(asker, shyOnB.id))?.following === true, 20_000, 'the Accept after unlocking');
  });
});
