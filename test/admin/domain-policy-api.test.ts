/**
 * The admin API of the domain policy through the real server: /api/v1/admin/domain_blocks and
 * /api/v1/admin/domain_allows with Mastodon's exact JSON, the conflict answer, permissions, bad
 * input that writes nothing, Link-header pages, and GET /api/v1/instance/domain_blocks as the
 * instance's settings say.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedStatements, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let admin: TestUser;
let moderator: TestUser;
let plain: TestUser;
let reader: TestUser;

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function rows(table: string): Promise<number> {
  const [r] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from ${table}`);
  return r!.n;
}

beforeAll(async () => {
  roost = await startTestRoost({ instance: { showDomainBlocks: 'users', showDomainBlocksRationale: 'all' } });
  const adminScopes = ['read', 'admin:read', 'admin:write'];
  admin = await createTestUser(roost, 'operator', { role: 'Admin', scopes: adminScopes });
  moderator = await createTestUser(roost, 'moddy', { role: 'Moderator', scopes: adminScopes });
  plain = await createTestUser(roost, 'plain', { scopes: adminScopes });
  reader = await createTestUser(roost, 'reader', { role: 'Owner', scopes: ['read', 'admin:read:domain_blocks'] });
});
afterAll(async () => {
  await roost?.close();
});

describe('admin domain blocks', () => {
  it('creates, shows, lists, updates and deletes a block with Mastodon’s exact JSON', async () => {
    const created = await admin.api('/api/v1/admin/domain_blocks', {
      method: 'POST',
      body: { domain: ' Example.COM. ', severity: 'suspend', reject_media: 'true', public_comment: 'Spam wave', private_comment: '  ', obfuscate: true },
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      domain: 'example.com',
      // Mastodon's documentation example: the digest of "example.com".
      digest: 'a379a6f6eeafb9a55e378c118034e2751e682fab9f2d30ab13d2125586ce1947',
      created_at: expect.stringMatching(ISO),
      severity: 'suspend',
      reject_media: true,
      reject_reports: false,
      private_comment: null,
      public_comment: 'Spam wave',
      obfuscate: true,
    });
    const id = created.body.id as string;

    const shown = await admin.api(`/api/v1/admin/domain_blocks/${id}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual(created.body);
    expect((await reader.api(`/api/v1/admin/domain_blocks/${id}`)).body).toEqual(created.body);

    const listed = await admin.api('/api/v1/admin/domain_blocks');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([created.body]);

    const updated = await admin.api(`/api/v1/admin/domain_blocks/${id}`, {
      method: 'PUT',
      body: { severity: 'noop', reject_reports: true, private_comment: 'see ticket 7', obfuscate: false },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({
      ...created.body,
      severity: 'noop',
      reject_reports: true,
      private_comment: 'see ticket 7',
      obfuscate: false,
    });
    // PATCH too (Rails' resources); a param left out stays as it was.
    const patched = await admin.api(`/api/v1/admin/domain_blocks/${id}`, { method: 'PATCH', body: { public_comment: '' } });
    expect(patched.body).toEqual({ ...updated.body, public_comment: null });

    const deleted = await admin.api(`/api/v1/admin/domain_blocks/${id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({});
    const gone = await admin.api(`/api/v1/admin/domain_blocks/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ error: 'Record not found' });
    expect((await admin.api(`/api/v1/admin/domain_blocks/${id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await admin.api(`/api/v1/admin/domain_blocks/${id}`, { method: 'PUT', body: { severity: 'silence' } })).status).toBe(404);
    expect(await rows('instance_domain_blocks')).toBe(0);
  });

  it('answers a conflicting block with 422 and the existing block rendered', async () => {
    const parent = await admin.api('/api/v1/admin/domain_blocks', { method: 'POST', body: { domain: 'conflict.example', severity: 'silence' } });
    expect(parent.status).toBe(200);
    expect(parent.body.severity).toBe('silence');

    // The same domain, even stricter: Mastodon wants an update instead.
    const same = await admin.api('/api/v1/admin/domain_blocks', { method: 'POST', body: { domain: 'CONFLICT.example', severity: 'suspend' } });
    expect(same.status).toBe(422);
    expect(same.body).toEqual({ error: 'You have already imposed stricter limits on conflict.example.', existing_domain_block: parent.body });

    // A subdomain no stricter than the parent's block.
    const weaker = await admin.api('/api/v1/admin/domain_blocks', { method: 'POST', body: { domain: 'sub.conflict.example', severity: 'noop' } });
    expect(weaker.status).toBe(422);
    expect(weaker.body).toEqual({ error: 'You have already imposed stricter limits on conflict.example.', existing_domain_block: parent.body });
    expect(await rows('instance_domain_blocks')).toBe(1);

    // A stricter subdomain block is allowed.
    const stricter = await admin.api('/api/v1/admin/domain_blocks', { method: 'POST', body: { domain: 'sub.conflict.example', severity: 'suspend' } });
    expect(stricter.status).toBe(200);
    expect(stricter.body.domain).toBe('sub.conflict.example');

    for (const b of [stricter.body, parent.body]) expect((await admin.api(`/api/v1/admin/domain_blocks/${b.id}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('refuses malformed domains and unknown severities with Mastodon’s messages, writing nothing', async () => {
    const before = await rows('instance_domain_blocks');
    const outbox = await rows('outbox_events');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, "Validation failed: Domain can't be blank"],
      [{ domain: '   ' }, "Validation failed: Domain can't be blank"],
      [{ domain: 'exa mple.com' }, 'Validation failed: Domain is invalid'],
      [{ domain: 'https://example.com/path' }, 'Validation failed: Domain is invalid'],
      [{ domain: 'under_score.example' }, 'Validation failed: Domain is invalid'],
      [{ domain: `${'a'.repeat(64)}.example` }, 'Validation failed: Domain is invalid'],
      [{ domain: 'a..example' }, 'Validation failed: Domain is invalid'],
      [{ domain: 'example.com:99999' }, 'Validation failed: Domain is invalid'],
      [{ domain: 'good.example', severity: 'nuke' }, 'Validation failed: Severity is not included in the list'],
      [{ severity: 'nuke' }, "Validation failed: Domain can't be blank, Severity is not included in the list"],
      [{ domain: ['a.example', 'b.example'] }, "Validation failed: Domain can't be blank"],
    ];
    for (const [body, error] of cases) {
      const r = await admin.api('/api/v1/admin/domain_blocks', { method: 'POST', body });
      expect({ body, status: r.status, answer: r.body }).toEqual({ body, status: 422, answer: { error } });
    }
    const ok = await admin.api('/api/v1/admin/domain_blocks', { method: 'POST', body: { domain: 'bücher.example' } });
    expect(ok.status).toBe(200);
    // IDNA: stored as punycode; the default severity is silence.
    expect(ok.body).toMatchObject({ domain: 'xn--bcher-kva.example', severity: 'silence', digest: sha('xn--bcher-kva.example') });
    const bad = await admin.api(`/api/v1/admin/domain_blocks/${ok.body.id}`, { method: 'PUT', body: { severity: 'nuke', obfuscate: true } });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ error: 'Validation failed: Severity is not included in the list' });
    expect((await admin.api(`/api/v1/admin/domain_blocks/${ok.body.id}`)).body).toEqual(ok.body);
    expect(await rows('instance_domain_blocks')).toBe(before + 1);
    expect(await rows('outbox_events')).toBe(outbox + 1);
    await admin.api(`/api/v1/admin/domain_blocks/${ok.body.id}`, { method: 'DELETE' });
  });

  it('needs the scope and a role that may manage federation', async () => {
    const forbidden = { error: 'This action is not allowed' };
    for (const who of [plain, moderator]) {
      for (const [method, path] of [
        ['GET', '/api/v1/admin/domain_blocks'],
        ['POST', '/api/v1/admin/domain_blocks'],
        ['GET', '/api/v1/admin/domain_allows'],
        ['POST', '/api/v1/admin/domain_allows'],
        ['DELETE', '/api/v1/admin/domain_allows/1'],
      ] as const) {
        const r = await who.api(path, { method, body: method === 'POST' ? { domain: 'nope.example' } : undefined });
        expect({ who: who.account.username, path, method, status: r.status, body: r.body }).toEqual({ who: who.account.username, path, method, status: 403, body: forbidden });
      }
    }
    // An Owner whose token lacks the write scope.
    const r = await reader.api('/api/v1/admin/domain_blocks', { method: 'POST', body: { domain: 'nope.example' } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'This action is outside the authorized scopes' });
    // Without a token, Mastodon's admin API says 403 too; a bad token is a 401.
    const anonymous = await apiRequest(roost, '/api/v1/admin/domain_blocks');
    expect([anonymous.status, anonymous.body]).toEqual([403, forbidden]);
    const badToken = await apiRequest(roost, '/api/v1/admin/domain_blocks', { token: 'nope' });
    expect([badToken.status, badToken.body]).toEqual([401, { error: 'The access token is invalid' }]);
    expect(await rows('instance_domain_blocks')).toBe(0);
    expect(await rows('instance_domain_allows')).toBe(0);
  });

  it('pages with Link headers, newest first', async () => {
    const ids: string[] = [];
    for (const d of ['one.example', 'two.example', 'three.example']) {
      ids.push((await admin.api('/api/v1/admin/domain_blocks', { method: 'POST', body: { domain: d, severity: 'noop' } })).body.id);
    }
    const first = await admin.api('/api/v1/admin/domain_blocks?limit=2');
    expect(first.body.map((b: { domain: string }) => b.domain)).toEqual(['three.example', 'two.example']);
    expect(first.headers.get('link')).toBe(
      `<${roost.at(`/api/v1/admin/domain_blocks?limit=2&max_id=${ids[1]}`)}>; rel="next", <${roost.at(`/api/v1/admin/domain_blocks?limit=2&since_id=${ids[2]}`)}>; rel="prev"`,
    );
    const next = await admin.api(`/api/v1/admin/domain_blocks?limit=2&max_id=${ids[1]}`);
    expect(next.body.map((b: { domain: string }) => b.domain)).toEqual(['one.example']);
    // A page costs the same statements whatever its size.
    // (The token lookup is cached a few seconds, so it is left out of the count.)
    const statements = async (limit: number) =>
      (await capturedStatements(roost, () => admin.api(`/api/v1/admin/domain_blocks?limit=${limit}`), 200)).filter((t) => !/oauth_access_tokens|user_activity/.test(t)).length;
    expect([await statements(1), await statements(3)]).toEqual([1, 1]);
    for (const id of ids) await admin.api(`/api/v1/admin/domain_blocks/${id}`, { method: 'DELETE' });
  });
});

describe('admin domain allows', () => {
  it('creates (idempotently), shows, lists and deletes allows', async () => {
    const created = await admin.api('/api/v1/admin/domain_allows', { method: 'POST', body: { domain: 'Mastodon.Social' } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^\d+$/), domain: 'mastodon.social', created_at: expect.stringMatching(ISO) });
    const again = await admin.api('/api/v1/admin/domain_allows', { method: 'POST', body: { domain: 'mastodon.social.' } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(created.body);
    expect(await rows('instance_domain_allows')).toBe(1);

    const other = await admin.api('/api/v1/admin/domain_allows', { method: 'POST', body: { domain: 'localhost:3001' } });
    expect(other.body.domain).toBe('localhost:3001');

    expect((await admin.api(`/api/v1/admin/domain_allows/${created.body.id}`)).body).toEqual(created.body);
    const listed = await admin.api('/api/v1/admin/domain_allows');
    expect(listed.body).toEqual([other.body, created.body]);

    const bad = await admin.api('/api/v1/admin/domain_allows', { method: 'POST', body: { domain: 'not a domain' } });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ error: 'Validation failed: Domain is invalid' });
    const blank = await admin.api('/api/v1/admin/domain_allows', { method: 'POST', body: {} });
    expect(blank.body).toEqual({ error: "Validation failed: Domain can't be blank" });

    const deleted = await admin.api(`/api/v1/admin/domain_allows/${created.body.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual(created.body);
    expect((await admin.api(`/api/v1/admin/domain_allows/${created.body.id}`)).body).toEqual({ error: 'Record not found' });
    await admin.api(`/api/v1/admin/domain_allows/${other.body.id}`, { method: 'DELETE' });
    expect(await rows('instance_domain_allows')).toBe(0);
  });
});

describe('GET /api/v1/instance/domain_blocks', () => {
  it('shows silences and suspensions to signed-in users, obfuscated where asked, with reasons', async () => {
    const made = [];
    for (const body of [
      { domain: 'dajiangyou.com', severity: 'suspend', public_comment: 'Inappropriate content', obfuscate: true },
      { domain: 'birb.elfenban.de', severity: 'suspend', public_comment: 'Third-party bots' },
      { domain: 'quiet.example', severity: 'silence' },
      { domain: 'listed.example', severity: 'noop', public_comment: 'not shown' },
    ]) {
      made.push((await admin.api('/api/v1/admin/domain_blocks', { method: 'POST', body })).body.id);
    }
    expect((await apiRequest(roost, '/api/v1/instance/domain_blocks')).status).toBe(401);
    const r = await plain.api('/api/v1/instance/domain_blocks');
    expect(r.status).toBe(200);
    expect(r.body).toEqual([
      { domain: 'quiet.example', digest: sha('quiet.example'), severity: 'silence' },
      { domain: 'birb.elfenban.de', digest: '5d2c6e02a0cced8fb05f32626437e3d23096480b47efbba659b6d9e80c85d280', severity: 'suspend', comment: 'Third-party bots' },
      { domain: 'daji******.com', digest: sha('dajiangyou.com'), severity: 'suspend', comment: 'Inappropriate content' },
    ]);
    for (const id of made) await admin.api(`/api/v1/admin/domain_blocks/${id}`, { method: 'DELETE' });
  });
});
