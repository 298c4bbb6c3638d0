/**
 * verify_credentials (the CredentialAccount: every key of Account, `source`, `role`) and
 * GET /api/v1/preferences, with the scopes Mastodon asks for.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser } from '../helpers/auth.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';

let roost: TestRoost;
beforeAll(async () => {
  roost = await startTestRoost();
});
afterAll(async () => roost?.close());

describe('GET /api/v1/accounts/verify_credentials', () => {
  it('returns the whole CredentialAccount', async () => {
    const me = await createTestUser(roost, 'creds', { role: 'Moderator' });
    const asker = await createTestUser(roost, 'asker');
    await me.api('/api/v1/accounts/update_credentials', {
      method: 'PATCH',
      body: { display_name: 'Cre Ds', note: 'Line one\nline two', locked: true, fields_attributes: [{ name: 'Pronouns', value: 'they/them' }] },
    });
    expect((await asker.api(`/api/v1/accounts/${me.account.id}/follow`, { method: 'POST' })).body.requested).toBe(true);
    const res = await me.api('/api/v1/accounts/verify_credentials');
    expect(res.status).toBe(200);
    const midnight = `${roost.services.clock.now().toISOString().slice(0, 10)}T00:00:00.000Z`;
    expect(res.body).toEqual({
      id: me.account.id,
      username: 'creds',
      acct: 'creds',
      url: `${roost.url}/@creds`,
      uri: `${roost.url}/users/creds`,
      display_name: 'Cre Ds',
      note: '<p>Line one<br />line two</p>',
      avatar: `${roost.url}/avatars/original/missing.png`,
      avatar_static: `${roost.url}/avatars/original/missing.png`,
      header: `${roost.url}/headers/original/missing.png`,
      header_static: `${roost.url}/headers/original/missing.png`,
      locked: true,
      fields: [{ name: 'Pronouns', value: 'they/them', verified_at: null }],
      emojis: [],
      bot: false,
      group: false,
      discoverable: null,
      indexable: false,
      noindex: true,
      hide_collections: false,
      roles: [{ id: '3', name: 'Moderator', color: '' }],
      created_at: midnight,
      last_status_at: null,
      statuses_count: 0,
      followers_count: 0,
      following_count: 0,
      source: {
        privacy: 'private', // a locked account's default, until chosen
        sensitive: false,
        language: null,
        note: 'Line one\nline two',
        fields: [{ name: 'Pronouns', value: 'they/them', verified_at: null }],
        follow_requests_count: 1,
        hide_collections: false,
        discoverable: null,
        indexable: false,
        attribution_domains: [],
        quote_policy: 'public',
      },
      role: { id: '3', name: 'Moderator', permissions: String(0x4 | 0x8 | 0x10 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000), color: '', highlighted: true },
    });
  });

  it('gives the effective role: every permission to an administrator, the implicit everyone role to nobody in particular', async () => {
    const owner = await createTestUser(roost, 'theowner', { role: 'Owner' });
    expect((await owner.api('/api/v1/accounts/verify_credentials')).body.role).toEqual({ id: '1', name: 'Owner', permissions: String(2 ** 21 - 1), color: '', highlighted: true });
    const plain = await createTestUser(roost, 'plain');
    expect((await plain.api('/api/v1/accounts/verify_credentials')).body.role).toEqual({ id: '-99', name: '', permissions: '65536', color: '', highlighted: false });
  });

  it('takes read:accounts or profile; refuses other scopes, app tokens and no token', async () => {
    for (const scopes of [['read'], ['read:accounts'], ['profile']]) {
      const u = await createTestUser(roost, `scope_${scopes[0]!.replace(':', '_')}`, { scopes });
      expect([scopes, (await u.api('/api/v1/accounts/verify_credentials')).status]).toEqual([scopes, 200]);
    }
    const writer = await createTestUser(roost, 'vcwriter', { scopes: ['write', 'follow'] });
    expect(await writer.api('/api/v1/accounts/verify_credentials')).toMatchObject({ status: 403, body: { error: 'This action is outside the authorized scopes' } });
    const { token } = await issueAccessToken(roost.services, { applicationId: null, userId: null, scopes: ['read'] });
    expect(await apiRequest(roost, '/api/v1/accounts/verify_credentials', { token })).toMatchObject({ status: 422, body: { error: 'This method requires an authenticated user' } });
    expect(await apiRequest(roost, '/api/v1/accounts/verify_credentials')).toMatchObject({ status: 401, body: { error: 'The access token is invalid' } });
  });
});

describe('GET /api/v1/preferences', () => {
  it('reports the defaults, then what was chosen through update_credentials', async () => {
    const me = await createTestUser(roost, 'prefs');
    expect((await me.api('/api/v1/preferences')).body).toEqual({
      'posting:default:visibility': 'public',
      'posting:default:sensitive': false,
      'posting:default:language': null,
      'posting:default:quote_policy': 'public',
      'reading:expand:media': 'default',
      'reading:expand:spoilers': false,
      'reading:autoplay:gifs': false,
    });
    const bad = await me.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { source: { quote_policy: 'everyone' } } });
    expect(bad).toMatchObject({ status: 422, body: { details: { 'source.quote_policy': [{ error: 'ERR_INCLUSION' }] } } });
    const upd = await me.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { source: { privacy: 'unlisted', sensitive: true, language: 'de', quote_policy: 'followers' } } });
    expect(upd.body.source).toMatchObject({ privacy: 'unlisted', sensitive: true, language: 'de' });
    expect((await me.api('/api/v1/preferences')).body).toEqual({
      'posting:default:visibility': 'unlisted',
      'posting:default:sensitive': true,
      'posting:default:language': 'de',
      'posting:default:quote_policy': 'followers',
      'reading:expand:media': 'default',
      'reading:expand:spoilers': false,
      'reading:autoplay:gifs': false,
    });
    // An empty language goes back to none.
    await me.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { source: { language: '' } } });
    expect((await me.api('/api/v1/preferences')).body['posting:default:language']).toBeNull();
  });

  it('needs read:accounts', async () => {
    const writer = await createTestUser(roost, 'prefwriter', { scopes: ['write'] });
    expect(await writer.api('/api/v1/preferences')).toMatchObject({ status: 403, body: { error: 'This action is outside the authorized scopes' } });
    expect((await apiRequest(roost, '/api/v1/preferences')).status).toBe(401);
    const reader = await createTestUser(roost, 'prefreader', { scopes: ['read:accounts'] });
    expect((await reader.api('/api/v1/preferences')).status).toBe(200);
  });
});
