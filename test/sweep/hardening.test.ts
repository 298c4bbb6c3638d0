/**
 * The smaller holes the attack on Roost found (issue 7, items 5 and 6), each pinned by a test that
 * failed before its fix: ids and NUL bytes, Basic auth, scopes, unconfirmed users, the consent
 * form's session and a bidi app name, pending sign-ups over federation, data directory modes.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';
import { runCommand } from '../../src/control/commands.ts';
import { loadOrCreateSecrets, secretsPath } from '../../config/secrets.ts';
import { lockDataDir } from '../../src/control/lock.ts';
import { embeddedClusterDir, startEmbeddedPostgres } from '../../src/db/embedded.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
});
afterAll(async () => roost?.close());

const token = async (user: TestUser, scopes: string[]) => (await issueAccessToken(roost.services, { applicationId: null, userId: user.user.id, scopes })).token;

describe('bad input is a 4xx', () => {
  it('answers 404 for ids PostgreSQL cannot hold and for non-numeric follow request ids', async () => {
    for (const id of ['99999999999999999999', '9223372036854775808', 'abc', '1e3', '-1']) {
      for (const p of [`/api/v1/accounts/${id}/follow`, `/api/v1/follow_requests/${id}/authorize`, `/api/v1/follow_requests/${id}/reject`]) {
        expect(await alice.api(p, { method: 'POST' }), `${p}`).toMatchObject({ status: 404, body: { error: 'Record not found' } });
      }
      expect((await alice.api(`/api/v1/accounts/${bob.account.id}/followers?max_id=${id}`)).status).toBe(200);
    }
    expect((await alice.api(`/api/v1/accounts/relationships?id[]=99999999999999999999&id[]=${bob.account.id}`)).body.map((r: { id: string }) => r.id)).toEqual([bob.account.id]);
  });

  it('answers 400 for a NUL byte in a query, form, multipart or JSON parameter, and stores nothing', async () => {
    const nul = { status: 400, body: { error: 'Invalid request parameters: a NUL byte is not allowed' } };
    expect(await alice.api('/api/v1/accounts/lookup?acct=al%00ice')).toMatchObject(nul);
    expect(await alice.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { display_name: 'A\u0000' } })).toMatchObject(nul);
    expect(await alice.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: new URLSearchParams({ note: 'x\u0000' }) })).toMatchObject(nul);
    const form = new FormData();
    form.append('display_name', 'B\u0000');
    expect(await alice.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: form })).toMatchObject(nul);
    expect(await alice.api(`/api/v1/accounts/${bob.account.id}/note`, { method: 'POST', body: { 'comm\u0000ent': 'x' } })).toMatchObject(nul);
    expect((await alice.api('/api/v1/accounts/verify_credentials')).body.display_name).toBe('');
  });

  it('answers 200 with the relationship when unfollowing or removing oneself', async () => {
    for (const action of ['unfollow', 'remove_from_followers']) {
      const res = await alice.api(`/api/v1/accounts/${alice.account.id}/${action}`, { method: 'POST' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: alice.account.id, following: false, followed_by: false });
    }
    expect((await alice.api(`/api/v1/accounts/${alice.account.id}/follow`, { method: 'POST' })).status).toBe(403);
  });

  it('answers invalid_client for a Basic auth header it cannot read', async () => {
    for (const header of ['Basic %%%', `Basic ${Buffer.from('%zz:%E0%A4').toString('base64')}`, `Basic ${Buffer.from('nocolon').toString('base64')}`, 'Basic']) {
      const res = await apiRequest(roost, '/oauth/token', { headers: { authorization: header }, body: { grant_type: 'client_credentials' } });
      expect(res, header).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    }
  });
});

describe('scopes', () => {
  it('needs write:accounts to dismiss a suggestion', async () => {
    const read = await token(alice, ['read']);
    const res = await apiRequest(roost, `/api/v1/suggestions/${bob.account.id}`, { method: 'DELETE', token: read });
    expect(res).toMatchObject({ status: 403, body: { error: 'This action is outside the authorized scopes' } });
    const muted = () => roost.services.db.sql.query(`select 1 from follow_recommendation_mutes where account_id = $1`, [alice.account.id]);
    expect(await muted()).toHaveLength(0);
    expect((await apiRequest(roost, `/api/v1/suggestions/${bob.account.id}`, { method: 'DELETE', token: await token(alice, ['write:accounts']) })).status).toBe(200);
    expect(await muted()).toHaveLength(1);
  });

  it('checks the scope of a token that comes along on followers and following, as Mastodon (public without one)', async () => {
    const push = await token(alice, ['push']);
    const granular = await token(alice, ['read:accounts']);
    for (const which of ['followers', 'following']) {
      const p = `/api/v1/accounts/${bob.account.id}/${which}`;
      expect(await apiRequest(roost, p, { token: push })).toMatchObject({ status: 403, body: { error: 'This action is outside the authorized scopes' } });
      expect((await apiRequest(roost, p, { token: 'not-a-token' })).status).toBe(401);
      expect((await apiRequest(roost, p)).status).toBe(200);
      expect((await apiRequest(roost, p, { token: granular })).status).toBe(200);
    }
  });
});

describe('unconfirmed users', () => {
  it('get 403 "missing a confirmed e-mail address" on the API, but may verify their credentials', async () => {
    const una = await createTestUser(roost, 'una', { confirmed: false });
    const refused = { status: 403, body: { error: 'Your login is missing a confirmed e-mail address' } };
    expect(await una.api(`/api/v1/accounts/${bob.account.id}/follow`, { method: 'POST' })).toMatchObject(refused);
    expect(await una.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { display_name: 'Una' } })).toMatchObject(refused);
    expect(await una.api('/api/v1/preferences')).toMatchObject(refused);
    expect(await una.api('/api/v1/follow_requests')).toMatchObject(refused);
    expect((await una.api('/api/v1/accounts/verify_credentials')).body.username).toBe('una');
    expect(await roost.services.db.sql.query(`select 1 from follows where account_id = $1`, [una.account.id])).toHaveLength(0);

    await runCommand(roost.services, 'accounts.modify', { username: 'una', confirm: true }, { federation: roost.federation });
    expect((await una.api(`/api/v1/accounts/${bob.account.id}/follow`, { method: 'POST' })).body.following).toBe(true);
  });
});

describe('pending sign-ups over federation', () => {
  const webfinger = (username: string) => fetch(roost.at(`/.well-known/webfinger?resource=acct:${username}@${roost.config.domain}`));
  const actor = (username: string) => fetch(roost.at(`/users/${username}`), { headers: { accept: 'application/activity+json' } });

  it('have no WebFinger or actor until approved, or until an API sign-up is confirmed', async () => {
    await createTestUser(roost, 'pat', { approved: false });
    // cid signs up through the API (open registrations: approved, e-mail not confirmed).
    const app = await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'signup', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' } });
    const grant = await apiRequest(roost, '/oauth/token', { body: { grant_type: 'client_credentials', client_id: app.body.client_id, client_secret: app.body.client_secret, scope: 'write' } });
    const signUp = await apiRequest(roost, '/api/v1/accounts', {
      token: grant.body.access_token,
      body: { username: 'cid', email: 'cid@example.test', password: 'long enough pw', agreement: true, locale: 'en' },
    });
    expect(signUp.status).toBe(200);
    // An account the operator created unconfirmed is no sign-up: it federates.
    await createTestUser(roost, 'opal', { confirmed: false });
    expect((await webfinger('opal')).status).toBe(200);
    for (const name of ['pat', 'cid']) {
      expect((await webfinger(name)).status, name).toBe(404);
      expect((await actor(name)).status, name).toBe(404);
      expect((await fetch(roost.at(`/users/${name}/followers`), { headers: { accept: 'application/activity+json' } })).status).toBe(404);
    }
    expect((await webfinger('alice')).status).toBe(200);
    expect((await actor('alice')).status).toBe(200);

    await runCommand(roost.services, 'accounts.modify', { username: 'pat', approve: true }, { federation: roost.federation });
    await runCommand(roost.services, 'accounts.modify', { username: 'cid', confirm: true }, { federation: roost.federation });
    for (const name of ['pat', 'cid']) {
      expect((await webfinger(name)).status, name).toBe(200);
      expect(((await (await actor(name)).json()) as { preferredUsername: string }).preferredUsername).toBe(name);
    }
  });
});

describe('the consent page', () => {
  async function registerApp(name: string) {
    const res = await apiRequest(roost, '/api/v1/apps', { body: { client_name: name, redirect_uris: 'https://client.example/cb', scopes: 'read' } });
    expect(res.status).toBe(200);
    return res.body as { client_id: string };
  }
  const query = (clientId: string) => new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: 'https://client.example/cb', scope: 'read' });
  const hidden = (html: string) => Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]));

  it('binds the anti-forgery token to the session cookie it sets', async () => {
    const app = await registerApp('Session App');
    const page = await fetch(roost.at(`/oauth/authorize?${query(app.client_id)}`));
    const cookie = page.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^roost_oauth_session=[A-Za-z0-9_-]{43}; Path=\/oauth; HttpOnly; SameSite=Lax$/);
    const form = hidden(await page.text());
    const post = (headers: Record<string, string>, fields = form) =>
      fetch(roost.at('/oauth/authorize'), { method: 'POST', body: new URLSearchParams({ ...fields, login: 'alice', password: alice.password, decision: 'authorize' }), headers, redirect: 'manual' });

    // The form's token without its session (a cross-site POST carries no SameSite=Lax cookie)…
    expect((await post({})).status).toBe(422);
    // …or in another session, is a forgery.
    const other = await fetch(roost.at(`/oauth/authorize?${query(app.client_id)}`));
    const otherCookie = other.headers.get('set-cookie')!.split(';')[0];
    expect(otherCookie).not.toBe(cookie.split(';')[0]);
    expect((await post({ cookie: otherCookie })).status).toBe(422);
    // The same session keeps its cookie and token.
    const again = await fetch(roost.at(`/oauth/authorize?${query(app.client_id)}`), { headers: { cookie: cookie.split(';')[0] } });
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(hidden(await again.text()).authenticity_token).toBe(form.authenticity_token);
    const ok = await post({ cookie: cookie.split(';')[0] });
    expect(ok.status).toBe(302);
    expect(new URL(ok.headers.get('location')!).searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('isolates an app name that carries direction, so it cannot reverse the sentence', async () => {
    const app = await registerApp('Evil\u202E tnuocca');
    const html = await (await fetch(roost.at(`/oauth/authorize?${query(app.client_id)}`))).text();
    expect(html).toContain('<title>Authorize \u2068Evil\u202E tnuocca\u2069</title>');
    expect(html).toContain('<strong><bdi>Evil\u202E tnuocca</bdi></strong> would like permission to access your account.');
    expect(html).toContain('strong,a,bdi{unicode-bidi:isolate}');
    const plain = await registerApp('Plain App');
    expect(await (await fetch(roost.at(`/oauth/authorize?${query(plain.client_id)}`))).text()).toContain('<strong>Plain App</strong> would like');
  });
});

describe('the data directory', () => {
  it('is created 0700 and an existing 0755 one is tightened, with secrets 0600', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'roost-perm-'));
    try {
      const fresh = path.join(root, 'fresh', 'data');
      loadOrCreateSecrets(fresh);
      expect(statSync(fresh).mode & 0o777).toBe(0o700);
      expect(statSync(secretsPath(fresh)).mode & 0o777).toBe(0o600);

      const old = path.join(root, 'old');
      mkdirSync(old, { mode: 0o755 });
      chmodSync(old, 0o755);
      writeFileSync(secretsPath(old), JSON.stringify({ secretKeyBase: 'k', vapidPublicKey: 'p', vapidPrivateKey: 'q' }), { mode: 0o644 });
      chmodSync(secretsPath(old), 0o644);
      loadOrCreateSecrets(old);
      expect(statSync(old).mode & 0o777).toBe(0o700);
      expect(statSync(secretsPath(old)).mode & 0o777).toBe(0o600);

      const locked = path.join(root, 'locked');
      mkdirSync(locked, { mode: 0o755 });
      chmodSync(locked, 0o755);
      lockDataDir(locked).release();
      expect(statSync(locked).mode & 0o777).toBe(0o700);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('keeps the embedded cluster (its WAL holds private keys) owner-only, an old 0755 one too', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'roost-perm-'));
    try {
      const dataDir = path.join(root, 'data');
      mkdirSync(dataDir, { mode: 0o755 });
      chmodSync(dataDir, 0o755);
      const first = await startEmbeddedPostgres({ dataDir });
      await first.stop();
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(embeddedClusterDir(dataDir)).mode & 0o777).toBe(0o700);
      expect(statSync(path.join(embeddedClusterDir(dataDir), 'pg_wal')).isDirectory()).toBe(true);
      // Loosened since (a copy, a restore): tightened again, and the server starts on it.
      chmodSync(dataDir, 0o755);
      chmodSync(embeddedClusterDir(dataDir), 0o755);
      const again = await startEmbeddedPostgres({ dataDir });
      await again.stop();
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(embeddedClusterDir(dataDir)).mode & 0o777).toBe(0o700);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
