/**
 * A client that only knows Mastodon: register an app, get a client-credentials token, sign up
 * through POST /api/v1/accounts, use the returned token. In open, approval and closed
 * registration modes; every validation error with Mastodon's details; nothing half-created.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser } from '../helpers/auth.ts';
import { UserSchema } from '../../src/db/entities/index.ts';
import { runCommand } from '../../src/control/commands.ts';

type Mode = 'open' | 'approval' | 'closed';
const instances = new Map<Mode, { roost: TestRoost; token: string; clientId: string }>();

async function instance(mode: Mode) {
  const roost = await startTestRoost({ registrations: { mode } });
  const app = (
    await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Signup', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write follow' } })
  ).body;
  const token = (
    await apiRequest(roost, '/oauth/token', { body: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret, scope: 'read write' } })
  ).body.access_token as string;
  instances.set(mode, { roost, token, clientId: app.client_id });
}

beforeAll(async () => {
  await Promise.all((['open', 'approval', 'closed'] as const).map(instance));
});
afterAll(async () => Promise.all([...instances.values()].map((i) => i.roost.close())));

/** Rows a sign-up writes: nothing of it may stay behind when it fails. */
async function rowCounts(roost: TestRoost) {
  const [r] = await roost.services.db.sql.query<{ accounts: number; users: number; keys: number; tokens: number }>(
    `select (select count(*)::int from accounts) as accounts, (select count(*)::int from users) as users,
            (select count(*)::int from account_keys) as keys, (select count(*)::int from oauth_access_tokens) as tokens`,
  );
  return r;
}

const good = { username: 'newbie', email: 'newbie@example.test', password: 'long enough pw', agreement: true, locale: 'en' };

describe('POST /api/v1/accounts in open mode', () => {
  it('creates an unconfirmed user and returns a token for the calling app, with the app’s scopes', async () => {
    const { roost, token, clientId } = instances.get('open')!;
    const res = await apiRequest(roost, '/api/v1/accounts', { token, body: { ...good, date_of_birth: '1990-01-01' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      scope: 'read write follow',
      created_at: expect.any(Number),
    });
    expect(Math.abs(res.body.created_at - Date.now() / 1000)).toBeLessThan(60);

    const me = await apiRequest(roost, '/api/v1/accounts/verify_credentials', { token: res.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.username).toBe('newbie');
    expect(me.body.source).toEqual({
      privacy: 'public',
      sensitive: false,
      language: null,
      note: '',
      fields: [],
      follow_requests_count: 0,
      hide_collections: false,
      discoverable: null,
      indexable: false,
      attribution_domains: [],
      quote_policy: 'public',
    });
    const user = await roost.services.db.em().findOneOrFail(UserSchema, { email: 'newbie@example.test' });
    expect({ approved: user.approved, confirmedAt: user.confirmedAt, locale: user.locale, signUpReason: user.signUpReason }).toEqual({
      approved: true,
      confirmedAt: null,
      locale: 'en',
      signUpReason: null,
    });
    // Mastodon keeps which application created the user.
    const [link] = await roost.services.db.sql.query<{ client_id: string }>(
      `select a.client_id from users u join oauth_applications a on a.id = u.created_by_application_id where u.id = $1`,
      [user.id],
    );
    expect(link?.client_id).toBe(clientId);
    // The returned token is an app token of that application.
    const [tok] = await roost.services.db.sql.query<{ client_id: string; scopes: string }>(
      `select a.client_id, t.scopes from oauth_access_tokens t join oauth_applications a on a.id = t.application_id where t.user_id = $1`,
      [user.id],
    );
    expect(tok).toEqual({ client_id: clientId, scopes: 'read write follow' });
  });

  it('drops an unknown locale (the default applies) instead of refusing the sign-up, as Mastodon 4.3', async () => {
    const { roost, token } = instances.get('open')!;
    for (const [n, locale, kept] of [[1, 'xx-YY', null], [2, 'klingon', null], [3, 'pt-BR', 'pt-BR']] as const) {
      const res = await apiRequest(roost, '/api/v1/accounts', { token, body: { ...good, username: `loc${n}`, email: `loc${n}@example.test`, locale } });
      expect([locale, res.status, typeof res.body.access_token]).toEqual([locale, 200, 'string']);
      const user = await roost.services.db.em().findOneOrFail(UserSchema, { email: `loc${n}@example.test` });
      expect([locale, user.locale]).toEqual([locale, kept]);
    }
  });

  it('lists every validation problem in one 422, in Mastodon’s words, and creates nothing', async () => {
    const { roost, token } = instances.get('open')!;
    await apiRequest(roost, '/api/v1/accounts', { token, body: { ...good, username: 'taken', email: 'taken@example.test' } });
    const before = await rowCounts(roost);

    const res = await apiRequest(roost, '/api/v1/accounts', { token, body: { username: 'TAKEN', email: 'not-an-email', password: 'short', agreement: false, locale: 'xx-YY' } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: 'Validation failed: Agreement must be accepted, Email is invalid, Password is too short (minimum is 8 characters), Username is already taken',
      details: {
        agreement: [{ error: 'ERR_ACCEPTED', description: 'must be accepted' }],
        username: [{ error: 'ERR_TAKEN', description: 'is already taken' }],
        email: [{ error: 'ERR_INVALID', description: 'is invalid' }],
        password: [{ error: 'ERR_TOO_SHORT', description: 'is too short (minimum is 8 characters)' }],
      },
    });

    const blank = await apiRequest(roost, '/api/v1/accounts', { token, body: { agreement: 'true' } });
    expect(blank.status).toBe(422);
    expect(blank.body).toEqual({
      error: "Validation failed: Username can't be blank, Email can't be blank, Email is invalid, Password can't be blank",
      details: {
        username: [{ error: 'ERR_BLANK', description: "can't be blank" }],
        // As Mastodon: a blank address is blank and invalid; no locale sent, no locale error.
        email: [
          { error: 'ERR_BLANK', description: "can't be blank" },
          { error: 'ERR_INVALID', description: 'is invalid' },
        ],
        password: [{ error: 'ERR_BLANK', description: "can't be blank" }],
      },
    });

    const other = await apiRequest(roost, '/api/v1/accounts', {
      token,
      body: { username: 'x'.repeat(31), email: 'TAKEN@example.test', password: 'p'.repeat(73), agreement: '1' },
    });
    expect(other.body.details).toEqual({
      username: [{ error: 'ERR_TOO_LONG', description: 'is too long (maximum is 30 characters)' }],
      email: [{ error: 'ERR_TAKEN', description: 'is already taken' }],
      password: [{ error: 'ERR_TOO_LONG', description: 'is too long (maximum is 72 characters)' }],
    });

    const invalid = await apiRequest(roost, '/api/v1/accounts', { token, body: { ...good, username: 'no-dashes', email: 'a@b.test' } });
    expect(invalid.body.details).toEqual({ username: [{ error: 'ERR_INVALID', description: 'must contain only letters, numbers and underscores' }] });

    const reserved = await apiRequest(roost, '/api/v1/accounts', { token, body: { ...good, username: 'Admin', email: 'a@b.test' } });
    expect(reserved.body).toEqual({
      error: 'Validation failed: Username is reserved',
      details: { username: [{ error: 'ERR_RESERVED', description: 'is reserved' }] },
    });

    const longReason = await apiRequest(roost, '/api/v1/accounts', { token, body: { ...good, username: 'why', email: 'why@b.test', reason: 'r'.repeat(421) } });
    expect(longReason.body.details).toEqual({ reason: [{ error: 'ERR_TOO_LONG', description: 'is too long (maximum is 420 characters)' }] });

    expect(await rowCounts(roost)).toEqual(before);
  });

  it('lets one of two racing sign-ups for a name win; the other gets ERR_TAKEN and leaves nothing', async () => {
    const { roost, token } = instances.get('open')!;
    const before = await rowCounts(roost);
    const [a, b] = await Promise.all(
      ['racer1@example.test', 'racer2@example.test'].map((email) => apiRequest(roost, '/api/v1/accounts', { token, body: { ...good, username: 'racer', email } })),
    );
    expect([a.status, b.status].sort()).toEqual([200, 422]);
    expect([a, b].find((r) => r.status === 422)!.body.details).toEqual({ username: [{ error: 'ERR_TAKEN', description: 'is already taken' }] });
    const after = await rowCounts(roost);
    expect(after).toEqual({ accounts: before.accounts + 1, users: before.users + 1, keys: before.keys + 2, tokens: before.tokens + 1 });
  });

  it('wants an app token with write:accounts, and no user behind it', async () => {
    const { roost, token } = instances.get('open')!;
    expect(await apiRequest(roost, '/api/v1/accounts', { body: good })).toMatchObject({ status: 401, body: { error: 'The access token is invalid' } });
    expect(await apiRequest(roost, '/api/v1/accounts', { token: 'nonsense', body: good })).toMatchObject({ status: 401, body: { error: 'The access token is invalid' } });
    const app = (await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Reader', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read' } })).body;
    const readOnly = (
      await apiRequest(roost, '/oauth/token', { body: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret, scope: 'read' } })
    ).body.access_token as string;
    const scoped = await apiRequest(roost, '/api/v1/accounts', { token: readOnly, body: good });
    expect(scoped).toMatchObject({ status: 403, body: { error: 'This action is outside the authorized scopes' } });
    const someone = await createTestUser(roost, 'someone');
    const asUser = await someone.api('/api/v1/accounts', { body: { ...good, username: 'another', email: 'another@example.test' } });
    expect(asUser).toMatchObject({ status: 403, body: { error: 'This method requires an client credentials authentication' } });
    expect(await roost.services.db.em().count(UserSchema, { email: 'another@example.test' })).toBe(0);
    // A client-credentials token with only write:accounts is enough; the new token gets the app's scopes.
    const narrow = (await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Narrow', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read:accounts write:accounts' } })).body;
    const writeAccounts = (
      await apiRequest(roost, '/oauth/token', { body: { grant_type: 'client_credentials', client_id: narrow.client_id, client_secret: narrow.client_secret, scope: 'write:accounts' } })
    ).body.access_token as string;
    const ok = await apiRequest(roost, '/api/v1/accounts', { token: writeAccounts, body: { ...good, username: 'narrow', email: 'narrow@example.test' } });
    expect(ok.status).toBe(200);
    expect(ok.body.scope).toBe('read:accounts write:accounts');
  });
});

describe('POST /api/v1/accounts in approval mode', () => {
  it('requires a reason, leaves the user pending until an operator approves', async () => {
    const { roost, token } = instances.get('approval')!;
    const body = { ...good, username: 'waiter', email: 'w@example.test' };
    const noReason = await apiRequest(roost, '/api/v1/accounts', { token, body });
    expect(noReason.status).toBe(422);
    expect(noReason.body).toEqual({ error: "Validation failed: Reason can't be blank", details: { reason: [{ error: 'ERR_BLANK', description: "can't be blank" }] } });
    expect(await roost.services.db.em().count(UserSchema, {})).toBe(0);

    const res = await apiRequest(roost, '/api/v1/accounts', { token, body: { ...body, reason: '  I like birds ' } });
    expect(res.status).toBe(200);
    const me = await apiRequest(roost, '/api/v1/accounts/verify_credentials', { token: res.body.access_token });
    expect(me).toMatchObject({ status: 403, body: { error: 'Your login is currently pending approval' } });
    const user = await roost.services.db.em().findOneOrFail(UserSchema, { email: 'w@example.test' });
    expect([user.approved, user.signUpReason]).toEqual([false, 'I like birds']);
    // Nobody else sees a pending sign-up.
    expect(await apiRequest(roost, `/api/v1/accounts/${user.accountId}`)).toMatchObject({ status: 404, body: { error: 'Record not found' } });
    expect((await apiRequest(roost, '/api/v1/accounts/lookup?acct=waiter')).status).toBe(404);

    // roost accounts modify waiter --approve: the same token now works, and the profile shows.
    expect(await runCommand(roost.services, 'accounts.modify', { username: 'waiter', approve: true }, { federation: roost.federation })).toEqual({ username: 'waiter', changes: ['approved'] });
    expect((await apiRequest(roost, '/api/v1/accounts/verify_credentials', { token: res.body.access_token })).status).toBe(200);
    expect((await apiRequest(roost, `/api/v1/accounts/${user.accountId}`)).body.acct).toBe('waiter');
    // A disabled login is refused like an unknown token.
    await runCommand(roost.services, 'accounts.modify', { username: 'waiter', disable: true }, { federation: roost.federation });
    expect((await apiRequest(roost, '/api/v1/accounts/verify_credentials', { token: res.body.access_token })).status).toBe(401);
  });
});

describe('POST /api/v1/accounts in closed mode', () => {
  it('is refused as Mastodon refuses it, creating nothing', async () => {
    const { roost, token } = instances.get('closed')!;
    const res = await apiRequest(roost, '/api/v1/accounts', { token, body: good });
    expect(res).toMatchObject({ status: 403, body: { error: 'This action is not allowed' } });
    expect(await rowCounts(roost)).toEqual({ accounts: 0, users: 0, keys: 0, tokens: 1 });
  });
});
