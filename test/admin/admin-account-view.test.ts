/**
 * views/admin-accounts.ts: Admin::Account whole for local and remote accounts, and a fixed
 * number of statements whatever the number of ids.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedStatements, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { adminAccountViews } from '../../src/views/admin-accounts.ts';
import { insertRemoteAccount } from '../../src/services/accounts.ts';

let roost: TestRoost;
let mod: TestUser;
let plain: TestUser;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

beforeAll(async () => {
  roost = await startTestRoost();
  mod = await createTestUser(roost, 'viewmod', { role: 'Moderator' });
  plain = await createTestUser(roost, 'viewplain', { locale: 'de' });
  await roost.services.db.sql.query(`insert into user_ips (user_id, ip, used_at) values ($1, '10.1.2.3', '2026-01-01T00:00:00Z'), ($1, '2001:db8::1', '2026-02-01T00:00:00Z')`, [plain.user.id]);
});
afterAll(async () => {
  await roost?.close();
});

describe('adminAccountViews', () => {
  it('renders local users, roles, addresses and remote accounts as Mastodon does', async () => {
    const remote = await insertRemoteAccount(roost.services, { uri: 'https://far.example/users/zed', username: 'zed', domain: 'far.example', inboxUrl: 'https://far.example/users/zed/inbox' });
    const views = await adminAccountViews(roost.services, [plain.account.id, mod.account.id, remote.id, '999999999']);
    expect([...views.keys()]).toEqual([plain.account.id, mod.account.id, remote.id]);
    const p = views.get(plain.account.id)!;
    expect(p).toEqual({
      id: plain.account.id,
      username: 'viewplain',
      domain: null,
      created_at: expect.stringMatching(ISO),
      email: 'viewplain@example.test',
      ip: '2001:db8::1',
      ips: [
        { ip: '2001:db8::1', used_at: '2026-02-01T00:00:00.000Z' },
        { ip: '10.1.2.3', used_at: '2026-01-01T00:00:00.000Z' },
      ],
      locale: 'de',
      invite_request: null,
      role: { id: '-99', name: '', color: '', permissions: '65536', highlighted: false },
      confirmed: true,
      approved: true,
      disabled: false,
      silenced: false,
      suspended: false,
      sensitized: false,
      account: expect.objectContaining({ id: plain.account.id, acct: 'viewplain', roles: [] }),
    });
    const m = views.get(mod.account.id)!;
    expect(m.role).toEqual({ id: '3', name: 'Moderator', color: '', permissions: String(0x4 | 0x8 | 0x10 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000), highlighted: true });
    expect(m.account.roles).toEqual([{ id: '3', name: 'Moderator', color: '' }]);
    const r = views.get(remote.id)!;
    expect(r).toMatchObject({ domain: 'far.example', email: null, ip: null, ips: [], role: null, confirmed: false, approved: false, disabled: false, locale: null });
    expect(r.account.acct).toBe('zed@far.example');
  });

  it('costs one statement for one account and for twenty', async () => {
    const many: string[] = [];
    for (let i = 0; i < 20; i++) many.push((await createTestUser(roost, `viewmany${i}`)).account.id);
    const one = await capturedStatements(roost, () => adminAccountViews(roost.services, [many[0]!]));
    const twenty = await capturedStatements(roost, () => adminAccountViews(roost.services, many));
    expect(one.length).toBe(1);
    expect(twenty.length).toBe(one.length);
  });
});
