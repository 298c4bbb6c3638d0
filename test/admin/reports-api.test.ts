/**
 * The admin reports API through the real server (/api/v1/admin/reports: list, show, update,
 * assign_to_self, unassign, resolve, reopen) with Mastodon's Admin::Report whole; the facts and
 * the audit rows each action leaves; a Moderator's role manages reports, a user's token without
 * the permission gets 403; bad input (unknown report, bad category, bad rules) writes nothing; a
 * page of reports costs the same statements whatever its size. And GET /api/v1/admin/action_logs,
 * the audit log's route (a Roost extension).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedStatements, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let admin: TestUser;
let moderator: TestUser;
let plain: TestUser;
let alice: TestUser;
let bob: TestUser;
let spam: { id: string; uri: string };

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const ADMIN_SCOPES = ['read', 'write', 'admin:read', 'admin:write'];

async function query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  return roost.services.db.sql.query<T>(sql, params);
}
async function auditOf(reportId: string): Promise<{ action: string; account_id: string | null }[]> {
  return query(`select action, account_id::text from admin_action_logs where target_type = 'Report' and target_id = $1 order by id`, [reportId]);
}
async function factsOf(reportId: string): Promise<string[]> {
  return (await query<{ type: string }>(`select type from outbox_events where actor_kind = 'report' and actor_id = $1 order by id`, [reportId])).map((r) => r.type);
}
async function fileReport(by: TestUser, body: Record<string, unknown>): Promise<string> {
  const res = await by.api('/api/v1/reports', { method: 'POST', body: { account_id: bob.account.id, ...body } });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

beforeAll(async () => {
  roost = await startTestRoost({ instance: { rules: ['No spam', { text: 'Be kind', hint: 'to everyone' }] } });
  admin = await createTestUser(roost, 'operator', { role: 'Admin', scopes: ADMIN_SCOPES });
  moderator = await createTestUser(roost, 'moddy', { role: 'Moderator', scopes: ADMIN_SCOPES });
  plain = await createTestUser(roost, 'plain', { scopes: ADMIN_SCOPES });
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
  const posted = await bob.api('/api/v1/statuses', { method: 'POST', body: { status: 'Buy cheap watches' } });
  expect(posted.status).toBe(200);
  spam = posted.body;
});
afterAll(async () => {
  await roost?.close();
});

function adminAccount(user: TestUser, extra: Record<string, unknown> = {}) {
  return {
    id: user.account.id,
    username: user.account.username,
    domain: null,
    created_at: expect.stringMatching(ISO),
    email: `${user.account.username}@example.test`,
    ip: null,
    ips: [],
    locale: null,
    invite_request: null,
    // Mastodon's implicit "everyone" role for a user without one.
    role: { id: '-99', name: '', color: '', permissions: '65536', highlighted: false },
    confirmed: true,
    approved: true,
    disabled: false,
    sensitized: false,
    silenced: false,
    suspended: false,
    account: expect.objectContaining({ id: user.account.id, acct: user.account.username, username: user.account.username }),
    ...extra,
  };
}

describe('admin reports', () => {
  it('drives a report through list, show, update, assign, unassign, resolve and reopen with Mastodon’s Admin::Report', async () => {
    const id = await fileReport(alice, { status_ids: [spam.id], comment: 'Spam, again', category: 'spam' });

    const listed = await admin.api('/api/v1/admin/reports');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      {
        id,
        action_taken: false,
        action_taken_at: null,
        category: 'spam',
        comment: 'Spam, again',
        forwarded: false,
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        account: adminAccount(alice),
        target_account: adminAccount(bob),
        assigned_account: null,
        action_taken_by_account: null,
        statuses: [expect.objectContaining({ id: spam.id, uri: spam.uri, content: '<p>Buy cheap watches</p>', account: expect.objectContaining({ id: bob.account.id }) })],
        rules: [],
      },
    ]);
    const shown = await admin.api(`/api/v1/admin/reports/${id}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual(listed.body[0]);

    const updated = await admin.api(`/api/v1/admin/reports/${id}`, { method: 'PUT', body: { category: 'violation', rule_ids: ['2'] } });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ ...shown.body, category: 'violation', updated_at: expect.stringMatching(ISO), rules: [{ id: '2', text: 'Be kind', hint: 'to everyone', translations: {} }] });
    // PATCH too; leaving violation clears the rules.
    const patched = await admin.api(`/api/v1/admin/reports/${id}`, { method: 'PATCH', body: { category: 'other' } });
    expect([patched.body.category, patched.body.rules]).toEqual(['other', []]);

    const assigned = await admin.api(`/api/v1/admin/reports/${id}/assign_to_self`, { method: 'POST' });
    expect(assigned.status).toBe(200);
    expect(assigned.body.assigned_account).toEqual(adminAccount(admin, { role: { id: '2', name: 'Admin', color: '', permissions: expect.any(String), highlighted: true } }));
    const unassigned = await admin.api(`/api/v1/admin/reports/${id}/unassign`, { method: 'POST' });
    expect(unassigned.body.assigned_account).toBeNull();

    const resolved = await admin.api(`/api/v1/admin/reports/${id}/resolve`, { method: 'POST' });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ action_taken: true, action_taken_at: expect.stringMatching(ISO), action_taken_by_account: { id: admin.account.id, username: 'operator' } });
    // Resolving again changes nothing: the first resolution stays.
    const again = await admin.api(`/api/v1/admin/reports/${id}/resolve`, { method: 'POST' });
    expect(again.body.action_taken_at).toBe(resolved.body.action_taken_at);
    // Unresolved by default; resolved=true lists the resolved ones.
    expect((await admin.api('/api/v1/admin/reports')).body).toEqual([]);
    expect((await admin.api('/api/v1/admin/reports?resolved=true')).body.map((r: { id: string }) => r.id)).toEqual([id]);
    // So does the reporter's view of the report (Report's action_taken).
    const reopened = await admin.api(`/api/v1/admin/reports/${id}/reopen`, { method: 'POST' });
    expect(reopened.body).toMatchObject({ action_taken: false, action_taken_at: null, action_taken_by_account: null });
    expect((await admin.api('/api/v1/admin/reports')).body.map((r: { id: string }) => r.id)).toEqual([id]);

    // Filters: by reporter, by reported account.
    const ids = async (q: string) => (await admin.api(`/api/v1/admin/reports?${q}`)).body.map((r: { id: string }) => r.id);
    expect(await ids(`account_id=${alice.account.id}`)).toEqual([id]);
    expect(await ids(`account_id=${bob.account.id}`)).toEqual([]);
    expect(await ids(`target_account_id=${bob.account.id}`)).toEqual([id]);
    expect(await ids(`target_account_id=${alice.account.id}`)).toEqual([]);
    expect(await ids('target_account_id=not-an-id')).toEqual([]);

    // One audit row per action (repeats too, as Mastodon logs them), by the admin; a fact per change.
    expect(await auditOf(id)).toEqual(
      ['update', 'update', 'assigned_to_self', 'unassigned', 'resolve', 'resolve', 'reopen'].map((action) => ({ action, account_id: admin.account.id })),
    );
    expect(await factsOf(id)).toEqual([
      'report.created',
      'report.updated',
      'report.updated',
      'report.updated',
      'report.updated',
      'report.updated',
      'report.resolved',
      'report.updated',
      'report.reopened',
    ]);
    await admin.api(`/api/v1/admin/reports/${id}/resolve`, { method: 'POST' });
  });

  it('lets a moderator manage reports; refuses a user without the permission, and a token without the admin scopes', async () => {
    const id = await fileReport(alice, { comment: 'for the moderator' });
    const taken = await moderator.api(`/api/v1/admin/reports/${id}/assign_to_self`, { method: 'POST' });
    expect(taken.status).toBe(200);
    expect(taken.body.assigned_account.id).toBe(moderator.account.id);
    expect(taken.body.assigned_account.role).toMatchObject({ name: 'Moderator' });
    const done = await moderator.api(`/api/v1/admin/reports/${id}/resolve`, { method: 'POST' });
    expect(done.body.action_taken_by_account.id).toBe(moderator.account.id);
    expect((await moderator.api('/api/v1/admin/reports?resolved=true')).body.map((r: { id: string }) => r.id)).toContain(id);

    const readOnly = await createTestUser(roost, 'readonly', { role: 'Admin', scopes: ['read', 'admin:read:reports'] });
    expect((await readOnly.api(`/api/v1/admin/reports/${id}`)).status).toBe(200);
    const before = await auditOf(id);
    const calls: [string, string][] = [
      ['GET', '/api/v1/admin/reports'],
      ['GET', `/api/v1/admin/reports/${id}`],
      ['PUT', `/api/v1/admin/reports/${id}`],
      ['POST', `/api/v1/admin/reports/${id}/assign_to_self`],
      ['POST', `/api/v1/admin/reports/${id}/unassign`],
      ['POST', `/api/v1/admin/reports/${id}/resolve`],
      ['POST', `/api/v1/admin/reports/${id}/reopen`],
      ['GET', '/api/v1/admin/action_logs'],
    ];
    for (const [method, path] of calls) {
      // plain has the admin scopes but no role; alice's token has no admin scope at all.
      for (const [user, error] of [[plain, 'This action is not allowed'], [alice, 'This action is outside the authorized scopes']] as const) {
        const res = await user.api(path, { method, body: method === 'GET' ? undefined : { category: 'spam' } });
        expect([method, path, res.status, res.body]).toEqual([method, path, 403, { error }]);
      }
      if (method !== 'GET') expect((await readOnly.api(path, { method, body: { category: 'spam' } })).status).toBe(403);
    }
    expect(await auditOf(id)).toEqual(before);
  });

  it('answers an unknown report 404 and bad categories or rules 422, writing nothing', async () => {
    const id = await fileReport(alice, { comment: 'bad input' });
    const missing = '9223372036854775000';
    for (const [method, path] of [
      ['GET', `/api/v1/admin/reports/${missing}`],
      ['PUT', `/api/v1/admin/reports/${missing}`],
      ['POST', `/api/v1/admin/reports/${missing}/resolve`],
      ['POST', `/api/v1/admin/reports/${missing}/assign_to_self`],
      ['GET', '/api/v1/admin/reports/abc'],
    ] as const) {
      const res = await admin.api(path, { method, body: method === 'GET' ? undefined : { category: 'spam' } });
      expect([path, res.status, res.body]).toEqual([path, 404, { error: 'Record not found' }]);
    }
    const before = { audit: await auditOf(id), facts: await factsOf(id), report: (await admin.api(`/api/v1/admin/reports/${id}`)).body };

    const badCategory = await admin.api(`/api/v1/admin/reports/${id}`, { method: 'PUT', body: { category: 'nonsense' } });
    expect(badCategory.status).toBe(422);
    expect(badCategory.body).toEqual({
      error: 'Validation failed: Category is not included in the list',
      details: { category: [{ error: 'ERR_INCLUSION', description: 'is not included in the list' }] },
    });
    const unknownRule = await admin.api(`/api/v1/admin/reports/${id}`, { method: 'PUT', body: { category: 'violation', rule_ids: ['3'] } });
    expect(unknownRule.status).toBe(422);
    expect(unknownRule.body.details).toEqual({ rule_ids: [{ error: 'ERR_INVALID', description: 'does not reference valid rules' }] });
    const noRule = await admin.api(`/api/v1/admin/reports/${id}`, { method: 'PUT', body: { category: 'violation' } });
    expect(noRule.status).toBe(422);
    const rulesOnSpam = await admin.api(`/api/v1/admin/reports/${id}`, { method: 'PUT', body: { category: 'spam', rule_ids: ['1'] } });
    expect(rulesOnSpam.status).toBe(422);
    expect(rulesOnSpam.body.error).toBe('Validation failed: Rule ids must be blank');

    expect({ audit: await auditOf(id), facts: await factsOf(id), report: (await admin.api(`/api/v1/admin/reports/${id}`)).body }).toEqual(before);
    await admin.api(`/api/v1/admin/reports/${id}/resolve`, { method: 'POST' });
  });

  it('renders a page of reports in a fixed number of statements, with Link-header pages', async () => {
    const made: string[] = [];
    for (let i = 0; i < 4; i++) made.push(await fileReport(i % 2 ? alice : admin, { status_ids: [spam.id], comment: `page ${i}` }));
    await moderator.api(`/api/v1/admin/reports/${made[0]}/assign_to_self`, { method: 'POST' });
    await admin.api(`/api/v1/admin/reports/${made[1]}`, { method: 'PUT', body: { category: 'violation', rule_ids: ['1', '2'] } });
    await settled(roost);
    const statements = async (limit: number) =>
      (await capturedStatements(roost, () => admin.api(`/api/v1/admin/reports?limit=${limit}`), 200)).filter((t) => !/oauth_access_tokens|user_activity|user_roles/.test(t));
    const one = await statements(1);
    const four = await statements(4);
    expect(four.length).toBe(one.length);
    // The reports, their accounts as Admin::Account (one statement), the statuses cited, their authors.
    expect(one.length).toBe(4);

    const first = await admin.api('/api/v1/admin/reports?limit=2');
    expect(first.body.map((r: { id: string }) => r.id)).toEqual([made[3], made[2]]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    expect(next).toContain(`max_id=${made[2]}`);
    const second = await admin.api(new URL(next!).pathname + new URL(next!).search);
    expect(second.body.map((r: { id: string }) => r.id)).toEqual([made[1], made[0]]);
    expect(second.body[0].rules.map((r: { id: string }) => r.id)).toEqual(['1', '2']);
    expect(second.body[1].assigned_account.id).toBe(moderator.account.id);
    for (const id of made) await admin.api(`/api/v1/admin/reports/${id}/resolve`, { method: 'POST' });
  });
});

describe('the audit log route', () => {
  it('lists the admin actions newest first, filtered by moderator and target, in pages', async () => {
    const id = await fileReport(alice, { comment: 'audited' });
    await moderator.api(`/api/v1/admin/reports/${id}/assign_to_self`, { method: 'POST' });
    await admin.api(`/api/v1/admin/reports/${id}/resolve`, { method: 'POST' });

    const res = await admin.api(`/api/v1/admin/action_logs?target_type=Report&target_id=${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        id: expect.stringMatching(/^\d+$/),
        action: 'resolve',
        target_type: 'Report',
        target_id: id,
        human_identifier: id,
        detail: { changed: ['action_taken_at', 'action_taken_by_account_id'] },
        created_at: expect.stringMatching(ISO),
        account: expect.objectContaining({ id: admin.account.id, acct: 'operator' }),
      },
      expect.objectContaining({ action: 'assigned_to_self', target_id: id, account: expect.objectContaining({ id: moderator.account.id }) }),
    ]);
    // The Moderator role may view the audit log too (Mastodon's seed grants it).
    const byModerator = await moderator.api(`/api/v1/admin/action_logs?account_id=${moderator.account.id}`);
    expect(byModerator.status).toBe(200);
    expect(byModerator.body.length).toBeGreaterThan(0);
    expect(byModerator.body.every((e: { account: { id: string } }) => e.account.id === moderator.account.id)).toBe(true);
    expect((await admin.api('/api/v1/admin/action_logs?account_id=abc')).body).toEqual([]);
    expect((await admin.api('/api/v1/admin/action_logs?target_type=Nothing')).body).toEqual([]);

    const page = await admin.api('/api/v1/admin/action_logs?limit=1');
    expect(page.body.map((e: { id: string }) => e.id)).toEqual([res.body[0].id]);
    const next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
    expect(next).toContain(`max_id=${res.body[0].id}`);
    const older = await admin.api(new URL(next!).pathname + new URL(next!).search);
    expect(older.body.map((e: { id: string }) => e.id)).toEqual([res.body[1].id]);
  });
});
