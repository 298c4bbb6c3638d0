/**
 * `roost accounts modify`: role, approval, confirmation and login without SQL. Through the
 * command function (what the control socket runs) for every option and error, and once as the
 * real `npx roost` process on a data directory of its own.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser } from '../helpers/auth.ts';
import { runCommand } from '../../src/control/commands.ts';
import { UserSchema } from '../../src/db/entities/index.ts';
import { RoostError } from '../../src/lib/errors.ts';

let roost: TestRoost;
beforeAll(async () => {
  roost = await startTestRoost();
});
afterAll(async () => roost?.close());

const user = async (accountId: string) => roost.services.db.em().findOneOrFail(UserSchema, { accountId });

describe('accounts.modify', () => {
  it('sets and removes a role, approves, confirms, disables and enables', async () => {
    const dan = await createTestUser(roost, 'dan', { confirmed: false, approved: false });
    expect(await runCommand(roost.services, 'accounts.modify', { username: 'DAN', role: 'admin', approve: true, confirm: true }, { federation: roost.federation })).toEqual({
      username: 'dan',
      changes: ['role Admin', 'approved', 'confirmed'],
    });
    let row = await user(dan.account.id);
    expect([row.roleId, row.approved, row.confirmedAt !== null, row.disabled]).toEqual(['2', true, true, false]);
    expect((await dan.api('/api/v1/accounts/verify_credentials')).body.role).toMatchObject({ id: '2', name: 'Admin' });
    expect((await dan.api(`/api/v1/accounts/${dan.account.id}`)).body.roles).toEqual([{ id: '2', name: 'Admin', color: '' }]);

    expect(await runCommand(roost.services, 'accounts.modify', { username: 'dan', removeRole: true, disable: true }, { federation: roost.federation })).toEqual({
      username: 'dan',
      changes: ['role removed', 'disabled'],
    });
    row = await user(dan.account.id);
    expect([row.roleId, row.disabled]).toEqual([null, true]);
    expect((await dan.api('/api/v1/accounts/verify_credentials')).status).toBe(401);
    await runCommand(roost.services, 'accounts.modify', { username: 'dan', enable: true }, { federation: roost.federation });
    expect((await dan.api('/api/v1/accounts/verify_credentials')).body.role).toEqual({ id: '-99', name: '', permissions: '65536', color: '', highlighted: false });
  });

  it('says what is wrong', async () => {
    await createTestUser(roost, 'erin');
    const fail = (args: Record<string, unknown>) =>
      runCommand(roost.services, 'accounts.modify', args, { federation: roost.federation }).then(
        () => null,
        (e: RoostError) => [e.status, e.message],
      );
    expect(await fail({ username: 'nobody', approve: true })).toEqual([404, 'No local account nobody']);
    expect(await fail({ username: 'erin', role: 'Wizard' })).toEqual([422, 'Role Wizard does not exist']);
    expect(await fail({ username: 'erin' })).toEqual([422, 'Nothing to change: give --role, --remove-role, --approve, --confirm, --disable or --enable']);
    expect(await fail({ approve: true })).toEqual([422, 'username is required']);
  });
});

describe('npx roost accounts modify', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-modify-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const root = path.resolve(import.meta.dirname, '../..');
  const npx = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn('npx', ['roost', ...args], {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ROOST_DATA_DIR: dataDir, ROOST_LOG_LEVEL: 'warn' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  it('changes an account in a stopped server’s data directory, and refuses bad usage', async () => {
    const created = await npx(['accounts', 'create', 'carol', '--email', 'carol@example.test']);
    expect([created.code, created.stdout.split('\n')[0]]).toEqual([0, 'OK']);
    const modified = await npx(['accounts', 'modify', 'carol', '--role', 'Moderator', '--confirm', '--disable']);
    expect([modified.code, modified.stdout]).toEqual([0, 'OK: carol: role Moderator, confirmed, disabled\n']);
    const both = await npx(['accounts', 'modify', 'carol', '--disable', '--enable']);
    expect([both.code, both.stderr.includes('roost accounts modify: --disable and --enable exclude each other')]).toEqual([2, true]);
    const unknown = await npx(['accounts', 'modify', 'carol', '--role', 'Wizard']);
    expect([unknown.code, unknown.stderr.includes('roost: Role Wizard does not exist')]).toEqual([1, true]);
  }, 90_000);
});
