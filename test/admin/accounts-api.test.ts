/**
 * The admin accounts API and the roles API through the real server: the route table walked with a
 * user's token (403 everywhere) and a moderator's on role routes (403); an admin drives the list
 * (v1 and v2 filters, Link pages, a fixed statement count), one account, the actions with their
 * warning, fact, resolved report and audit entry, the reversals, approve, reject and delete; bad
 * input writes nothing; a role's permissions changed count at its users' next request. The
 * operator's twins (`roost roles …`, `roost accounts suspend …`) run on the same services.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedStatements, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { ROUTES } from '../sweep/routes.ts';
import { insertRemoteAccount } from '../../src/services/accounts.ts';
import { runCommand } from '../../src/control/commands.ts';
import { federationOn } from '../../src/main.ts';

let roost: TestRoost;
let admin: TestUser;
let moderator: TestUser;
let plain: TestUser;
let target: TestUser;

const ADMIN_SCOPES = ['read', 'write', 'admin:read', 'admin:write'];

async function count(table: string, where = 'true', params: unknown[] = []): Promise<number> {
  const [r] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from ${table} where ${where}`, params);
  return r!.n;
}

async function audit(targetId: string): Promise<{ action: string; account_id: string | null }[]> {
  return roost.services.db.sql.query(`select action, account_id::text from admin_action_logs where target_id = $1 order by id`, [targetId]);
}

const cli = (name: string, args: Record<string, unknown> = {}) => runCommand(roost.services, name, args, { federation: federationOn(roost.services) });

beforeAll(async () => {
  roost = await startTestRoost();
  admin = await createTestUser(roost, 'chief', { role: 'Admin', scopes: ADMIN_SCOPES });
  moderator = await createTestUser(roost, 'moddy', { role: 'Moderator', scopes: ADMIN_SCOPES });
  plain = await createTestUser(roost, 'plain', { scopes: ADMIN_SCOPES });
  target = await createTestUser(roost, 'target');
});
afterAll(async () => {
  await roost?.close();
});

const ADMIN_ROUTES = ROUTES.filter((r) => r.path.startsWith('/api/v1/admin') || r.path.startsWith('/api/v2/admin'));
const path = (p: string) => p.replace(/:[a-z_]+/g, '1');

describe('who may call the admin API', () => {
  it('a user without a role gets 403 on every /api/v1/admin and /api/v2/admin route', async () => {
    expect(ADMIN_ROUTES.length).toBeGreaterThan(25);
    for (const r of ADMIN_ROUTES) {
      const res = await apiRequest(roost, path(r.path), { method: r.method, token: plain.token, body: r.method === 'GET' || r.method === 'DELETE' ? undefined : {} });
      expect({ route: `${r.method} ${r.path}`, status: res.status, body: res.body }).toEqual({ route: `${r.method} ${r.path}`, status: 403, body: { error: 'This action is not allowed' } });
    }
  });

  it("a moderator's role sees accounts but may not manage roles", async () => {
    const roleRoutes = ADMIN_ROUTES.filter((r) => r.path.includes('/roles') || r.path.endsWith('/role'));
    expect(roleRoutes.length).toBe(7);
    for (const r of roleRoutes) {
      const res = await apiRequest(roost, path(r.path), { method: r.method, token: moderator.token, body: r.method === 'GET' || r.method === 'DELETE' ? undefined : {} });
      expect({ route: `${r.method} ${r.path}`, status: res.status }).toEqual({ route: `${r.method} ${r.path}`, status: 403 });
    }
    expect((await moderator.api('/api/v1/admin/accounts')).status).toBe(200);
    // Nor act on a user whose role outranks theirs (the admin), nor on themselves.
    for (const id of [admin.account.id, moderator.account.id]) {
      expect((await moderator.api(`/api/v1/admin/accounts/${id}/action`, { method: 'POST', body: { type: 'suspend' } })).status).toBe(403);
    }
    expect(await count('account_warnings')).toBe(0);
    // The scope is checked as well as the role: an admin's token without admin:read.
    const narrow = await createTestUser(roost, 'narrowadmin', { role: 'Admin', scopes: ['read'] });
    expect((await narrow.api('/api/v2/admin/accounts')).status).toBe(403);
  });
});

describe('admin accounts', () => {
  it('lists with the v1 and v2 filters, pages by Link header, in a fixed number of statements', async () => {
    const remote = await insertRemoteAccount(roost.services, { uri: 'https://far.example/users/zed', username: 'zed', domain: 'far.example', inboxUrl: 'https://far.example/users/zed/inbox' });
    await roost.services.db.sql.query(`insert into user_ips (user_id, ip, used_at) values ($1, '192.0.2.7', now())`, [target.user.id]);

    const v2 = async (q: string) => {
      const res = await admin.api(`/api/v2/admin/accounts?${q}`);
      expect(res.status).toBe(200);
      return (res.body as { username: string }[]).map((a) => a.username);
    };
    expect(await v2('origin=remote')).toEqual(['zed']);
    expect(await v2('by_domain=FAR.example')).toEqual(['zed']);
    expect((await v2('origin=local')).sort()).toEqual(['chief', 'moddy', 'narrowadmin', 'plain', 'target']);
    expect(await v2('username=targ')).toEqual(['target']);
    expect(await v2('email=target%40')).toEqual(['target']);
    expect(await v2('ip=192.0.2.0/24')).toEqual(['target']);
    expect((await v2('permissions=staff')).sort()).toEqual(['chief', 'moddy', 'narrowadmin']);
    expect(await v2('role_ids[]=3')).toEqual(['moddy']);
    expect(await v2('status=suspended')).toEqual([]);
    expect((await admin.api('/api/v2/admin/accounts?status=bogus')).status).toBe(400);
    expect((await admin.api('/api/v2/admin/accounts?ip=not-an-ip')).status).toBe(400);

    const v1 = await admin.api('/api/v1/admin/accounts?remote=true');
    expect(v1.body.map((a: { id: string }) => a.id)).toEqual([remote.id]);
    expect((await admin.api('/api/v1/admin/accounts?local=true&staff=true')).body.length).toBe(3);

    const page = await admin.api('/api/v2/admin/accounts?limit=2');
    expect(page.body).toHaveLength(2);
    const next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
    expect(next).toContain('max_id=');
    const second = await admin.api(next!.replace(roost.at(''), ''));
    expect(second.body).toHaveLength(2);
    expect(BigInt(second.body[0].id)).toBeLessThan(BigInt(page.body[1].id));

    const small = await capturedStatements(roost, () => admin.api('/api/v2/admin/accounts?origin=local&limit=2'));
    const large = await capturedStatements(roost, () => admin.api('/api/v2/admin/accounts?origin=local&limit=50'));
    expect(large.length).toBe(small.length);
    // The page's one statement: the role's permissions came with the (cached) token lookup.
    expect(small).toHaveLength(1);
    expect(small[0]).toMatch(/^with page as/);
  });

  it('renders one account whole, and 404 for a missing one', async () => {
    const res = await admin.api(`/api/v1/admin/accounts/${target.account.id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      ['account', 'approved', 'confirmed', 'created_at', 'disabled', 'domain', 'email', 'id', 'invite_request', 'ip', 'ips', 'locale', 'role', 'sensitized', 'silenced', 'suspended', 'username'].sort(),
    );
    expect(res.body).toMatchObject({ username: 'target', email: 'target@example.test', ip: '192.0.2.7', domain: null, suspended: false });
    expect((await admin.api('/api/v1/admin/accounts/123456789')).status).toBe(404);
    expect((await admin.api('/api/v1/admin/accounts/123456789/action', { method: 'POST', body: { type: 'silence' } })).status).toBe(404);
  });

  it('acts: a warning, its fact, the resolved report and the audit entry in one go; the reversals lift it', async () => {
    const report = await plain.api('/api/v1/reports', { method: 'POST', body: { account_id: target.account.id, comment: 'rude' } });
    expect(report.status).toBe(200);
    const before = await count('account_warnings');

    // Bad input first: an unknown type, a missing report, a preset Roost does not keep: nothing written.
    const bad = await admin.api(`/api/v1/admin/accounts/${target.account.id}/action`, { method: 'POST', body: { type: 'explode' } });
    expect(bad).toMatchObject({ status: 422, body: { error: 'Validation failed: Type is not included in the list' } });
    expect((await admin.api(`/api/v1/admin/accounts/${target.account.id}/action`, { method: 'POST', body: { type: 'silence', report_id: '999999' } })).status).toBe(404);
    expect((await admin.api(`/api/v1/admin/accounts/${target.account.id}/action`, { method: 'POST', body: { type: 'silence', warning_preset_id: '1' } })).status).toBe(404);
    expect(await count('account_warnings')).toBe(before);
    expect((await admin.api(`/api/v1/admin/accounts/${target.account.id}`)).body.silenced).toBe(false);

    const silenced = await admin.api(`/api/v1/admin/accounts/${target.account.id}/action`, {
      method: 'POST',
      body: { type: 'silence', report_id: report.body.id, text: 'Be nice', send_email_notification: true },
    });
    expect(silenced).toMatchObject({ status: 200, body: {} });
    const shown = await admin.api(`/api/v1/admin/accounts/${target.account.id}`);
    expect(shown.body).toMatchObject({ silenced: true, suspended: false });
    expect(shown.body.account.limited).toBe(true);
    const [warning] = await roost.services.db.sql.query<{ id: string; action: string; text: string; report_id: string; account_id: string }>(
      `select id::text, action, text, report_id::text, account_id::text from account_warnings where target_account_id = $1`,
      [target.account.id],
    );
    expect(warning).toEqual({ id: expect.any(String), action: 'silence', text: 'Be nice', report_id: report.body.id, account_id: admin.account.id });
    const facts = await roost.services.db.sql.query<{ payload: unknown }>(`select payload from outbox_events where type = 'account.warned' and actor_id = $1`, [target.account.id]);
    expect(facts.map((f) => f.payload)).toEqual([{ type: 'account.warned', accountId: target.account.id, warningId: warning!.id, action: 'silence', sendEmail: true }]);
    expect(await count('reports', 'id = $1 and action_taken_at is not null', [report.body.id])).toBe(1);
    expect(await count('outbox_events', `type = 'account.silenced' and actor_id = $1`, [target.account.id])).toBe(1);

    for (const [type, flag] of [['sensitive', 'sensitized'], ['disable', 'disabled']] as const) {
      expect((await admin.api(`/api/v1/admin/accounts/${target.account.id}/action`, { method: 'POST', body: { type } })).status).toBe(200);
      expect((await admin.api(`/api/v1/admin/accounts/${target.account.id}`)).body[flag]).toBe(true);
      if (type === 'sensitive') {
        // A sensitized account's new statuses are sensitive, whatever it asks.
        const posted = await target.api('/api/v1/statuses', { method: 'POST', body: { status: 'look', sensitive: false } });
        expect(posted.body.sensitive).toBe(true);
      }
    }
    // A disabled user's token stops working at once.
    expect((await target.api('/api/v1/accounts/verify_credentials')).status).toBe(401);

    for (const [reversal, flag] of [['unsilence', 'silenced'], ['unsensitive', 'sensitized'], ['enable', 'disabled']] as const) {
      const res = await admin.api(`/api/v1/admin/accounts/${target.account.id}/${reversal}`, { method: 'POST' });
      expect(res.status).toBe(200);
      expect(res.body[flag]).toBe(false);
      expect(res.body.id).toBe(target.account.id);
    }
    expect((await target.api('/api/v1/accounts/verify_credentials')).status).toBe(200);
    // Lifting a suspension that is not there is refused, as Mastodon's policy.
    expect((await admin.api(`/api/v1/admin/accounts/${target.account.id}/unsuspend`, { method: 'POST' })).status).toBe(403);

    const entries = await audit(target.account.id);
    expect(entries.map((e) => e.action)).toEqual(['silence', 'sensitive', 'disable', 'unsilence', 'unsensitive', 'enable']);
    expect(entries.every((e) => e.account_id === admin.account.id)).toBe(true);
  });

  it('suspends (content hidden at once, login refused), unsuspends, and deletes only a suspended account’s data', async () => {
    const victim = await createTestUser(roost, 'victim');
    const posted = await victim.api('/api/v1/statuses', { method: 'POST', body: { status: 'before the ban', visibility: 'public' } });
    expect((await plain.api(`/api/v1/statuses/${posted.body.id}`)).status).toBe(200);

    expect((await admin.api(`/api/v1/admin/accounts/${victim.account.id}`, { method: 'DELETE' })).status).toBe(403);
    expect((await admin.api(`/api/v1/admin/accounts/${victim.account.id}/action`, { method: 'POST', body: { type: 'suspend' } })).status).toBe(200);
    expect((await plain.api(`/api/v1/statuses/${posted.body.id}`)).status).toBe(404);
    expect((await victim.api('/api/v1/accounts/verify_credentials')).status).toBe(401);
    expect((await admin.api('/api/v2/admin/accounts?status=suspended')).body.map((a: { username: string }) => a.username)).toEqual(['victim']);

    const lifted = await admin.api(`/api/v1/admin/accounts/${victim.account.id}/unsuspend`, { method: 'POST' });
    expect(lifted.body.suspended).toBe(false);
    expect((await plain.api(`/api/v1/statuses/${posted.body.id}`)).status).toBe(200);

    // A moderator may suspend but not delete data (Delete User Data is not theirs).
    expect((await moderator.api(`/api/v1/admin/accounts/${victim.account.id}/action`, { method: 'POST', body: { type: 'suspend' } })).status).toBe(200);
    expect((await moderator.api(`/api/v1/admin/accounts/${victim.account.id}`, { method: 'DELETE' })).status).toBe(403);
    const deleted = await admin.api(`/api/v1/admin/accounts/${victim.account.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: victim.account.id, suspended: true, email: null });
    expect(await count('statuses', 'account_id = $1', [victim.account.id])).toBe(0);
    expect(await count('users', 'account_id = $1', [victim.account.id])).toBe(0);
    expect((await admin.api(`/api/v1/admin/accounts/${victim.account.id}`, { method: 'DELETE' })).status).toBe(403);
    expect((await audit(victim.account.id)).map((e) => e.action)).toEqual(['suspend', 'unsuspend', 'suspend', 'destroy']);
  });

  it('approves and rejects pending sign-ups', async () => {
    const pending = await createTestUser(roost, 'waiting', { approved: false, reason: 'let me in' });
    const doomed = await createTestUser(roost, 'doomed', { approved: false });
    const listed = await admin.api('/api/v1/admin/accounts?pending=true');
    expect(listed.body.map((a: { username: string }) => a.username)).toEqual(['doomed', 'waiting']);
    expect(listed.body[1]).toMatchObject({ approved: false, invite_request: 'let me in' });

    expect((await admin.api(`/api/v1/admin/accounts/${target.account.id}/approve`, { method: 'POST' })).status).toBe(403);
    const approved = await admin.api(`/api/v1/admin/accounts/${pending.account.id}/approve`, { method: 'POST' });
    expect(approved).toMatchObject({ status: 200, body: { approved: true, username: 'waiting' } });
    expect((await admin.api(`/api/v1/admin/accounts/${pending.account.id}/reject`, { method: 'POST' })).status).toBe(403);

    const rejected = await admin.api(`/api/v1/admin/accounts/${doomed.account.id}/reject`, { method: 'POST' });
    expect(rejected).toMatchObject({ status: 200, body: { username: 'doomed', approved: false } });
    expect(await count('accounts', 'id = $1', [doomed.account.id])).toBe(0);
    expect((await admin.api(`/api/v1/admin/accounts/${doomed.account.id}`)).status).toBe(404);
    expect((await audit(doomed.account.id)).map((e) => e.action)).toEqual(['reject']);
  });
});

describe('roles', () => {
  it('creates, shows, updates and deletes a role below the acting one, with Mastodon’s bits', async () => {
    const created = await admin.api('/api/v1/admin/roles', { method: 'POST', body: { name: 'Helper', color: '#ff3838', position: 50, permissions: String(1 << 4), highlighted: true } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      name: 'Helper',
      color: '#ff3838',
      permissions: '16',
      highlighted: true,
      position: 50,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const id = created.body.id as string;
    expect((await admin.api(`/api/v1/admin/roles/${id}`)).body.name).toBe('Helper');
    const names = (await admin.api('/api/v1/admin/roles')).body.map((r: { name: string }) => r.name);
    expect(names).toEqual(['Owner', 'Admin', 'Helper', 'Moderator']);

    // Elevation refused: a position at or above the admin's own, a bit the admin lacks, an unknown bit.
    const rows = await count('user_roles');
    for (const body of [{ name: 'Boss', position: 100 }, { name: 'Root', permissions: '1' }, { name: 'Odd', permissions: String(1n << 40n) }, { name: 'helper' }, { name: '' }, { name: 'Tint', color: 'red' }]) {
      const res = await admin.api('/api/v1/admin/roles', { method: 'POST', body });
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
    }
    expect(await count('user_roles')).toBe(rows);
    // The Owner's role and the admin's own are out of reach.
    expect((await admin.api('/api/v1/admin/roles/1', { method: 'PUT', body: { name: 'Mine' } })).status).toBe(403);
    expect((await admin.api('/api/v1/admin/roles/2', { method: 'PATCH', body: { position: 10 } })).status).toBe(403);
    expect((await admin.api('/api/v1/admin/roles/1', { method: 'DELETE' })).status).toBe(403);

    const updated = await admin.api(`/api/v1/admin/roles/${id}`, { method: 'PATCH', body: { name: 'Helpers', permissions: String((1 << 4) | (1 << 10)) } });
    expect(updated.body).toMatchObject({ name: 'Helpers', permissions: '1040', position: 50, color: '#ff3838' });

    // Assigning: the role appears on the Account entity (highlighted) and on Admin::Account.
    const assigned = await admin.api(`/api/v1/admin/accounts/${target.account.id}/role`, { method: 'POST', body: { role_id: id } });
    expect(assigned.status).toBe(200);
    expect(assigned.body.role).toEqual({ id, name: 'Helpers', color: '#ff3838', permissions: '1040', highlighted: true });
    expect((await plain.api(`/api/v1/accounts/${target.account.id}`)).body.roles).toEqual([{ id, name: 'Helpers', color: '#ff3838' }]);
    expect((await admin.api(`/api/v1/admin/accounts/${target.account.id}/role`, { method: 'POST', body: { role_id: '999999' } })).status).toBe(422);
    expect((await admin.api(`/api/v1/admin/accounts/${target.account.id}/role`, { method: 'POST', body: { role_id: '1' } })).status).toBe(403);
    expect((await admin.api(`/api/v1/admin/accounts/${admin.account.id}/role`, { method: 'POST', body: { role_id: id } })).status).toBe(403);

    expect((await admin.api(`/api/v1/admin/roles/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await admin.api(`/api/v1/admin/roles/${id}`)).status).toBe(404);
    expect((await admin.api(`/api/v1/admin/accounts/${target.account.id}`)).body.role).toEqual({ id: '-99', name: '', color: '', permissions: '65536', highlighted: false });
    const log = await roost.services.db.sql.query<{ action: string; target_type: string }>(
      `select action, target_type from admin_action_logs where target_type = 'UserRole' and target_id = $1 order by id`,
      [id],
    );
    expect(log.map((l) => l.action)).toEqual(['create', 'update', 'destroy']);
  });
});

describe('a role changed while its users are signed in', () => {
  it('counts at their next request: the permission bits cached with the token are forgotten', async () => {
    const created = await admin.api('/api/v1/admin/roles', { method: 'POST', body: { name: 'Triage', color: '', position: 40, permissions: String((1 << 4) | (1 << 10)) } });
    const id = created.body.id as string;
    const triager = await createTestUser(roost, 'triager', { scopes: ADMIN_SCOPES });
    expect((await triager.api('/api/v2/admin/accounts?limit=1')).status).toBe(403);
    expect((await admin.api(`/api/v1/admin/accounts/${triager.account.id}/role`, { method: 'POST', body: { role_id: id } })).status).toBe(200);
    expect((await triager.api('/api/v2/admin/accounts?limit=1')).status).toBe(200);
    // manage_users taken away: refused at once (no wait for the viewer cache to lapse).
    expect((await admin.api(`/api/v1/admin/roles/${id}`, { method: 'PATCH', body: { permissions: String(1 << 4) } })).status).toBe(200);
    expect((await triager.api('/api/v2/admin/accounts?limit=1')).body).toEqual({ error: 'This action is not allowed' });
    expect((await triager.api('/api/v1/admin/reports')).status).toBe(200);
    // Given back, then the role deleted: the user is left with the "everyone" role's bits.
    expect((await admin.api(`/api/v1/admin/roles/${id}`, { method: 'PATCH', body: { permissions: String((1 << 4) | (1 << 10)) } })).status).toBe(200);
    expect((await triager.api('/api/v2/admin/accounts?limit=1')).status).toBe(200);
    expect((await admin.api(`/api/v1/admin/roles/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await triager.api('/api/v1/admin/reports')).status).toBe(403);
  });
});

describe('the operator at the CLI', () => {
  it('manages roles above every role and handles emergencies on the same services', async () => {
    const made = await cli('roles.create', { name: 'Janitor', position: '2000', permissions: 'manage_users,manage_reports' });
    expect(made.role).toMatchObject({ name: 'Janitor', position: 2000, permissions: String((1 << 10) | (1 << 4)) });
    await cli('roles.update', { name: 'janitor', newName: 'Caretaker', highlighted: true });
    await cli('roles.assign', { username: 'plain', role: 'Caretaker' });
    expect((await admin.api(`/api/v1/admin/accounts/${plain.account.id}`)).body.role.name).toBe('Caretaker');
    // The admin (position 100) may not touch a role above it.
    expect((await admin.api(`/api/v1/admin/accounts/${plain.account.id}/role`, { method: 'POST', body: { role_id: '' } })).status).toBe(403);
    const listed = (await cli('roles.list')).roles as { name: string }[];
    expect(listed[0]!.name).toBe('Caretaker');
    await expect(cli('roles.assign', { username: 'plain', role: 'Nope' })).rejects.toMatchObject({ status: 422 });
    await cli('roles.delete', { name: 'Caretaker' });
    expect((await admin.api(`/api/v1/admin/accounts/${plain.account.id}`)).body.role.id).toBe('-99');

    const late = await createTestUser(roost, 'latecomer', { approved: false, reason: 'hi' });
    const pending = (await cli('accounts.pending')).accounts as { username: string; reason: string }[];
    expect(pending).toEqual([expect.objectContaining({ username: 'latecomer', reason: 'hi' })]);
    await cli('accounts.approve', { user: 'latecomer' });
    expect((await cli('accounts.pending')).accounts).toEqual([]);

    await cli('accounts.suspend', { user: 'latecomer', text: 'spam' });
    expect((await admin.api(`/api/v1/admin/accounts/${late.account.id}`)).body.suspended).toBe(true);
    await cli('accounts.unsuspend', { user: 'latecomer' });
    await cli('accounts.silence', { user: 'zed@far.example' });
    expect((await admin.api('/api/v2/admin/accounts?status=silenced')).body.map((a: { username: string }) => a.username)).toEqual(['zed']);
    await cli('accounts.unsilence', { user: 'zed@far.example' });
    await expect(cli('accounts.suspend', { user: 'nobody' })).rejects.toMatchObject({ status: 404 });
    const entries = await roost.services.db.sql.query<{ account_id: string | null }>(`select account_id::text from admin_action_logs where target_id = $1`, [late.account.id]);
    expect(entries).toHaveLength(3);
    expect(entries.every((e) => e.account_id === null)).toBe(true);
  });
});
