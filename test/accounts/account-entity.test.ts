/**
 * The Account entity through GET /api/v1/accounts/:id, lookup and search: every attribute of a
 * local and of a remote account (no user behind it), counts and highlighted roles from one
 * batched query, moved cut after one level, suspended and silenced accounts, and the scopes.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { AccountSchema, type Account } from '../../src/db/entities/index.ts';
import { accountView } from '../../src/services/account-views.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';
import { applyFollowStateToStats, applyStatusToStats } from '../../src/services/account-stats.ts';

let roost: TestRoost;
let today: string;
beforeAll(async () => {
  roost = await startTestRoost();
  today = `${roost.services.clock.now().toISOString().slice(0, 10)}T00:00:00.000Z`;
});
afterAll(async () => roost?.close());

async function remoteAccount(username: string, extra: Partial<Account> = {}): Promise<Account> {
  const em = roost.services.db.em();
  const now = roost.services.clock.now();
  const a = em.create(AccountSchema, {
    id: roost.services.ids.next(),
    username,
    domain: 'remote.example',
    uri: `https://remote.example/users/${username}`,
    url: `https://remote.example/@${username}`,
    createdAt: new Date('2024-05-06T07:08:09Z'),
    updatedAt: now,
    ...extra,
  });
  await em.flush();
  return a;
}

async function insertStatus(accountId: string, createdAt: string, deleted = false) {
  const id = roost.services.ids.next();
  await roost.services.db.sql.query(
    `insert into statuses (id, account_id, uri, local, created_at, updated_at, deleted_at) values ($1, $2, $3, true, $4, $4, $5)`,
    [id, accountId, `${roost.url}/statuses/${id}`, createdAt, deleted ? createdAt : null],
  );
  // Raw rows bypass the services: keep the account's stats row as the statuses service will.
  if (!deleted) await applyStatusToStats(roost.services.db.sql, accountId, 1, new Date(createdAt));
}

const missing = () => ({
  avatar: `${roost.url}/avatars/original/missing.png`,
  avatar_static: `${roost.url}/avatars/original/missing.png`,
  header: `${roost.url}/headers/original/missing.png`,
  header_static: `${roost.url}/headers/original/missing.png`,
});

describe('GET /api/v1/accounts/:id', () => {
  it('serializes a local account completely: counts, last status date, highlighted role', async () => {
    const owner = await createTestUser(roost, 'boss', { role: 'Owner' });
    const fan = await createTestUser(roost, 'fan');
    expect((await fan.api(`/api/v1/accounts/${owner.account.id}/follow`, { method: 'POST' })).status).toBe(200);
    await insertStatus(owner.account.id, '2026-03-04T15:00:00Z');
    await insertStatus(owner.account.id, '2026-01-01T10:00:00Z');
    await insertStatus(owner.account.id, '2026-05-01T10:00:00Z', true); // deleted: not counted
    const res = await apiRequest(roost, `/api/v1/accounts/${owner.account.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: owner.account.id,
      username: 'boss',
      acct: 'boss',
      url: `${roost.url}/@boss`,
      uri: `${roost.url}/users/boss`,
      display_name: '',
      note: '',
      ...missing(),
      locked: false,
      fields: [],
      emojis: [],
      bot: false,
      group: false,
      discoverable: null,
      indexable: false,
      noindex: true,
      hide_collections: false,
      roles: [{ id: '1', name: 'Owner', color: '' }],
      created_at: today,
      last_status_at: '2026-03-04',
      statuses_count: 2,
      followers_count: 1,
      following_count: 0,
    });
    expect((await apiRequest(roost, `/api/v1/accounts/${fan.account.id}`)).body).toMatchObject({ following_count: 1, followers_count: 0, roles: [] });
  });

  it('serializes a remote account that has no user', async () => {
    const remote = await remoteAccount('alpha', {
      displayName: 'Alpha',
      note: '<p>Hi from <a href="https://remote.example">remote</a></p>',
      actorType: 'Service',
      locked: true,
      discoverable: true,
      indexable: true,
      avatarUrl: 'https://remote.example/a.png',
      fields: [{ name: 'Web', value: '<a href="https://alpha.example" rel="me">alpha.example</a>', verified_at: '2026-01-02T03:04:05.000Z' }],
    });
    const res = await apiRequest(roost, `/api/v1/accounts/${remote.id}`);
    expect(res.body).toEqual({
      id: remote.id,
      username: 'alpha',
      acct: 'alpha@remote.example',
      url: 'https://remote.example/@alpha',
      uri: 'https://remote.example/users/alpha',
      display_name: 'Alpha',
      note: '<p>Hi from <a href="https://remote.example">remote</a></p>',
      avatar: 'https://remote.example/a.png',
      avatar_static: 'https://remote.example/a.png',
      header: `${roost.url}/headers/original/missing.png`,
      header_static: `${roost.url}/headers/original/missing.png`,
      locked: true,
      fields: [{ name: 'Web', value: '<a href="https://alpha.example" rel="me">alpha.example</a>', verified_at: '2026-01-02T03:04:05.000Z' }],
      emojis: [],
      bot: true,
      group: false,
      discoverable: true,
      indexable: true,
      hide_collections: null,
      roles: [],
      created_at: '2024-05-06T00:00:00.000Z',
      last_status_at: null,
      statuses_count: 0,
      followers_count: 0,
      following_count: 0,
    });
    const group = await remoteAccount('club', { actorType: 'Group' });
    expect((await apiRequest(roost, `/api/v1/accounts/${group.id}`)).body).toMatchObject({ bot: false, group: true });
  });

  it('nests the moved-to account one level, without its own move', async () => {
    // alpha → beta → gamma: alpha shows beta, and beta (nested) shows no `moved`.
    const gamma = await remoteAccount('gamma');
    const beta = await remoteAccount('beta', { movedToAccountId: gamma.id });
    const alpha = await remoteAccount('alpha2', { movedToAccountId: beta.id });
    const follower = await createTestUser(roost, 'betafan');
    await roost.services.db.sql.query(
      `insert into follows (id, account_id, target_account_id, state, created_at, updated_at) values ($1, $2, $3, 'accepted', now(), now())`,
      [roost.services.ids.next(), follower.account.id, beta.id],
    );
    await applyFollowStateToStats(roost.services.db.sql, { accountId: follower.account.id, targetAccountId: beta.id }, null, 'accepted');
    const res = await apiRequest(roost, `/api/v1/accounts/${alpha.id}`);
    expect(res.body.moved).toMatchObject({ id: beta.id, acct: 'beta@remote.example', followers_count: 1 });
    expect('moved' in res.body.moved).toBe(false);
    expect((await apiRequest(roost, `/api/v1/accounts/${beta.id}`)).body.moved).toMatchObject({ id: gamma.id, acct: 'gamma@remote.example' });
    expect('moved' in (await apiRequest(roost, `/api/v1/accounts/${gamma.id}`)).body).toBe(false);
  });

  it('shows a suspended account blanked with suspended: true, and a silenced one as limited', async () => {
    const sus = await remoteAccount('sus', { displayName: 'Gone', note: '<p>x</p>', locked: true, suspendedAt: new Date(), fields: [{ name: 'a', value: 'b', verified_at: null }] });
    const res = await apiRequest(roost, `/api/v1/accounts/${sus.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: sus.id,
      username: 'sus',
      acct: 'sus@remote.example',
      url: 'https://remote.example/@sus',
      uri: 'https://remote.example/users/sus',
      display_name: '',
      note: '',
      ...missing(),
      locked: false,
      fields: [],
      emojis: [],
      bot: false,
      group: false,
      discoverable: false,
      indexable: false,
      hide_collections: null,
      roles: [],
      created_at: '2024-05-06T00:00:00.000Z',
      last_status_at: null,
      statuses_count: 0,
      followers_count: 0,
      following_count: 0,
      suspended: true,
    });
    const quiet = await remoteAccount('quiet', { silencedAt: new Date() });
    expect((await apiRequest(roost, `/api/v1/accounts/${quiet.id}`)).body.limited).toBe(true);
    expect('limited' in (await apiRequest(roost, `/api/v1/accounts/${sus.id}`)).body).toBe(false);
  });

  it('answers 404 for unknown ids, and checks the scopes of a token that comes along', async () => {
    expect(await apiRequest(roost, '/api/v1/accounts/123456789')).toMatchObject({ status: 404, body: { error: 'Record not found' } });
    expect(await apiRequest(roost, '/api/v1/accounts/not-a-number')).toMatchObject({ status: 404, body: { error: 'Record not found' } });
    expect(await apiRequest(roost, '/api/v1/accounts/99999999999999999999')).toMatchObject({ status: 404, body: { error: 'Record not found' } });
    expect(await apiRequest(roost, '/api/v1/accounts/9999999999999999999')).toMatchObject({ status: 404, body: { error: 'Record not found' } });
    const someone = await remoteAccount('scoped');
    const writer = await createTestUser(roost, 'writeonly', { scopes: ['write'] });
    expect(await writer.api(`/api/v1/accounts/${someone.id}`)).toMatchObject({ status: 403, body: { error: 'This action is outside the authorized scopes' } });
    expect(await apiRequest(roost, `/api/v1/accounts/${someone.id}`, { token: 'bogus' })).toMatchObject({ status: 401, body: { error: 'The access token is invalid' } });
    const reader = await createTestUser(roost, 'readaccounts', { scopes: ['read:accounts'] });
    expect((await reader.api(`/api/v1/accounts/${someone.id}`)).status).toBe(200);
  });

  it('answers several accounts at once, the visible ones in the order asked (GET /api/v1/accounts)', async () => {
    const one = await remoteAccount('many1');
    const two = await createTestUser(roost, 'many2');
    const hidden = await createTestUser(roost, 'many3', { approved: false });
    const res = await apiRequest(roost, `/api/v1/accounts?id[]=${two.account.id}&id[]=123&id[]=${hidden.account.id}&id[]=${one.id}&id[]=${two.account.id}&id[]=x`);
    expect(res.status).toBe(200);
    expect(res.body.map((a: { acct: string }) => a.acct)).toEqual(['many2', 'many1@remote.example']);
    expect((await apiRequest(roost, '/api/v1/accounts')).body).toEqual([]);
    const tooMany = Array.from({ length: 41 }, (_, i) => `id[]=${i + 1}`).join('&');
    expect(await apiRequest(roost, `/api/v1/accounts?${tooMany}`)).toMatchObject({ status: 422, body: { error: 'Too many accounts requested (maximum is 40)' } });
  });

  it('loads the view of a whole page in one query, the moved-to accounts’ counts included', async () => {
    const target = await remoteAccount('viewtarget');
    const movers = await Promise.all([1, 2, 3].map((i) => remoteAccount(`viewmover${i}`, { movedToAccountId: target.id })));
    const sql = roost.services.db.sql;
    const original = sql.query;
    let calls = 0;
    sql.query = ((...args: Parameters<typeof original>) => {
      calls++;
      return original.apply(sql, args);
    }) as typeof original;
    try {
      const view = await accountView(roost.services, movers);
      expect(calls).toBe(1);
      expect([...view.counts!.keys()].sort()).toEqual([...movers.map((m) => m.id), target.id].sort());
      expect(view.accounts!.get(target.id)?.username).toBe('viewtarget');
    } finally {
      sql.query = original;
    }
  });
});

describe('lookup and search', () => {
  let me: TestUser;
  beforeAll(async () => {
    me = await createTestUser(roost, 'searcher');
    await createTestUser(roost, 'robin', {});
    await remoteAccount('robert', { displayName: 'Bob' });
    await remoteAccount('robbed', { suspendedAt: new Date() });
    await createTestUser(roost, 'robpending', { approved: false });
  });

  it('looks up known accounts by handle, without fetching', async () => {
    for (const acct of ['robin', '@robin', 'ROBIN', `robin@${roost.config.domain}`]) {
      const res = await apiRequest(roost, `/api/v1/accounts/lookup?acct=${encodeURIComponent(acct)}`);
      expect([acct, res.status, res.body.acct]).toEqual([acct, 200, 'robin']);
    }
    expect((await apiRequest(roost, '/api/v1/accounts/lookup?acct=@robert@remote.example')).body.acct).toBe('robert@remote.example');
    expect((await apiRequest(roost, '/api/v1/accounts/lookup?acct=robbed@remote.example')).body).toMatchObject({ acct: 'robbed@remote.example', suspended: true });
    for (const acct of ['nobody', 'robin@elsewhere.example', '', 'a@b@c', 'robpending']) {
      const res = await apiRequest(roost, `/api/v1/accounts/lookup?acct=${encodeURIComponent(acct)}`);
      expect([acct, res.status, res.body]).toEqual([acct, 404, { error: 'Record not found' }]);
    }
  });

  it('searches usernames and display names by prefix: local first, exact name first, no suspended or pending accounts', async () => {
    await createTestUser(roost, 'rob');
    const found = await me.api('/api/v1/accounts/search?q=rob');
    expect(found.status).toBe(200);
    expect(found.body.map((a: { acct: string }) => a.acct)).toEqual(['rob', 'robin', 'robert@remote.example']);
    expect((await me.api('/api/v1/accounts/search?q=bo')).body.map((a: { acct: string }) => a.acct)).toEqual(['boss', 'robert@remote.example']);
    expect((await me.api('/api/v1/accounts/search?q=@rob@remote')).body.map((a: { acct: string }) => a.acct)).toEqual(['robert@remote.example']);
    expect((await me.api(`/api/v1/accounts/search?q=rob@${roost.config.domain}`)).body.map((a: { acct: string }) => a.acct)).toEqual(['rob', 'robin']);
    expect((await me.api('/api/v1/accounts/search?q=rob&limit=1&offset=1')).body.map((a: { acct: string }) => a.acct)).toEqual(['robin']);
    expect((await me.api('/api/v1/accounts/search?q=')).body).toEqual([]);
    expect((await me.api('/api/v1/accounts/search?q=100%25_')).body).toEqual([]);
  });

  it('limits the search to followed accounts with following=true', async () => {
    const robin = (await apiRequest(roost, '/api/v1/accounts/lookup?acct=robin')).body;
    expect((await me.api(`/api/v1/accounts/${robin.id}/follow`, { method: 'POST' })).status).toBe(200);
    expect((await me.api('/api/v1/accounts/search?q=rob&following=true')).body.map((a: { acct: string }) => a.acct)).toEqual(['robin']);
  });

  it('needs a user token with read:accounts', async () => {
    expect(await apiRequest(roost, '/api/v1/accounts/search?q=rob')).toMatchObject({ status: 401, body: { error: 'The access token is invalid' } });
    const writer = await createTestUser(roost, 'searchwriter', { scopes: ['write'] });
    expect(await writer.api('/api/v1/accounts/search?q=rob')).toMatchObject({ status: 403, body: { error: 'This action is outside the authorized scopes' } });
    const { token } = await issueAccessToken(roost.services, { applicationId: null, userId: null, scopes: ['read'] });
    expect(await apiRequest(roost, '/api/v1/accounts/search?q=rob', { token })).toMatchObject({ status: 422, body: { error: 'This method requires an authenticated user' } });
  });
});
