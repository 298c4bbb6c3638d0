/**
 * `roost reports list|resolve|reopen` and `roost audit` as real processes against a running
 * instance that holds its embedded database (through its control socket): the open reports, one
 * resolved by the operator, and the audit log showing that action and a moderator's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.ts';
import { startTestRoost, type TestRoost } from './helpers/roost.ts';
import { createTestUser, type TestUser } from './helpers/auth.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let admin: TestUser;

const run = (args: string[]) => runCli(args, { ROOST_DATA_DIR: roost.dataDir });

beforeAll(async () => {
  roost = await startTestRoost({}, { controlSocket: true });
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
  admin = await createTestUser(roost, 'boss', { role: 'Admin', scopes: ['admin:read', 'admin:write'] });
}, 60_000);
afterAll(async () => {
  await roost?.close();
});

describe('roost reports and roost audit', () => {
  it('lists the open reports, resolves one as the operator, and shows the audit log', async () => {
    expect((await run(['reports', 'list'])).stdout).toBe('No open reports.\n');
    expect((await run(['audit'])).stdout).toBe('No admin actions recorded.\n');
    const filed = await alice.api('/api/v1/reports', { method: 'POST', body: { account_id: bob.account.id, comment: 'Spam\nand more spam', category: 'spam' } });
    expect(filed.status).toBe(200);
    const id = filed.body.id as string;
    expect((await admin.api(`/api/v1/admin/reports/${id}/assign_to_self`, { method: 'POST' })).status).toBe(200);

    const listed = await run(['reports', 'list']);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]!.split(/\s{2,}/)).toEqual(['ID', 'FILED', 'CATEGORY', 'REPORTER', 'REPORTED', 'STATUSES', 'ASSIGNED', 'COMMENT']);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/))).toEqual([[id, expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/), 'spam', 'alice', 'bob', '0', 'boss', 'Spam and more spam']]);

    expect(await run(['reports', 'resolve', id])).toEqual({ code: 0, stdout: `OK: report ${id} resolved\n`, stderr: '' });
    expect((await run(['reports', 'list'])).stdout).toBe('No open reports.\n');
    expect((await run(['reports', 'list', '--resolved'])).stdout).toContain(`${id}  `);
    const missing = await run(['reports', 'resolve', '123']);
    expect([missing.code, missing.stderr.trim()]).toEqual([1, expect.stringContaining('Record not found')]);

    const audit = await run(['audit', '--limit', '5']);
    expect(audit.code).toBe(0);
    const rows = audit.stdout.trimEnd().split('\n').map((l) => l.split(/\s{2,}/));
    expect(rows).toEqual([
      ['WHEN', 'WHO', 'ACTION', 'TARGET'],
      [expect.stringMatching(/Z$/), '(operator)', 'resolve', `Report ${id}`],
      [expect.stringMatching(/Z$/), 'boss', 'assigned_to_self', `Report ${id}`],
    ]);
    expect((await run(['audit', '--limit', '1'])).stdout.trimEnd().split('\n')).toHaveLength(2);
    const bad = await run(['audit', '--limit', 'many']);
    expect([bad.code, bad.stderr.split('\n')[0]]).toEqual([2, 'roost audit: --limit must be a whole number from 1 to 1000, got "many"']);
  }, 300_000);
});
