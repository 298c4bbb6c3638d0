/**
 * A moderator's suspension federates (two real instances on loopback): A suspends its local
 * alice through the admin API; her Delete reaches B, where bob follows her, and B drops her
 * account and her posts: bob's home and B's federated timeline no longer show them. On A her
 * posts are hidden at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { followAccount } from '../../src/services/follows.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';

let a: TestRoost;
let b: TestRoost;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
let reader: TestUser;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost({ instance: { title: 'Roost A' } }), startTestRoost({ instance: { title: 'Roost B' } })]);
  admin = await createTestUser(a, 'operator', { role: 'Admin', scopes: ['read', 'admin:read', 'admin:write'] });
  alice = await createTestUser(a, 'alice');
  reader = await createTestUser(a, 'reader');
  bob = await createTestUser(b, 'bob');
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

describe('a suspension across two instances', () => {
  it("removes the suspended account's posts from the second instance's timelines", async () => {
    const aliceOnB = await lookupRemoteAccount(b.services, b.federation, a.at('/users/alice'));
    expect(aliceOnB).not.toBeNull();
    await followAccount(b.services, bob.account.id, aliceOnB!.id);
    await eventually(async () => {
      const [row] = await b.services.db.sql.query<{ state: string }>(`select state from follows where account_id = $1 and target_account_id = $2`, [bob.account.id, aliceOnB!.id]);
      return row?.state === 'accepted';
    }, 20_000, 'bob follows alice');

    const posted = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'Hello from A', visibility: 'public' } });
    expect(posted.status).toBe(200);
    const home = async () => (await bob.api('/api/v1/timelines/home')).body as { content: string; account: { acct: string } }[];
    await eventually(async () => (await home()).some((s) => s.content.includes('Hello from A')), 20_000, 'the post in bob’s home on B');
    const federated = await bob.api('/api/v1/timelines/public?remote=true');
    expect(federated.body.map((s: { content: string }) => s.content).join()).toContain('Hello from A');
    await settled(a, b);

    const acted = await admin.api(`/api/v1/admin/accounts/${alice.account.id}/action`, { method: 'POST', body: { type: 'suspend', text: 'spam' } });
    expect(acted.status).toBe(200);
    expect(acted.body).toEqual({});

    // On A at once: the public timeline and the status itself hide her.
    const localTimeline = await reader.api('/api/v1/timelines/public');
    expect(localTimeline.body.map((s: { id: string }) => s.id)).not.toContain(posted.body.id);
    expect((await reader.api(`/api/v1/statuses/${posted.body.id}`)).status).toBe(404);

    // On B once the Delete arrives: her account and posts are gone from every timeline.
    await eventually(async () => {
      const [row] = await b.services.db.sql.query(`select 1 from accounts where uri = $1`, [a.at('/users/alice')]);
      return !row;
    }, 20_000, 'alice dropped on B');
    expect((await home()).map((s) => s.content).join()).not.toContain('Hello from A');
    const after = await bob.api('/api/v1/timelines/public?remote=true');
    expect(after.body.map((s: { content: string }) => s.content).join()).not.toContain('Hello from A');
    expect(await b.services.db.sql.query(`select 1 from statuses where uri = $1`, [posted.body.uri])).toEqual([]);
  });
});
