/**
 * The domain policy between two real instances on loopback (real HTTP, real signatures). Both run
 * on 127.0.0.1 with their own port: a server's domain is "127.0.0.1:PORT", and a block names it
 * so (src/lib/domains.ts).
 *
 * A suspends B: B's accounts on A are suspended, the follows between them and A's accounts end,
 * B's Follow is refused at A's inbox, A sends B nothing and fetches nothing from it. Unblocking
 * lifts what the block imposed. A silence keeps B's follow requests to an unlocked account of A
 * pending.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { followAccount, unfollowAccount } from '../../src/services/follows.ts';
import { blockAccount } from '../../src/services/relationships.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import type { Account } from '../../src/db/entities/index.ts';

let a: TestRoost;
let b: TestRoost;
let admin: TestUser;

async function followState(r: TestRoost, followerUri: string, targetUri: string): Promise<string | null> {
  const [row] = await r.services.db.sql.query<{ state: string }>(
    `select f.state from follows f join accounts x on x.id = f.account_id join accounts y on y.id = f.target_account_id where x.uri = $1 and y.uri = $2`,
    [followerUri, targetUri],
  );
  return row?.state ?? null;
}

async function accountFlags(r: TestRoost, uri: string) {
  const [row] = await r.services.db.sql.query<{ suspended: boolean; silenced: boolean; effects: string[] }>(
    `select a.suspended_at is not null as suspended, a.silenced_at is not null as silenced,
            coalesce((select array_agg(e.effect order by e.effect) from instance_domain_block_effects e where e.account_id = a.id), '{}') as effects
       from accounts a where a.uri = $1`,
    [uri],
  );
  return row ?? null;
}

async function remote(on: TestRoost, other: TestRoost, username: string): Promise<Account> {
  const account = await lookupRemoteAccount(on.services, on.federation, other.at(`/users/${username}`));
  expect(account).not.toBeNull();
  return account!;
}

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost({ instance: { title: 'Roost A' } }), startTestRoost({ instance: { title: 'Roost B' } })]);
  admin = await createTestUser(a, 'operator', { role: 'Owner', scopes: ['admin:read', 'admin:write'] });
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

describe('domain policy across two instances', () => {
  it('a suspension ends follows, refuses inbound, sends and fetches nothing; lifting it lets federation work again', async () => {
    const { account: alice } = await createLocalAccount(a.services, { username: 'alice', email: 'alice@a.test' });
    const { account: bob } = await createLocalAccount(b.services, { username: 'bob', email: 'bob@b.test' });
    const { account: carol } = await createLocalAccount(b.services, { username: 'carol', email: 'carol@b.test' });
    const aliceUri = a.at('/users/alice');
    const bobUri = b.at('/users/bob');
    const carolUri = b.at('/users/carol');

    // Follows both ways, accepted on both sides.
    const bobOnA = await remote(a, b, 'bob');
    const aliceOnB = await remote(b, a, 'alice');
    await followAccount(a.services, alice.id, bobOnA.id);
    await followAccount(b.services, bob.id, aliceOnB.id);
    for (const [r, f, t] of [[a, aliceUri, bobUri], [b, aliceUri, bobUri], [a, bobUri, aliceUri], [b, bobUri, aliceUri]] as const) {
      await eventually(async () => (await followState(r, f, t)) === 'accepted', 20_000, `${f} → ${t} accepted on ${r.config.domain}`);
    }
    await settled(a, b);

    // The default: the list of moderated servers is not shown (Mastodon's show_domain_blocks).
    expect((await fetch(a.at('/api/v1/instance/domain_blocks'))).status).toBe(404);

    const blocked = await admin.api('/api/v1/admin/domain_blocks', { method: 'POST', body: { domain: b.config.domain, severity: 'suspend' } });
    expect(blocked.status).toBe(200);
    expect(blocked.body).toMatchObject({ domain: b.config.domain, severity: 'suspend' });

    // On A: bob suspended by the policy (marked as such), both follows ended through their actors.
    expect(await accountFlags(a, bobUri)).toEqual({ suspended: true, silenced: false, effects: ['suspend'] });
    expect(await followState(a, aliceUri, bobUri)).toBe('removed');
    expect(await followState(a, bobUri, aliceUri)).toBe('undone');
    const events = await a.services.db.sql.query<{ type: string }>(
      `select type from outbox_events where actor_kind in ('follow', 'account', 'domain_block') and created_at >= $1 order by id`,
      [new Date(Date.parse(blocked.body.created_at))],
    );
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['account.suspended', 'follow.removed', 'follow.undone', 'domain_block.created']));

    // A sends nothing to B: not the ends of the follows, not a block.
    await blockAccount(a.services, alice.id, bobOnA.id);
    await settled(a, b);
    expect(await followState(b, aliceUri, bobUri)).toBe('accepted');
    expect(await followState(b, bobUri, aliceUri)).toBe('accepted');
    expect(await b.services.db.sql.query(`select 1 from blocks`)).toEqual([]);

    // A fetches nothing from B: neither WebFinger nor actor documents.
    expect(await lookupRemoteAccount(a.services, a.federation, `carol@${b.config.domain}`)).toBeNull();
    expect(await lookupRemoteAccount(a.services, a.federation, carolUri)).toBeNull();
    expect(await accountFlags(a, carolUri)).toBeNull();

    // B's Follow to A is refused at A's inbox, before any key is fetched.
    const signedFollow = await fetch(a.at('/users/alice/inbox'), {
      method: 'POST',
      headers: { 'content-type': 'application/activity+json', signature: `keyId="${bobUri}#main-key",signature="x"` },
      body: JSON.stringify({ '@context': 'https://www.w3.org/ns/activitystreams', type: 'Follow', actor: bobUri, object: aliceUri }),
    });
    expect(signedFollow.status).toBe(403);
    expect(await signedFollow.json()).toEqual({ error: 'Activities from this server are not accepted' });
    const aliceOnBForCarol = await remote(b, a, 'alice');
    await followAccount(b.services, carol.id, aliceOnBForCarol.id);
    await eventually(async () => {
      // A's 403 is final: the delivery counts it as failed (federation/delivery.ts).
      const failed = await b.services.db.sql.query(`select 1 from deliveries where sender = 'carol' and activity_type = 'Follow' and failed > 0`);
      return failed.length > 0;
    }, 20_000, 'B to try delivering the Follow');
    expect(await accountFlags(a, carolUri)).toBeNull();
    expect(await followState(b, carolUri, aliceUri)).toBe('requested');

    // Unblock: bob's suspension (the policy's) is lifted; federation works again.
    expect((await admin.api(`/api/v1/admin/domain_blocks/${blocked.body.id}`, { method: 'DELETE' })).status).toBe(200);
    expect(await accountFlags(a, bobUri)).toEqual({ suspended: false, silenced: false, effects: [] });
    const carolOnA = await remote(a, b, 'carol');
    expect(carolOnA.suspendedAt ?? null).toBeNull();
    await followAccount(a.services, alice.id, carolOnA.id);
    await eventually(async () => (await followState(a, aliceUri, carolUri)) === 'accepted', 20_000, 'alice → carol accepted after the unblock');
    // B's refused Follow was final (a 403 is not retried, as Mastodon's delivery worker): carol asks again.
    await unfollowAccount(b.services, carol.id, aliceOnBForCarol.id);
    await followAccount(b.services, carol.id, aliceOnBForCarol.id);
    await eventually(async () => (await followState(b, carolUri, aliceUri)) === 'accepted', 30_000, 'carol → alice accepted after the unblock');
  }, 120_000);

  it('a silence keeps a follow request from the silenced server pending, even to an unlocked account', async () => {
    const { account: erin } = await createLocalAccount(a.services, { username: 'erin', email: 'erin@a.test' });
    const { account: dave } = await createLocalAccount(b.services, { username: 'dave', email: 'dave@b.test' });
    const erinUri = a.at('/users/erin');
    const daveUri = b.at('/users/dave');
    expect(erin.locked).toBe(false);

    const silenced = await admin.api('/api/v1/admin/domain_blocks', { method: 'POST', body: { domain: b.config.domain, severity: 'silence' } });
    expect(silenced.status).toBe(200);
    // Known accounts of B are silenced by the policy.
    expect(await accountFlags(a, b.at('/users/bob'))).toEqual({ suspended: false, silenced: true, effects: ['silence'] });

    const erinOnB = await remote(b, a, 'erin');
    await followAccount(b.services, dave.id, erinOnB.id);
    await eventually(async () => (await followState(a, daveUri, erinUri)) === 'requested', 20_000, 'dave → erin to arrive on A');
    await settled(a, b);
    expect(await followState(a, daveUri, erinUri)).toBe('requested');
    expect(await followState(b, daveUri, erinUri)).toBe('requested');
    // dave was first seen after the silence: silenced on arrival, as the policy's.
    expect(await accountFlags(a, daveUri)).toEqual({ suspended: false, silenced: true, effects: ['silence'] });
    // A silenced server is not listed among the peers.
    expect(await (await fetch(a.at('/api/v1/instance/peers'))).json()).toEqual([]);

    // Softened to noop: the silence the policy imposed is lifted.
    const noop = await admin.api(`/api/v1/admin/domain_blocks/${silenced.body.id}`, { method: 'PUT', body: { severity: 'noop' } });
    expect(noop.body.severity).toBe('noop');
    expect(await accountFlags(a, b.at('/users/bob'))).toEqual({ suspended: false, silenced: false, effects: [] });
    expect(await accountFlags(a, daveUri)).toEqual({ suspended: false, silenced: false, effects: [] });
    expect(await (await fetch(a.at('/api/v1/instance/peers'))).json()).toEqual([b.config.domain]);
  }, 60_000);
});

describe('allowlist federation mode', () => {
  it('talks only to allowed servers, in and out', async () => {
    const c = await startTestRoost({ instance: { title: 'Roost C' }, federation: { mode: 'allowlist' } });
    try {
      const owner = await createTestUser(c, 'operator', { role: 'Owner', scopes: ['admin:read', 'admin:write'] });
      const { account: charlie } = await createLocalAccount(c.services, { username: 'charlie', email: 'charlie@c.test' });
      const { account: frank } = await createLocalAccount(b.services, { username: 'frank', email: 'frank@b.test' });
      const charlieUri = c.at('/users/charlie');
      const frankUri = b.at('/users/frank');

      // B is not allowed: C fetches nothing from it and takes nothing from it.
      expect(await lookupRemoteAccount(c.services, c.federation, frankUri)).toBeNull();
      expect(await lookupRemoteAccount(c.services, c.federation, `frank@${b.config.domain}`)).toBeNull();
      const charlieOnB = await remote(b, c, 'charlie');
      await followAccount(b.services, frank.id, charlieOnB.id);
      await eventually(
        async () => (await b.services.db.sql.query(`select 1 from deliveries where sender = 'frank' and activity_type = 'Follow' and failed > 0`)).length > 0,
        20_000,
        'C to refuse B',
      );
      expect(await accountFlags(c, frankUri)).toBeNull();

      // Allowed: both ways work.
      const allowed = await owner.api('/api/v1/admin/domain_allows', { method: 'POST', body: { domain: b.config.domain } });
      expect(allowed.status).toBe(200);
      const frankOnC = await remote(c, b, 'frank');
      await followAccount(c.services, charlie.id, frankOnC.id);
      await eventually(async () => (await followState(c, charlieUri, frankUri)) === 'accepted', 20_000, 'charlie → frank accepted');
      // frank's refused Follow was final (a 403 is not retried): he asks again.
      await unfollowAccount(b.services, frank.id, charlieOnB.id);
      await followAccount(b.services, frank.id, charlieOnB.id);
      await eventually(async () => (await followState(b, frankUri, charlieUri)) === 'accepted', 30_000, "frank's new Follow taken after the allow");

      // Disallowed again: C refuses B's activities at once.
      expect((await owner.api(`/api/v1/admin/domain_allows/${allowed.body.id}`, { method: 'DELETE' })).status).toBe(200);
      const refused = await fetch(c.at('/inbox'), {
        method: 'POST',
        headers: { 'content-type': 'application/activity+json', signature: `keyId="${frankUri}#main-key",signature="x"` },
        body: '{}',
      });
      expect(refused.status).toBe(403);
    } finally {
      await c.close();
    }
  }, 120_000);
});
