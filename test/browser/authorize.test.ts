/**
 * The OAuth sign-in and consent page in a real browser: Chromium (found by find-chromium.ts)
 * driven by playwright-core. Runs with `npm run test:browser`, not `npm test`. The client's redirect URI is a small local HTTP server standing in for the app.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createServer, type Server } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import { chromium, type Browser } from 'playwright-core';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser } from '../helpers/auth.ts';
import { findChromium } from './find-chromium.ts';

const OOB = 'urn:ietf:wg:oauth:2.0:oob';

let roost: TestRoost;
let browser: Browser;
let client: Server;
let clientUrl: string;
let received: URL | undefined;

beforeAll(async () => {
  const executablePath = findChromium(); // throws at once, before any server starts, when there is none
  roost = await startTestRoost({ instance: { title: 'Browser Roost' } });
  await createTestUser(roost, 'bea', { password: 'bea-password-1' });
  client = createServer((req, res) => {
    const url = new URL(req.url ?? '/', clientUrl);
    if (url.pathname !== '/callback') return void res.writeHead(404).end(); // the browser asks for /favicon.ico too
    received = url;
    res.writeHead(200, { 'content-type': 'text/html' }).end('<p id="done">Signed in</p>');
  });
  await new Promise<void>((resolve) => client.listen(0, '127.0.0.1', resolve));
  const addr = client.address();
  clientUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  // playwright-core gives each launch a fresh, empty profile directory of its own.
  browser = await chromium.launch({
    executablePath,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  if (client) await new Promise((r) => client.close(r));
  await roost?.close();
});

describe('the authorize page in Chromium', () => {
  it('signs in, consents, and hands the app a code it exchanges for a token', async () => {
    const redirect = `${clientUrl}/callback`;
    const app = (await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Browser App', redirect_uris: redirect, scopes: 'read write' } })).body;
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const query = new URLSearchParams({ response_type: 'code', client_id: app.client_id, redirect_uri: redirect, scope: 'read write', state: 'st8', code_challenge: challenge, code_challenge_method: 'S256' });

    const page = await browser.newPage();
    await page.goto(roost.at(`/oauth/authorize?${query}`));
    expect(await page.title()).toBe('Authorize Browser App');
    expect(await page.locator('#scopes li').count()).toBe(2);

    await page.fill('#login', 'bea');
    await page.fill('#password', 'wrong password');
    await page.click('#authorize');
    expect(await page.locator('#error').textContent()).toBe('Invalid username, e-mail address or password.');

    await page.fill('#password', 'bea-password-1');
    await Promise.all([page.waitForURL(`${redirect}?**`), page.click('#authorize')]);
    expect(await page.locator('#done').textContent()).toBe('Signed in');
    expect(received?.pathname).toBe('/callback');
    expect(received?.searchParams.get('state')).toBe('st8');
    const code = received!.searchParams.get('code')!;

    const token = await apiRequest(roost, '/oauth/token', {
      body: { grant_type: 'authorization_code', code, redirect_uri: redirect, client_id: app.client_id, client_secret: app.client_secret, code_verifier: verifier },
    });
    expect(token.status).toBe(200);
    expect(token.body.scope).toBe('read write');
    const verify = await apiRequest(roost, '/api/v1/apps/verify_credentials', { token: token.body.access_token });
    expect(verify.body.name).toBe('Browser App');
    await page.close();
  });

  it('shows an out-of-band client its code on the page', async () => {
    const app = (await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Desk App', redirect_uris: OOB, scopes: 'read' } })).body;
    const page = await browser.newPage();
    await page.goto(roost.at(`/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.client_id, redirect_uri: OOB, scope: 'read' })}`));
    await page.fill('#login', 'bea@example.test');
    await page.fill('#password', 'bea-password-1');
    await Promise.all([page.waitForURL(roost.at('/oauth/authorize')), page.click('#authorize')]);
    const code = (await page.locator('code#authorization-code').textContent())!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const token = await apiRequest(roost, '/oauth/token', {
      body: { grant_type: 'authorization_code', code, redirect_uri: OOB, client_id: app.client_id, client_secret: app.client_secret },
    });
    expect(token.status).toBe(200);
    expect(token.body.scope).toBe('read');
    await page.close();
  });

  it('lets the redirect reach a native app scheme (the page policy allows it)', async () => {
    const redirect = 'myapp://oauth';
    const app = (await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Phone App', redirect_uris: redirect, scopes: 'read' } })).body;
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (m.text().includes('Content Security Policy')) violations.push(m.text());
    });
    await page.goto(roost.at(`/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.client_id, redirect_uri: redirect, state: 'n1' })}`));
    await page.fill('#login', 'bea');
    await page.fill('#password', 'bea-password-1');
    // Chromium hands an unknown scheme to the OS; the request for it is what the app would receive.
    const [request] = await Promise.all([page.waitForRequest((r) => r.url().startsWith(`${redirect}?`), { timeout: 10_000 }), page.click('#authorize')]);
    const url = new URL(request.url());
    expect(url.searchParams.get('state')).toBe('n1');
    const token = await apiRequest(roost, '/oauth/token', {
      body: { grant_type: 'authorization_code', code: url.searchParams.get('code'), redirect_uri: redirect, client_id: app.client_id, client_secret: app.client_secret },
    });
    expect(token.status).toBe(200);
    expect(violations).toEqual([]);
    await page.close();
  });
});
