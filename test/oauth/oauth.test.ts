/**
 * OAuth 2 through the real server: app registration, the sign-in and consent page, the
 * authorization-code grant with PKCE, password and client-credentials grants, revocation,
 * scope enforcement, and Doorkeeper's error bodies.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser } from '../helpers/auth.ts';

let roost: TestRoost;
const REDIRECT = 'https://client.example/callback';
const OOB = 'urn:ietf:wg:oauth:2.0:oob';
const PASSWORD = 'correct horse battery';

interface App {
  id: string;
  client_id: string;
  client_secret: string;
}

async function registerApp(scopes = 'read write follow', redirect: string | string[] = [REDIRECT, OOB]): Promise<App> {
  const res = await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Test App', redirect_uris: redirect, scopes } });
  expect(res.status).toBe(200);
  return res.body as App;
}

/** The consent page's session cookie, kept as a browser keeps it (the form's token is bound to it). */
let sessionCookie = '';
const withSession = (): Record<string, string> => (sessionCookie ? { cookie: sessionCookie } : {});

async function postForm(path: string, data: Record<string, string>) {
  return fetch(roost.at(path), { method: 'POST', body: new URLSearchParams(data), redirect: 'manual', headers: withSession() });
}

function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    out[m[1]] = m[2].replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  }
  return out;
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The consent form's hidden fields for an authorization request. */
async function consentForm(params: Record<string, string>): Promise<Record<string, string>> {
  const page = await fetch(roost.at(`/oauth/authorize?${new URLSearchParams({ response_type: 'code', ...params })}`), { headers: withSession() });
  expect(page.status).toBe(200);
  const set = page.headers.get('set-cookie');
  if (set) sessionCookie = set.split(';')[0];
  return hiddenFields(await page.text());
}

/** Signs in on the consent page and returns the code from the redirect. */
async function authorize(app: App, params: Record<string, string> = {}, login = 'alice'): Promise<string> {
  const hidden = await consentForm({ client_id: app.client_id, redirect_uri: REDIRECT, ...params });
  const res = await postForm('/oauth/authorize', { ...hidden, login, password: PASSWORD, decision: 'authorize' });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location')!).searchParams.get('code')!;
}

const grantCount = async () => Number((await roost.services.db.sql.query<{ n: string }>('select count(*) as n from oauth_access_grants'))[0].n);

const invalidGrant = {
  error: 'invalid_grant',
  error_description:
    'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
};
const invalidClient = {
  error: 'invalid_client',
  error_description: 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
};
const invalidScope = { error: 'invalid_scope', error_description: 'The requested scope is invalid, unknown, or malformed.' };
const missing = (param: string) => ({ error: 'invalid_request', error_description: `Missing required parameter: ${param}.` });

beforeAll(async () => {
  roost = await startTestRoost();
  await createTestUser(roost, 'alice', { password: PASSWORD });
  await createTestUser(roost, 'pat', { password: PASSWORD, approved: false });
  const dora = await createTestUser(roost, 'dora', { password: PASSWORD });
  await roost.services.db.sql.query('update users set disabled = true where id = $1', [dora.user.id]);
});
afterAll(async () => roost?.close());

describe('POST /api/v1/apps', () => {
  it('returns the CredentialApplication with website null and the VAPID key', async () => {
    const res = await apiRequest(roost, '/api/v1/apps', {
      body: { client_name: 'My App', redirect_uris: OOB, scopes: 'read write push' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      name: 'My App',
      website: null,
      scopes: ['read', 'write', 'push'],
      redirect_uri: OOB,
      redirect_uris: [OOB],
      vapid_key: roost.services.secrets.vapidPublicKey,
      client_id: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      client_secret_expires_at: 0,
    });
  });

  it('accepts form data with several redirect URIs and defaults scopes to read', async () => {
    const body = new URLSearchParams();
    body.append('client_name', 'Form App');
    body.append('redirect_uris[]', 'https://a.example/cb');
    body.append('redirect_uris[]', 'https://b.example/cb');
    body.append('website', 'https://a.example');
    const res = await apiRequest(roost, '/api/v1/apps', { body });
    expect(res.status).toBe(200);
    expect(res.body.redirect_uris).toEqual(['https://a.example/cb', 'https://b.example/cb']);
    expect(res.body.redirect_uri).toBe('https://a.example/cb\nhttps://b.example/cb');
    expect(res.body.scopes).toEqual(['read']);
    expect(res.body.website).toBe('https://a.example');
  });

  it('splits a redirect_uris string on whitespace, takes native-app schemes, and reads a blank scopes as the default', async () => {
    const res = await apiRequest(roost, '/api/v1/apps', {
      body: { client_name: 'Native', redirect_uris: 'myapp://oauth\ncom.example.app:/callback  https://c.example/cb', scopes: '', website: '' },
    });
    expect(res.status).toBe(200);
    expect(res.body.redirect_uris).toEqual(['myapp://oauth', 'com.example.app:/callback', 'https://c.example/cb']);
    expect(res.body.scopes).toEqual(['read']);
    expect(res.body.website).toBeNull();
  });

  it.each([
    [{ redirect_uris: OOB }, "Validation failed: Application name can't be blank"],
    [{ client_name: 'x' }, "Validation failed: Redirect URI can't be blank"],
    [{ client_name: 'x', redirect_uris: 'not a uri' }, 'Validation failed: Redirect URI must be an absolute URI.'],
    [{ client_name: 'x', redirect_uris: 'javascript:alert(1)' }, 'Validation failed: Redirect URI is forbidden by the server.'],
    [{ client_name: 'x', redirect_uris: 'https://a.example/cb#top' }, 'Validation failed: Redirect URI cannot contain a fragment.'],
    [{ client_name: 'x', redirect_uris: 'localhost:3000/cb' }, 'Validation failed: Redirect URI must specify a scheme.'],
    [{ client_name: 'x', redirect_uris: OOB, scopes: 'read fly' }, "Validation failed: Scopes doesn't match configured on the server."],
    [{ client_name: 'x'.repeat(61), redirect_uris: OOB }, 'Validation failed: Application name is too long (maximum is 60 characters)'],
    [{ client_name: 'x', redirect_uris: OOB, website: 'ftp://a.example' }, 'Validation failed: Application website is invalid'],
    [{ redirect_uris: 'nope' }, "Validation failed: Application name can't be blank, Redirect URI must be an absolute URI."],
  ])('rejects %j with 422 as Mastodon words it', async (body, error) => {
    const res = await apiRequest(roost, '/api/v1/apps', { body });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error });
  });
});

describe('the consent page', () => {
  it('shows the app and its scopes in words, under a strict policy', async () => {
    const app = await registerApp();
    const page = await fetch(roost.at(`/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.client_id, redirect_uri: REDIRECT, scope: 'read write' })}`));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' https://client.example; frame-ancestors 'none'; base-uri 'none'",
    );
    const html = await page.text();
    expect(html).toContain('<title>Authorize Test App</title>');
    expect(html).toContain('<strong>Test App</strong> would like permission to access your account.');
    expect(html).toContain('<li data-scope="read">read all your account data <small>(read)</small></li>');
    expect(html).toContain('<li data-scope="write">modify all your account data <small>(write)</small></li>');
    expect(html).toContain('<button type="submit" name="decision" value="authorize" id="authorize">Authorize</button>');
    expect(html).toContain('id="deny" formnovalidate>Deny</button>');
    const hidden = hiddenFields(html);
    expect(Object.keys(hidden).sort()).toEqual(
      ['authenticity_token', 'client_id', 'code_challenge', 'code_challenge_method', 'redirect_uri', 'response_type', 'scope', 'state'],
    );
    expect(hidden.authenticity_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('lets the form lead to a native app scheme, and nowhere for out-of-band', async () => {
    const app = await registerApp('read', ['myapp://oauth', OOB]);
    const native = await fetch(roost.at(`/oauth/authorize?response_type=code&client_id=${app.client_id}&redirect_uri=${encodeURIComponent('myapp://oauth')}`));
    expect(native.headers.get('content-security-policy')).toContain("form-action 'self' myapp:;");
    const oob = await fetch(roost.at(`/oauth/authorize?response_type=code&client_id=${app.client_id}&redirect_uri=${encodeURIComponent(OOB)}`));
    expect(oob.headers.get('content-security-policy')).toContain("form-action 'self';");
  });

  it('refuses a wrong password, a forged form, and pending or disabled users, creating nothing', async () => {
    const app = await registerApp();
    const hidden = await consentForm({ client_id: app.client_id, redirect_uri: REDIRECT, scope: 'read', state: 'xyz' });
    const before = await grantCount();

    const wrong = await postForm('/oauth/authorize', { ...hidden, login: 'alice', password: 'nope', decision: 'authorize' });
    expect(wrong.status).toBe(401);
    const wrongHtml = await wrong.text();
    expect(wrongHtml).toContain('<p class="error" id="error">Invalid username, e-mail address or password.</p>');
    expect(wrongHtml).toContain('value="alice"'); // the login stays filled in
    expect(hiddenFields(wrongHtml).authenticity_token).toBe(hidden.authenticity_token);

    const unknown = await postForm('/oauth/authorize', { ...hidden, login: 'nobody', password: PASSWORD, decision: 'authorize' });
    expect(unknown.status).toBe(401);

    const pending = await postForm('/oauth/authorize', { ...hidden, login: 'pat', password: PASSWORD, decision: 'authorize' });
    expect(pending.status).toBe(401);
    expect(await pending.text()).toContain('<p class="error" id="error">Your account is pending review by our staff</p>');

    const disabled = await postForm('/oauth/authorize', { ...hidden, login: 'dora@example.test', password: PASSWORD, decision: 'authorize' });
    expect(disabled.status).toBe(401);
    expect(await disabled.text()).toContain('<p class="error" id="error">Your login is currently disabled</p>');

    const forged = await postForm('/oauth/authorize', { ...hidden, authenticity_token: 'x'.repeat(43), login: 'alice', password: PASSWORD, decision: 'authorize' });
    expect(forged.status).toBe(422);
    expect(await forged.text()).toContain('The form has expired or did not come from this server.');
    // The token is bound to the parameters: the same token with a wider scope is a forgery.
    const widened = await postForm('/oauth/authorize', { ...hidden, scope: 'read write', login: 'alice', password: PASSWORD, decision: 'authorize' });
    expect(widened.status).toBe(422);

    expect(await grantCount()).toBe(before);
  });

  it('redirects with the code and state on Authorize, with access_denied on Deny', async () => {
    const app = await registerApp();
    const hidden = await consentForm({ client_id: app.client_id, redirect_uri: REDIRECT, state: 'xyz' });
    const before = await grantCount();
    const ok = await postForm('/oauth/authorize', { ...hidden, login: 'ALICE', password: PASSWORD, decision: 'authorize' });
    expect(ok.status).toBe(302);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    const location = new URL(ok.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect([...location.searchParams.keys()]).toEqual(['code', 'state']);
    expect(location.searchParams.get('state')).toBe('xyz');
    expect(location.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await grantCount()).toBe(before + 1);
    // Stored hashed, expiring in ten minutes.
    const [grant] = await roost.services.db.sql.query<{ code_hash: string; seconds: number }>(
      'select code_hash, extract(epoch from expires_at - created_at)::int as seconds from oauth_access_grants order by id desc limit 1',
    );
    expect(grant.code_hash).toBe(createHash('sha256').update(location.searchParams.get('code')!).digest('hex'));
    expect(grant.seconds).toBe(600);

    const denied = await postForm('/oauth/authorize', { ...hidden, decision: 'deny' });
    expect(denied.status).toBe(302);
    const loc = new URL(denied.headers.get('location')!);
    expect(`${loc.origin}${loc.pathname}`).toBe(REDIRECT);
    expect(Object.fromEntries(loc.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'The resource owner or authorization server denied the request.',
      state: 'xyz',
    });
    expect(await grantCount()).toBe(before + 1);
  });

  it('shows the code on a page for out-of-band clients', async () => {
    const app = await registerApp();
    const hidden = await consentForm({ client_id: app.client_id, redirect_uri: OOB, scope: 'read' });
    const page = await postForm('/oauth/authorize', { ...hidden, login: 'alice', password: PASSWORD, decision: 'authorize' });
    expect(page.status).toBe(200);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const code = /<code id="authorization-code">([A-Za-z0-9_-]{43})<\/code>/.exec(await page.text())![1];
    const res = await apiRequest(roost, '/oauth/token', {
      body: { grant_type: 'authorization_code', code, redirect_uri: OOB, client_id: app.client_id, client_secret: app.client_secret },
    });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('read');

    const denied = await postForm('/oauth/authorize', { ...hidden, decision: 'deny' });
    expect(denied.status).toBe(200);
    expect(await denied.text()).toContain('<p class="error" id="error">You denied the authorization.</p>');
  });

  it('shows the errors it cannot trust a redirect URI for, and redirects the others', async () => {
    const app = await registerApp('read');
    const show = async (query: string) => {
      const res = await fetch(roost.at(`/oauth/authorize?${query}`), { redirect: 'manual' });
      return { status: res.status, html: await res.text() };
    };
    const redirected = async (query: string) => {
      const res = await fetch(roost.at(`/oauth/authorize?${query}`), { redirect: 'manual' });
      expect(res.status).toBe(302);
      const loc = new URL(res.headers.get('location')!);
      expect(`${loc.origin}${loc.pathname}`).toBe(REDIRECT);
      return Object.fromEntries(loc.searchParams);
    };
    const base = `client_id=${app.client_id}&redirect_uri=${encodeURIComponent(REDIRECT)}`;

    const unknown = await show(`response_type=code&client_id=nope&redirect_uri=${encodeURIComponent(REDIRECT)}`);
    expect(unknown.status).toBe(400);
    expect(unknown.html).toContain('<p class="error" id="error">Client authentication failed: unknown client.</p>');
    const evil = await show(`response_type=code&client_id=${app.client_id}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`);
    expect(evil.status).toBe(400);
    expect(evil.html).toContain('<p class="error" id="error">The redirect URI included is not valid.</p>');

    expect(await redirected(`response_type=token&${base}&state=q`)).toEqual({
      error: 'unsupported_response_type',
      error_description: 'The authorization server does not support this response type.',
      state: 'q',
    });
    expect(await redirected(`response_type=code&${base}&scope=write&state=q`)).toEqual({ ...invalidScope, state: 'q' });
    expect(await redirected(`response_type=code&${base}&scope=read+fly`)).toEqual(invalidScope);
    expect(await redirected(`response_type=code&${base}&code_challenge=${'a'.repeat(43)}&code_challenge_method=plain`)).toEqual({
      error: 'invalid_request',
      error_description: 'The code_challenge_method must be S256.',
    });
    expect(await redirected(`response_type=code&${base}&code_challenge=short&code_challenge_method=S256`)).toEqual({
      error: 'invalid_request',
      error_description: 'The code challenge is malformed.',
    });

    // Out of band, nothing is redirected.
    const oobApp = await registerApp('read', OOB);
    const oob = await show(`response_type=code&client_id=${oobApp.client_id}&redirect_uri=${encodeURIComponent(OOB)}&scope=write`);
    expect(oob.status).toBe(400);
    expect(oob.html).toContain('<p class="error" id="error">The requested scope is invalid, unknown, or malformed.</p>');
  });
});

describe('the authorization-code grant with PKCE', () => {
  it('exchanges a code once, for the right verifier, client and redirect URI only', async () => {
    const app = await registerApp();
    const other = await registerApp();
    const { verifier, challenge } = pkce();
    const code = await authorize(app, { scope: 'read write', code_challenge: challenge, code_challenge_method: 'S256' });
    const body = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app.client_id, client_secret: app.client_secret, code_verifier: verifier };
    const exchange = (changes: Record<string, string | undefined>) =>
      apiRequest(roost, '/oauth/token', { body: Object.fromEntries(Object.entries({ ...body, ...changes }).filter(([, v]) => v !== undefined)) });

    for (const [changes, status, error] of [
      [{ code_verifier: undefined }, 400, missing('code_verifier')],
      [{ redirect_uri: undefined }, 400, missing('redirect_uri')],
      [{ code_verifier: pkce().verifier }, 400, invalidGrant],
      [{ redirect_uri: 'urn:ietf:wg:oauth:2.0:oob' }, 400, invalidGrant],
      [{ client_secret: 'wrong' }, 401, invalidClient],
      [{ client_id: other.client_id, client_secret: other.client_secret }, 400, invalidGrant],
      [{ code: 'not-a-code' }, 400, invalidGrant],
      [{ code: undefined }, 400, invalidGrant],
    ] as const) {
      const res = await exchange(changes);
      expect({ changes, status: res.status, body: res.body }).toEqual({ changes, status, body: error });
    }

    // None of those spent the code.
    const res = await exchange({});
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    expect(res.body).toEqual({ access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), token_type: 'Bearer', scope: 'read write', created_at: expect.any(Number) });
    expect(Math.abs(res.body.created_at - Date.now() / 1000)).toBeLessThan(60);
    const token = res.body.access_token as string;

    const verify = await apiRequest(roost, '/api/v1/apps/verify_credentials', { token });
    expect(verify.status).toBe(200);
    expect(verify.body).toEqual({
      id: app.id,
      name: 'Test App',
      website: null,
      scopes: ['read', 'write', 'follow'],
      redirect_uri: `${REDIRECT}\n${OOB}`,
      redirect_uris: [REDIRECT, OOB],
      vapid_key: roost.services.secrets.vapidPublicKey,
    });
    const me = await apiRequest(roost, '/api/v1/accounts/verify_credentials', { token });
    expect(me.status).toBe(200);
    expect(me.body.username).toBe('alice');

    // A second use fails, and revokes what the first one gave: the code may have been stolen.
    const again = await exchange({});
    expect(again.status).toBe(400);
    expect(again.body).toEqual(invalidGrant);
    const after = await apiRequest(roost, '/api/v1/apps/verify_credentials', { token });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: 'The access token is invalid' });
  });

  it('needs no verifier when the request had no challenge, and refuses an expired code', async () => {
    const app = await registerApp();
    const code = await authorize(app);
    const body = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app.client_id, client_secret: app.client_secret };
    await roost.services.db.sql.query("update oauth_access_grants set expires_at = now() - interval '1 second' where code_hash = $1", [
      createHash('sha256').update(code).digest('hex'),
    ]);
    const expired = await apiRequest(roost, '/oauth/token', { body });
    expect(expired.status).toBe(400);
    expect(expired.body).toEqual(invalidGrant);

    const fresh = await authorize(app);
    const res = await apiRequest(roost, '/oauth/token', { body: { ...body, code: fresh } });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('read'); // no scope asked: Doorkeeper's default
  });

  it('takes the client credentials as HTTP Basic and the request as a form', async () => {
    const app = await registerApp();
    const { verifier, challenge } = pkce();
    const code = await authorize(app, { code_challenge: challenge, code_challenge_method: 'S256' });
    const res = await fetch(roost.at('/oauth/token'), {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { token_type: string }).token_type).toBe('Bearer');
  });
});

describe('password and client-credentials grants', () => {
  it('issues a user token by username or e-mail, and refuses wrong or refused credentials alike', async () => {
    const app = await registerApp('read write');
    const creds = { client_id: app.client_id, client_secret: app.client_secret };
    for (const username of ['alice', 'ALICE@example.test']) {
      const res = await apiRequest(roost, '/oauth/token', { body: { grant_type: 'password', username, password: PASSWORD, scope: 'read', ...creds } });
      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('read');
      expect((await apiRequest(roost, '/api/v1/accounts/verify_credentials', { token: res.body.access_token })).body.username).toBe('alice');
    }
    for (const body of [
      { username: 'alice', password: 'wrong' },
      { username: 'alice' },
      { username: 'pat', password: PASSWORD },
      { username: 'dora', password: PASSWORD },
      { username: 'alice', password: 'wrong', scope: 'admin:write' }, // the user is checked before the scope, as Doorkeeper does
    ]) {
      const res = await apiRequest(roost, '/oauth/token', { body: { grant_type: 'password', ...body, ...creds } });
      expect({ body, status: res.status, error: res.body }).toEqual({ body, status: 400, error: invalidGrant });
    }
    const scope = await apiRequest(roost, '/oauth/token', { body: { grant_type: 'password', username: 'alice', password: PASSWORD, scope: 'follow', ...creds } });
    expect(scope.status).toBe(400);
    expect(scope.body).toEqual(invalidScope);
  });

  it('issues an app token with client credentials; it is no user', async () => {
    const app = await registerApp('read write');
    const basic = Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64');
    const res = await apiRequest(roost, '/oauth/token', { body: { grant_type: 'client_credentials', scope: 'write' }, headers: { authorization: `Basic ${basic}` } });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('write');
    const verify = await apiRequest(roost, '/api/v1/apps/verify_credentials', { token: res.body.access_token });
    expect(verify.status).toBe(200);
    expect(verify.body.name).toBe('Test App');
    const user = await apiRequest(roost, '/api/v1/accounts/verify_credentials', { token: res.body.access_token });
    expect(user.status).toBe(403); // write only: outside the scopes before anything else
    const readApp = await apiRequest(roost, '/oauth/token', { body: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret } });
    expect(readApp.body.scope).toBe('read');
    const noUser = await apiRequest(roost, '/api/v1/accounts/verify_credentials', { token: readApp.body.access_token });
    expect(noUser.status).toBe(422);
    expect(noUser.body).toEqual({ error: 'This method requires an authenticated user' });
  });

  it('accepts a granular scope within a registered parent, never the reverse', async () => {
    const app = await registerApp('read:accounts write');
    const ok = await apiRequest(roost, '/oauth/token', { body: { grant_type: 'client_credentials', scope: 'read:accounts write:statuses', client_id: app.client_id, client_secret: app.client_secret } });
    expect(ok.status).toBe(200);
    expect(ok.body.scope).toBe('read:accounts write:statuses');
    const wider = await apiRequest(roost, '/oauth/token', { body: { grant_type: 'client_credentials', scope: 'read', client_id: app.client_id, client_secret: app.client_secret } });
    expect(wider.status).toBe(400);
    expect(wider.body).toEqual(invalidScope);
  });

  it('answers Doorkeeper errors exactly', async () => {
    const app = await registerApp('read');
    const creds = { client_id: app.client_id, client_secret: app.client_secret };
    for (const [body, status, error] of [
      [{ grant_type: 'client_credentials', client_id: app.client_id, client_secret: 'x' }, 401, invalidClient],
      [{ grant_type: 'client_credentials' }, 401, invalidClient],
      [{ grant_type: 'client_credentials', client_id: 'nope', client_secret: app.client_secret }, 401, invalidClient],
      [{ grant_type: 'password', username: 'alice', password: PASSWORD, client_id: app.client_id }, 401, invalidClient],
      [{ grant_type: 'client_credentials', scope: 'admin:write', ...creds }, 400, invalidScope],
      [{ grant_type: 'client_credentials', scope: 'fly', ...creds }, 400, invalidScope],
      [{ grant_type: 'implicit', ...creds }, 400, { error: 'unsupported_grant_type', error_description: 'The authorization grant type is not supported by the authorization server.' }],
      [{ grant_type: 'refresh_token', refresh_token: 'x', ...creds }, 400, { error: 'unsupported_grant_type', error_description: 'The authorization grant type is not supported by the authorization server.' }],
      [{ ...creds }, 400, missing('grant_type')],
    ] as const) {
      const res = await apiRequest(roost, '/oauth/token', { body });
      expect({ body, status: res.status, error: res.body }).toEqual({ body, status, error });
    }
  });
});

describe('tokens', () => {
  it('are revoked by their app only, and then stop working', async () => {
    const app = await registerApp('read');
    const other = await registerApp('read');
    const code = await authorize(app);
    const { body } = await apiRequest(roost, '/oauth/token', {
      body: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app.client_id, client_secret: app.client_secret },
    });
    const token = body.access_token as string;
    expect((await apiRequest(roost, '/api/v1/apps/verify_credentials', { token })).status).toBe(200);
    const unauthorized = { error: 'unauthorized_client', error_description: 'You are not authorized to revoke this token' };

    const foreign = await apiRequest(roost, '/oauth/revoke', { body: { token, client_id: other.client_id, client_secret: other.client_secret } });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual(unauthorized);
    const badSecret = await apiRequest(roost, '/oauth/revoke', { body: { token, client_id: app.client_id, client_secret: 'x' } });
    expect(badSecret.status).toBe(403);
    expect(badSecret.body).toEqual(unauthorized);
    expect((await apiRequest(roost, '/api/v1/apps/verify_credentials', { token })).status).toBe(200);

    const revoked = await apiRequest(roost, '/oauth/revoke', { body: { token, client_id: app.client_id, client_secret: app.client_secret } });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({});
    const after = await apiRequest(roost, '/api/v1/apps/verify_credentials', { token });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: 'The access token is invalid' });
    // Idempotent, and unknown tokens are fine (RFC 7009).
    expect((await apiRequest(roost, '/oauth/revoke', { body: { token, client_id: app.client_id, client_secret: app.client_secret } })).status).toBe(200);
    const unknown = await apiRequest(roost, '/oauth/revoke', { body: { token: 'unknown', client_id: app.client_id, client_secret: app.client_secret } });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({});
  });

  it('are stored hashed', async () => {
    const app = await registerApp('read');
    const { body } = await apiRequest(roost, '/oauth/token', { body: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret } });
    const rows = await roost.services.db.sql.query<{ token_hash: string }>('select token_hash from oauth_access_tokens where token_hash = $1 or token_hash = $2', [
      body.access_token,
      createHash('sha256').update(body.access_token).digest('hex'),
    ]);
    expect(rows).toEqual([{ token_hash: createHash('sha256').update(body.access_token).digest('hex') }]);
  });

  it('are needed at all: no token, or a made-up one, is a 401', async () => {
    for (const token of [undefined, 'made-up']) {
      const res = await apiRequest(roost, '/api/v1/apps/verify_credentials', { token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'The access token is invalid' });
    }
  });
});

describe('GET /.well-known/oauth-authorization-server', () => {
  it('serves the RFC 8414 metadata as Mastodon does', async () => {
    const res = await apiRequest(roost, '/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    const base = roost.at('');
    expect(res.body).toEqual({
      issuer: `${base}/`,
      service_documentation: 'https://docs.joinmastodon.org/',
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      app_registration_endpoint: `${base}/api/v1/apps`,
      revocation_endpoint: `${base}/oauth/revoke`,
      scopes_supported: [
        'read', 'write',
        'write:accounts', 'write:blocks', 'write:bookmarks', 'write:conversations', 'write:favourites', 'write:filters',
        'write:follows', 'write:lists', 'write:media', 'write:mutes', 'write:notifications', 'write:reports', 'write:statuses',
        'read:accounts', 'read:blocks', 'read:bookmarks', 'read:favourites', 'read:filters', 'read:follows', 'read:lists',
        'read:mutes', 'read:notifications', 'read:search', 'read:statuses',
        'follow', 'push', 'profile',
        'admin:read', 'admin:read:accounts', 'admin:read:reports', 'admin:read:domain_allows', 'admin:read:domain_blocks',
        'admin:read:ip_blocks', 'admin:read:email_domain_blocks', 'admin:read:canonical_email_blocks',
        'admin:write', 'admin:write:accounts', 'admin:write:reports', 'admin:write:domain_allows', 'admin:write:domain_blocks',
        'admin:write:ip_blocks', 'admin:write:email_domain_blocks', 'admin:write:canonical_email_blocks',
      ],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'password', 'client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    });
  });
});
