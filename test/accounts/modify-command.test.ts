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
    expect(await fail({ username: 'erin', role: 'Wizard' })).toEqual([422, 'Role Wizard does not exist (roles: Owner, Admin, Moderator)']);
    expect(await fail({ username: 'erin' })).toEqual([422, 'Nothing to change: give --role, --remove-role, --approve, --confirm, --disable, --enable or --reset-password']);
    expect(await fail({ approve: true })).toEqual([422, 'username is required']);
  });
});

describe('accounts.token and accounts.reset_password', () => {
  const run = (name: string, args: Record<string, unknown>) => runCommand(roost.services, name, args, { federation: roost.federation });
  const fail = (name: string, args: Record<string, unknown>) =>
    run(name, args).then(
      () => null,
      (e: RoostError) => [e.status, e.message],
    );

  it('mints a token the API takes, with the scopes asked for (read by default)', async () => {
    const fay = await createTestUser(roost, 'fay');
    const minted = (await run('accounts.token', { username: 'FAY', scopes: 'read,write' })) as { username: string; token: string; scopes: string[] };
    expect([minted.username, minted.scopes]).toEqual(['fay', ['read', 'write']]);
    const auth = { authorization: `Bearer ${minted.token}` };
    const me = await fetch(roost.at('/api/v1/accounts/verify_credentials'), { headers: auth });
    expect([me.status, ((await me.json()) as { id: string }).id]).toEqual([200, fay.account.id]);
    const posted = await fetch(roost.at('/api/v1/statuses'), { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ status: 'a first post' }) });
    expect(posted.status).toBe(200);
    const readOnly = (await run('accounts.token', { username: 'fay' })) as { token: string; scopes: string[] };
    expect(readOnly.scopes).toEqual(['read']);
    const refused = await fetch(roost.at('/api/v1/statuses'), { method: 'POST', headers: { authorization: `Bearer ${readOnly.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ status: 'no' }) });
    expect(refused.status).toBe(403);
    expect(await fail('accounts.token', { username: 'nobody' })).toEqual([404, 'No local account nobody']);
    expect(await fail('accounts.token', { username: 'fay', scopes: 'read sudo' })).toEqual([422, 'Unknown scope: sudo']);
    expect(await fail('accounts.token', { username: 'fay', scopes: ' , ' })).toEqual([422, 'Give at least one scope (read, write, follow, push, profile, admin:read, admin:write …)']);
  });

  it('resets a password: the new one signs in, the old one and every token stop working', async () => {
    const gus = await createTestUser(roost, 'gus');
    const before = (await roost.services.db.sql.query<{ encrypted_password: string }>(`select encrypted_password from users where account_id = $1`, [gus.account.id]))[0]!.encrypted_password;
    const reset = (await run('accounts.reset_password', { username: 'gus' })) as { username: string; password: string; revokedTokens: number };
    expect(reset.username).toBe('gus');
    expect(reset.password).toMatch(/^\S{16,}$/);
    expect(reset.revokedTokens).toBe(1);
    expect((await gus.api('/api/v1/accounts/verify_credentials')).status).toBe(401);
    const after = (await roost.services.db.sql.query<{ encrypted_password: string }>(`select encrypted_password from users where account_id = $1`, [gus.account.id]))[0]!.encrypted_password;
    expect(after).not.toBe(before);
    expect(after).not.toContain(reset.password);
    const { verifyPassword } = await import('../../src/lib/password.ts');
    expect(await verifyPassword(reset.password, after)).toBe(true);
    expect(await fail('accounts.reset_password', { username: 'nobody' })).toEqual([404, 'No local account nobody']);
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
    const reset = await npx(['accounts', 'modify', 'carol', '--reset-password']);
    expect(reset.code).toBe(0);
    expect(reset.stdout).toMatch(/^OK: carol: password reset, 0 token\(s\) revoked\nNew password: \S{16,}\n$/);
    const token = await npx(['accounts', 'token', 'carol', '--scopes', 'read write']);
    expect(token.code).toBe(0);
    expect(token.stdout.split('\n')[0]).toBe('OK: a token for carol with read write');
    expect(token.stdout.trim().split('\n').at(-1)).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const unknown = await npx(['accounts', 'modify', 'carol', '--role', 'Wizard']);
    expect([unknown.code, unknown.stderr.includes('roost: Role Wizard does not exist')]).toEqual([1, true]);
  }, 180_000);
});
