/**
 * A report forwarded from one real instance becomes a report on the other: alice on A reports bob
 * (of B) with forward; A's instance actor sends the Flag; B files a report about bob, citing his
 * status, filed by A's instance actor as B knows it, the comment carried; B's moderators (a role
 * that may manage reports) get the admin.report notification, other users not; B's admin API shows
 * it. A block of A with reject_reports on B drops the next Flag: no report.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import type { Account } from '../../src/db/entities/index.ts';

let a: TestRoost;
let b: TestRoost;
let alice: TestUser; // on A
let bob: TestUser; // on B
let modB: TestUser; // B's moderator
let carol: TestUser; // on B, no role
let bobOnA: Account;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
  [alice, bob] = await Promise.all([createTestUser(a, 'alice'), createTestUser(b, 'bob')]);
  modB = await createTestUser(b, 'modb', { role: 'Moderator', scopes: ['read', 'write', 'admin:read', 'admin:write'] });
  carol = await createTestUser(b, 'carol');
  bobOnA = (await lookupRemoteAccount(a.services, a.federation, b.at('/users/bob')))!;
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

async function reportsOnB(): Promise<{ id: string; account_id: string; target_account_id: string; status_ids: string[]; comment: string; category: string; uri: string | null }[]> {
  return b.services.db.sql.query(
    `select id::text, account_id::text, target_account_id::text, status_ids::text[], comment, category, uri from reports order by id`,
  );
}

/** A forwarded report about bob citing `statusUri` (his status as A knows it): answers the Flag's id once A delivered it. */
async function forwardReport(statusUri: string, comment: string): Promise<string> {
  const onA = await eventually(async () => (await a.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [statusUri]))[0]?.id, 20_000, 'the status on A');
  const res = await alice.api('/api/v1/reports', { method: 'POST', body: { account_id: bobOnA.id, status_ids: [onA], comment, forward: true } });
  expect(res.status).toBe(200);
  expect(res.body.forwarded).toBe(true);
  const flagId = `${a.config.publicUrl}/users/instance.actor#reports/${res.body.id}`;
  const delivery = await eventually(async () => {
    const [d] = await a.services.db.sql.query<{ delivered: number; failed: number }>(`select delivered, failed from deliveries where activity_id = $1`, [flagId]);
    return d && d.delivered + d.failed > 0 ? d : null;
  }, 20_000, 'the Flag delivered');
  expect(delivery).toMatchObject({ delivered: 1, failed: 0 });
  return flagId;
}

describe('Flag between two instances', () => {
  it('a report forwarded from A becomes a report on B, and B’s moderators are notified', async () => {
    // bob mentions alice: A gets his status.
    const post = (await bob.api('/api/v1/statuses', { method: 'POST', body: { status: `@alice@${a.config.domain} buy my stuff` } })).body;
    const flagId = await forwardReport(post.uri, 'spam from B');

    const [report] = await eventually(async () => {
      const rows = await reportsOnB();
      return rows.length ? rows : null;
    }, 20_000, 'the report on B');
    const [reporter] = await b.services.db.sql.query<{ id: string; uri: string; domain: string }>(`select id::text, uri, domain from accounts where id = $1`, [report!.account_id]);
    expect(reporter).toEqual({ id: report!.account_id, uri: `${a.config.publicUrl}/users/instance.actor`, domain: a.config.domain });
    expect(report).toEqual({
      id: expect.any(String),
      account_id: reporter!.id,
      target_account_id: bob.account.id,
      status_ids: [post.id],
      comment: 'spam from B',
      category: 'other',
      uri: flagId,
    });

    await settled(b);
    const notified = async (u: TestUser) => ((await u.api('/api/v1/notifications?types[]=admin.report')).body as any[]).map((n) => [n.type, n.report.id, n.account.id]);
    expect(await notified(modB)).toEqual([['admin.report', report!.id, reporter!.id]]);
    expect(await notified(carol)).toEqual([]);
    expect(await notified(bob)).toEqual([]);

    const listed = await modB.api('/api/v1/admin/reports');
    expect(listed.status).toBe(200);
    expect(listed.body).toHaveLength(1);
    expect(listed.body[0]).toMatchObject({
      id: report!.id,
      comment: 'spam from B',
      forwarded: false,
      account: { id: reporter!.id, domain: a.config.domain, email: null, account: { acct: expect.stringMatching(new RegExp(`@${a.config.domain.replace(/\./g, '\\.')}$`)) } },
      target_account: { id: bob.account.id, username: 'bob', domain: null },
      statuses: [{ id: post.id, uri: post.uri }],
    });
  });

  it('drops a Flag from a domain whose reports B rejects', async () => {
    const admin = await createTestUser(b, 'adminb', { role: 'Admin', scopes: ['admin:read', 'admin:write'] });
    const block = await admin.api('/api/v1/admin/domain_blocks', { method: 'POST', body: { domain: a.config.domain, severity: 'noop', reject_reports: true } });
    expect(block.status).toBe(200);
    const before = await reportsOnB();
    const post = (await bob.api('/api/v1/statuses', { method: 'POST', body: { status: `@alice@${a.config.domain} more stuff` } })).body;
    await forwardReport(post.uri, 'again');
    await settled(a, b);
    expect(await reportsOnB()).toEqual(before);
  });
});
