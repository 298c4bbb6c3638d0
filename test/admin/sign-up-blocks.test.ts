/**
 * The sign-up blocks through the real server: /api/v1/admin/email_domain_blocks,
 * canonical_email_blocks and ip_blocks with Mastodon's JSON, each stopping a sign-up with
 * Mastodon's error (a domain and its subdomains, an MX host's domain, `a.b+x@gmail.com` against
 * `ab@gmail.com`, an IP range), sign_up_requires_approval leaving the user pending, no_access
 * refusing a sign-in and every request; bad input (422, 404) writing nothing; a user's token 403.
 * The client address is the X-Forwarded-For of a loopback peer (a trusted proxy by default).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedStatements, eventually, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { setMxResolver } from '../../src/services/email-blocks.ts';
import { invalidateIpBlocks } from '../../src/services/ip-blocks.ts';
import { runCommand } from '../../src/control/commands.ts';

let roost: TestRoost;
let admin: TestUser;
let plain: TestUser;
let appToken: string;
let client: { client_id: string; client_secret: string };
const mx = new Map<string, string[]>();
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function rows(table: string): Promise<number> {
  const [r] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from ${table}`);
  return r!.n;
}

let serial = 0;
/** POST /api/v1/accounts from `ip` (X-Forwarded-For from loopback). */
function signUp(email: string, ip = '198.51.100.1') {
  serial++;
  return apiRequest(roost, '/api/v1/accounts', {
    token: appToken,
    headers: { 'x-forwarded-for': ip },
    body: { username: `newbie${serial}`, email, password: 'long enough pw', agreement: true, locale: 'en' },
  });
}

function passwordGrant(username: string, password: string, ip: string) {
  return apiRequest(roost, '/oauth/token', {
    headers: { 'x-forwarded-for': ip },
    body: { grant_type: 'password', client_id: client.client_id, client_secret: client.client_secret, username, password, scope: 'read' },
  });
}

beforeAll(async () => {
  roost = await startTestRoost();
  // DNS as the test says: no network.
  setMxResolver(roost.services, async (domain) => mx.get(domain) ?? []);
  admin = await createTestUser(roost, 'operator', { role: 'Admin', scopes: ['read', 'admin:read', 'admin:write'] });
  plain = await createTestUser(roost, 'plain', { scopes: ['read', 'admin:read', 'admin:write'] });
  client = (await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Blocks', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' } })).body;
  appToken = (
    await apiRequest(roost, '/oauth/token', { body: { grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret, scope: 'read write' } })
  ).body.access_token;
});
afterAll(async () => {
  await roost?.close();
});

describe('e-mail domain blocks', () => {
  it('are created, shown, listed with their history, and stop sign-ups at the domain, its subdomains and its MX hosts', async () => {
    const created = await admin.api('/api/v1/admin/email_domain_blocks', { body: { domain: ' Spam.Example. ' } });
    expect(created.status).toBe(200);
    const today = Math.floor(Date.now() / 86_400_000) * 86_400;
    expect(created.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      domain: 'spam.example',
      created_at: expect.stringMatching(ISO),
      history: Array.from({ length: 7 }, (_, i) => ({ day: String(today - i * 86_400), accounts: '0', uses: '0' })),
    });
    const id = created.body.id as string;
    expect((await admin.api(`/api/v1/admin/email_domain_blocks/${id}`)).body).toEqual(created.body);

    const refused = await signUp('someone@spam.example', '198.51.100.7');
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      error: 'Validation failed: Email uses a disallowed e-mail provider',
      details: { email: [{ error: 'ERR_BLOCKED', description: 'uses a disallowed e-mail provider' }] },
    });
    expect((await signUp('someone@mail.SPAM.example', '198.51.100.7')).body.details).toEqual({
      email: [{ error: 'ERR_BLOCKED', description: 'uses a disallowed e-mail provider' }],
    });
    await signUp('other@spam.example', '198.51.100.8');
    // A domain whose mail goes through a blocked host.
    mx.set('disguised.org', ['mx1.spam.example']);
    expect((await signUp('x@disguised.org', '198.51.100.8')).body.details).toEqual({
      email: [{ error: 'ERR_BLOCKED', description: 'uses a disallowed e-mail provider' }],
    });
    // A look-alike that is not a subdomain passes.
    expect((await signUp('fine@notspam.example')).status).toBe(200);

    const listed = await admin.api('/api/v1/admin/email_domain_blocks');
    expect(listed.status).toBe(200);
    expect(listed.body).toHaveLength(1);
    expect(listed.body[0].history[0]).toEqual({ day: String(today), accounts: '2', uses: '4' });
    expect(await rows('users')).toBe(3);

    expect((await admin.api(`/api/v1/admin/email_domain_blocks/${id}`, { method: 'DELETE' })).body).toEqual({});
    expect((await admin.api(`/api/v1/admin/email_domain_blocks/${id}`)).status).toBe(404);
    expect((await admin.api(`/api/v1/admin/email_domain_blocks/${id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await signUp('back@spam.example')).status).toBe(200);
    const [log] = await roost.services.db.sql.query<{ actions: string[] }>(
      `select array_agg(action order by id) as actions from admin_action_logs where target_type = 'EmailDomainBlock'`,
    );
    expect(log!.actions).toEqual(['create', 'destroy']);
  });

  it('refuses a blank, malformed or taken domain with Mastodon’s messages, writing nothing', async () => {
    const blank = await admin.api('/api/v1/admin/email_domain_blocks', { body: {} });
    expect(blank.status).toBe(422);
    expect(blank.body).toEqual({ error: "Validation failed: Domain can't be blank" });
    const bad = await admin.api('/api/v1/admin/email_domain_blocks', { body: { domain: 'not a domain' } });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ error: 'Validation failed: Domain is invalid, Domain is not a valid domain name' });
    expect((await admin.api('/api/v1/admin/email_domain_blocks', { body: { domain: 'twice.example' } })).status).toBe(200);
    const twice = await admin.api('/api/v1/admin/email_domain_blocks', { body: { domain: 'TWICE.example' } });
    expect(twice.status).toBe(422);
    expect(twice.body).toEqual({ error: 'Validation failed: Domain has already been taken' });
    expect(await rows('email_domain_blocks')).toBe(1);
    expect((await admin.api('/api/v1/admin/email_domain_blocks/12345')).status).toBe(404);
  });
});

describe('canonical e-mail blocks', () => {
  const sha = (s: string) => createHash('sha256').update(s).digest('hex');

  it('hash the normalised address: a block of a.b+x@gmail.com stops ab@gmail.com', async () => {
    const created = await admin.api('/api/v1/admin/canonical_email_blocks', { body: { email: 'A.B+x@Gmail.com' } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^\d+$/), canonical_email_hash: sha('ab@gmail.com') });
    const id = created.body.id as string;
    expect((await admin.api(`/api/v1/admin/canonical_email_blocks/${id}`)).body).toEqual(created.body);
    expect((await admin.api('/api/v1/admin/canonical_email_blocks')).body).toEqual([created.body]);

    const refused = await signUp('ab@gmail.com');
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      error: 'Validation failed: Email is already taken',
      details: { email: [{ error: 'ERR_TAKEN', description: 'is already taken' }] },
    });
    expect((await signUp('a.b+other@gmail.com')).status).toBe(422);
    expect((await signUp('abc@gmail.com')).status).toBe(200);

    const tested = await admin.api('/api/v1/admin/canonical_email_blocks/test', { body: { email: 'ab+whatever@gmail.com' } });
    expect(tested.status).toBe(200);
    expect(tested.body).toEqual([created.body]);
    expect((await admin.api('/api/v1/admin/canonical_email_blocks/test', { body: { email: 'someone@else.example' } })).body).toEqual([]);
    const missing = await admin.api('/api/v1/admin/canonical_email_blocks/test', { body: {} });
    expect(missing.status).toBe(400);

    // By hash, as another server exports it; twice is Mastodon's uniqueness error.
    const byHash = await admin.api('/api/v1/admin/canonical_email_blocks', { body: { canonical_email_hash: sha('someone@other.example') } });
    expect(byHash.status).toBe(200);
    const again = await admin.api('/api/v1/admin/canonical_email_blocks', { body: { canonical_email_hash: sha('someone@other.example') } });
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ error: 'Validation failed: Canonical email hash has already been taken' });
    expect((await admin.api('/api/v1/admin/canonical_email_blocks', { body: {} })).body).toEqual({ error: "Validation failed: Canonical email hash can't be blank" });
    expect((await admin.api('/api/v1/admin/canonical_email_blocks', { body: { canonical_email_hash: 'xyz' } })).status).toBe(422);
    expect(await rows('canonical_email_blocks')).toBe(2);

    expect((await admin.api(`/api/v1/admin/canonical_email_blocks/${id}`, { method: 'DELETE' })).body).toEqual({});
    expect((await admin.api(`/api/v1/admin/canonical_email_blocks/${id}`)).status).toBe(404);
    expect((await signUp('ab@gmail.com')).status).toBe(200);
  });
});

describe('IP blocks', () => {
  it('read a bare address back as /32 or /128 and a range by its network, with Mastodon’s JSON', async () => {
    const v4 = await admin.api('/api/v1/admin/ip_blocks', { body: { ip: '192.0.2.9', severity: 'no_access', comment: 'scanner' } });
    expect(v4.status).toBe(200);
    expect(v4.body).toEqual({ id: expect.stringMatching(/^\d+$/), ip: '192.0.2.9/32', severity: 'no_access', comment: 'scanner', created_at: expect.stringMatching(ISO), expires_at: null });
    const v6 = await admin.api('/api/v1/admin/ip_blocks', { body: { ip: '2001:db8::1', severity: 'sign_up_block', expires_in: 3600 } });
    expect(v6.body).toMatchObject({ ip: '2001:db8::1/128', severity: 'sign_up_block', comment: '' });
    expect(Date.parse(v6.body.expires_at) - Date.parse(v6.body.created_at)).toBe(3_600_000);
    const range = await admin.api('/api/v1/admin/ip_blocks', { body: { ip: '203.0.113.77/24', severity: 'sign_up_requires_approval' } });
    expect(range.body.ip).toBe('203.0.113.0/24');
    expect((await admin.api(`/api/v1/admin/ip_blocks/${range.body.id}`)).body).toEqual(range.body);
    expect((await admin.api('/api/v1/admin/ip_blocks')).body.map((b: { ip: string }) => b.ip)).toEqual(['203.0.113.0/24', '2001:db8::1/128', '192.0.2.9/32']);

    const updated = await admin.api(`/api/v1/admin/ip_blocks/${v6.body.id}`, { method: 'PUT', body: { comment: 'later', expires_in: null } });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ ...v6.body, comment: 'later', expires_at: null });
    for (const b of [v4, v6, range]) expect((await admin.api(`/api/v1/admin/ip_blocks/${b.body.id}`, { method: 'DELETE' })).body).toEqual({});
    expect(await rows('ip_blocks')).toBe(0);
  });

  it('refuses a malformed range, an unknown or missing severity and a taken range with 422, a missing id with 404, writing nothing', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ip: '10.0.0.300/8', severity: 'no_access' }, 'Validation failed: Ip is invalid'],
      [{ ip: '10.0.0.0/33', severity: 'no_access' }, 'Validation failed: Ip is invalid'],
      [{ ip: 'example.com', severity: 'no_access' }, 'Validation failed: Ip is invalid'],
      [{ ip: '10.0.0.0/8', severity: 'ban_forever' }, 'Validation failed: Severity is not included in the list'],
      [{ ip: '10.0.0.0/8' }, "Validation failed: Severity can't be blank"],
      [{ ip: '10.0.0.0/8', severity: 'no_access', expires_in: 'soon' }, 'Validation failed: Expires in must be a positive number of seconds'],
    ];
    for (const [body, error] of cases) {
      const res = await admin.api('/api/v1/admin/ip_blocks', { body });
      expect({ body, status: res.status, answer: res.body }).toEqual({ body, status: 422, answer: { error } });
    }
    expect(await rows('ip_blocks')).toBe(0);
    const first = await admin.api('/api/v1/admin/ip_blocks', { body: { ip: '10.1.2.3/8', severity: 'sign_up_block' } });
    expect(first.status).toBe(200);
    const taken = await admin.api('/api/v1/admin/ip_blocks', { body: { ip: '10.0.0.0/8', severity: 'no_access' } });
    expect(taken.status).toBe(422);
    expect(taken.body).toEqual({ error: 'Validation failed: Ip has already been taken' });
    const badUpdate = await admin.api(`/api/v1/admin/ip_blocks/${first.body.id}`, { method: 'PUT', body: { severity: 'nope', comment: 'x' } });
    expect(badUpdate.status).toBe(422);
    expect((await admin.api(`/api/v1/admin/ip_blocks/${first.body.id}`)).body).toEqual(first.body);
    for (const [method, body] of [['GET', undefined], ['PUT', { severity: 'no_access' }], ['DELETE', undefined]] as const) {
      const res = await admin.api('/api/v1/admin/ip_blocks/999999', { method, body });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Record not found' });
    }
    await admin.api(`/api/v1/admin/ip_blocks/${first.body.id}`, { method: 'DELETE' });
    const [log] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from admin_action_logs where target_type = 'IpBlock' and target_id = $1`, [first.body.id]);
    expect(log!.n).toBe(2);
  });

  it('stop sign-ups (sign_up_block: 403), make them wait (sign_up_requires_approval), and ignore expired blocks', async () => {
    const block = await admin.api('/api/v1/admin/ip_blocks', { body: { ip: '192.0.2.0/24', severity: 'sign_up_block' } });
    const approval = await admin.api('/api/v1/admin/ip_blocks', { body: { ip: '2001:db8:aa::/48', severity: 'sign_up_requires_approval' } });
    const before = await rows('users');
    const refused = await signUp('blocked@example.test', '192.0.2.44');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'This action is not allowed' });
    expect(await rows('users')).toBe(before);

    const waiting = await signUp('waiting@example.test', '2001:db8:aa::5');
    expect(waiting.status).toBe(200);
    const me = await apiRequest(roost, '/api/v1/accounts/verify_credentials', { token: waiting.body.access_token });
    expect(me.status).toBe(403);
    expect(me.body).toEqual({ error: 'Your login is currently pending approval' });
    const [u] = await roost.services.db.sql.query<{ approved: boolean }>(`select approved from users where email = 'waiting@example.test'`);
    expect(u!.approved).toBe(false);
    expect((await signUp('elsewhere@example.test', '198.51.100.99')).status).toBe(200);

    // An expired block blocks nothing (its expiry set in the past, as time would).
    await admin.api(`/api/v1/admin/ip_blocks/${block.body.id}`, { method: 'PUT', body: { expires_in: 60 } });
    await roost.services.db.sql.query(`update ip_blocks set expires_at = now() - interval '1 second' where id = $1`, [block.body.id]);
    invalidateIpBlocks(roost.services);
    expect((await signUp('expired@example.test', '192.0.2.44')).status).toBe(200);
    for (const b of [block, approval]) await admin.api(`/api/v1/admin/ip_blocks/${b.body.id}`, { method: 'DELETE' });
  });

  it('no_access stops a sign-in and every request from the range, at once, and lifting it lets them through', async () => {
    const walt = await createTestUser(roost, 'walt', { password: 'walt password' });
    expect((await passwordGrant('walt', 'walt password', '203.0.113.50')).status).toBe(200);
    const block = await admin.api('/api/v1/admin/ip_blocks', { body: { ip: '203.0.113.0/25', severity: 'no_access' } });
    expect(block.status).toBe(200);

    const grant = await passwordGrant('walt', 'walt password', '203.0.113.50');
    expect(grant.status).toBe(403);
    expect(grant.body).toEqual({ error: 'This action is not allowed' });
    const api = await apiRequest(roost, '/api/v1/accounts/verify_credentials', { token: walt.token, headers: { 'x-forwarded-for': '203.0.113.50' } });
    expect(api.status).toBe(403);
    expect((await apiRequest(roost, '/api/v1/instance', { headers: { 'x-forwarded-for': '203.0.113.50' } })).status).toBe(403);
    // Outside the range (and the admin here on loopback) all is as before.
    expect((await passwordGrant('walt', 'walt password', '203.0.113.200')).status).toBe(200);
    expect((await walt.api('/api/v1/accounts/verify_credentials')).status).toBe(200);

    expect((await admin.api(`/api/v1/admin/ip_blocks/${block.body.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await passwordGrant('walt', 'walt password', '203.0.113.50')).status).toBe(200);
  });

  it('a change made by another process reaches this one through its NOTIFY', async () => {
    const from = { 'x-forwarded-for': '198.19.7.7' };
    expect((await apiRequest(roost, '/api/v1/instance', { headers: from })).status).toBe(200);
    // As another web process (or psql) would: the row and the notification, nothing in-process.
    await roost.services.db.sql.query(
      `with b as (insert into ip_blocks (id, ip, severity, created_at, updated_at) values ($1, '198.19.0.0/16', 'no_access', now(), now()) returning id)
       select pg_notify('roost_ip_blocks', '') from b`,
      [roost.services.ids.next()],
    );
    await eventually(async () => (await apiRequest(roost, '/api/v1/instance', { headers: from })).status === 403, 10_000, 'the block to apply');
    await roost.services.db.sql.query(`with d as (delete from ip_blocks where ip = '198.19.0.0/16' returning id) select pg_notify('roost_ip_blocks', '') from d`);
    await eventually(async () => (await apiRequest(roost, '/api/v1/instance', { headers: from })).status === 200, 10_000, 'the block to lift');
  });
});

describe('pages', () => {
  it('page by id with Link headers, and a page costs the same statements whatever its size', async () => {
    const made: Record<string, string[]> = { email_domain_blocks: [], canonical_email_blocks: [], ip_blocks: [] };
    for (let i = 1; i <= 3; i++) {
      made.email_domain_blocks!.push((await admin.api('/api/v1/admin/email_domain_blocks', { body: { domain: `page${i}.example` } })).body.id);
      made.canonical_email_blocks!.push((await admin.api('/api/v1/admin/canonical_email_blocks', { body: { email: `page${i}@pages.example` } })).body.id);
      made.ip_blocks!.push((await admin.api('/api/v1/admin/ip_blocks', { body: { ip: `198.18.0.${i}`, severity: 'sign_up_block' } })).body.id);
    }
    for (const [segment, ids] of Object.entries(made)) {
      const first = await admin.api(`/api/v1/admin/${segment}?limit=2`);
      expect(first.body.map((b: { id: string }) => b.id)).toEqual([ids[2], ids[1]]);
      expect(first.headers.get('link')).toBe(
        `<${roost.at(`/api/v1/admin/${segment}?limit=2&max_id=${ids[1]}`)}>; rel="next", <${roost.at(`/api/v1/admin/${segment}?limit=2&since_id=${ids[2]}`)}>; rel="prev"`,
      );
      // (The token lookup is cached a few seconds, so it is left out of the count.)
      const statements = async (limit: number) =>
        (await capturedStatements(roost, () => admin.api(`/api/v1/admin/${segment}?limit=${limit}`), 200)).filter((t) => !/oauth_access_tokens|user_activity/.test(t)).length;
      const expected = segment === 'email_domain_blocks' ? 2 : 1; // (+1: the page's history in one statement)
      expect({ segment, counts: [await statements(1), await statements(3)] }).toEqual({ segment, counts: [expected, expected] });
      for (const id of ids) expect((await admin.api(`/api/v1/admin/${segment}/${id}`, { method: 'DELETE' })).status).toBe(200);
    }
  });
});

describe('the CLI twin', () => {
  it('adds, lists and removes IP blocks and e-mail domain blocks through the same services, in the audit log as the operator', async () => {
    const run = (name: string, args: Record<string, unknown> = {}) => runCommand(roost.services, name, args, {} as never);
    expect(await run('ip-blocks.add', { ip: '100.64.1.2/16', severity: 'no_access', comment: 'wave', expiresIn: '3600' })).toMatchObject({
      block: { ip: '100.64.0.0/16', severity: 'no_access', comment: 'wave' },
    });
    expect((await apiRequest(roost, '/api/v1/instance', { headers: { 'x-forwarded-for': '100.64.9.9' } })).status).toBe(403);
    expect(((await run('ip-blocks.list')).blocks as { ip: string }[]).map((b) => b.ip)).toEqual(['100.64.0.0/16']);
    await expect(run('ip-blocks.add', { ip: 'nonsense', severity: 'no_access' })).rejects.toThrow('Validation failed: Ip is invalid');
    expect(await run('ip-blocks.remove', { ip: '100.64.0.0/16' })).toEqual({ ip: '100.64.0.0/16' });
    expect((await apiRequest(roost, '/api/v1/instance', { headers: { 'x-forwarded-for': '100.64.9.9' } })).status).toBe(200);
    await expect(run('ip-blocks.remove', { ip: '100.64.0.0/16' })).rejects.toThrow('No IP block on 100.64.0.0/16');

    expect(await run('email-domains.block', { domain: 'Wave.Example' })).toEqual({ domain: 'wave.example' });
    expect((await signUp('x@sub.wave.example')).status).toBe(422);
    expect(((await run('email-domains.list')).domains as string[]).includes('wave.example')).toBe(true);
    expect(await run('email-domains.unblock', { domain: 'wave.example' })).toEqual({ domain: 'wave.example' });
    expect(((await run('email-domains.list')).domains as string[]).includes('wave.example')).toBe(false);
    const [log] = await roost.services.db.sql.query<{ n: number }>(
      `select count(*)::int as n from admin_action_logs where account_id is null and target_type in ('IpBlock', 'EmailDomainBlock')`,
    );
    expect(log!.n).toBe(4);
  });
});

describe('permissions', () => {
  it('a user without the manage-blocks permission gets 403 on every route, and writes nothing', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/admin/email_domain_blocks'],
      ['GET', '/api/v1/admin/email_domain_blocks/1'],
      ['POST', '/api/v1/admin/email_domain_blocks', { domain: 'x.example' }],
      ['DELETE', '/api/v1/admin/email_domain_blocks/1'],
      ['GET', '/api/v1/admin/canonical_email_blocks'],
      ['GET', '/api/v1/admin/canonical_email_blocks/1'],
      ['POST', '/api/v1/admin/canonical_email_blocks/test', { email: 'a@b.example' }],
      ['POST', '/api/v1/admin/canonical_email_blocks', { email: 'a@b.example' }],
      ['DELETE', '/api/v1/admin/canonical_email_blocks/1'],
      ['GET', '/api/v1/admin/ip_blocks'],
      ['GET', '/api/v1/admin/ip_blocks/1'],
      ['POST', '/api/v1/admin/ip_blocks', { ip: '10.9.9.9', severity: 'no_access' }],
      ['PUT', '/api/v1/admin/ip_blocks/1', { severity: 'no_access' }],
      ['DELETE', '/api/v1/admin/ip_blocks/1'],
    ];
    const counts = async () => [await rows('email_domain_blocks'), await rows('canonical_email_blocks'), await rows('ip_blocks')];
    const before = await counts();
    for (const [method, path, body] of routes) {
      const res = await plain.api(path, { method, body });
      expect({ method, path, status: res.status, body: res.body }).toEqual({ method, path, status: 403, body: { error: 'This action is not allowed' } });
    }
    expect(await counts()).toEqual(before);
  });
});
