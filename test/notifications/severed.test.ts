/**
 * severed_relationships (Mastodon 4.3) across two real instances: a user's domain block and an
 * admin's suspend of the other server end follows, and each local account that lost some gets one
 * notification carrying the event with its own counts (v1 and v2, types[] / exclude_types[]); a
 * block raised from silence to suspend severs too, and a pending request is not counted;
 * accounts that lost nothing get nothing; a replayed event job writes nothing twice; a page holding
 * events costs one statement more, whatever its size.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { followAccount } from '../../src/services/follows.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { notificationsConsumer, type NotificationSink } from '../../src/effects/notifications.ts';
import type { ConsumerRecord } from '../../src/effects/registry.ts';
import type { Account } from '../../src/db/entities/index.ts';

let a: TestRoost;
let b: TestRoost;
let alice: TestUser; // on A: follows bob1 and bob2, followed by bob3
let carol: TestUser; // on A: no follows with B
let dave: TestUser; // on A: follows bob1, followed by bob2; blocks B's domain herself
let erin: TestUser; // on A: blocks B's domain, lost nothing
let admin: TestUser;
const bobs: TestUser[] = [];
const onA: Record<string, Account> = {};
let domainOfB: string;

/** `who` on A follows `whom` on B, accepted. */
async function followB(who: TestUser, whom: string): Promise<void> {
  const f = await followAccount(a.services, who.account.id, onA[whom]!.id);
  await eventually(async () => (await a.services.db.sql.query(`select 1 from follows where id = $1 and state = 'accepted'`, [f.id])).length > 0, 20_000, 'the Accept');
}

/** `who` on B follows `whom` on A, accepted there and here. */
async function followedFromB(who: TestUser, whom: TestUser): Promise<void> {
  const target = (await lookupRemoteAccount(b.services, b.federation, a.at(`/users/${whom.account.username}`)))!;
  await followAccount(b.services, who.account.id, target.id);
  const remote = onA[who.account.username]!;
  await eventually(
    async () =>
      (await a.services.db.sql.query(`select 1 from follows where account_id = $1 and target_account_id = $2 and state = 'accepted'`, [remote.id, whom.account.id]))
        .length > 0,
    20_000,
    'the follow on A',
  );
}

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
  [alice, carol, dave, erin, admin] = await Promise.all([
    createTestUser(a, 'alice'),
    createTestUser(a, 'carol'),
    createTestUser(a, 'dave'),
    createTestUser(a, 'erin'),
    createTestUser(a, 'boss', { role: 'Admin', scopes: ['read', 'write', 'admin:read', 'admin:write'] }),
  ]);
  for (const name of ['bob1', 'bob2', 'bob3']) {
    bobs.push(await createTestUser(b, name));
    onA[name] = (await lookupRemoteAccount(a.services, a.federation, b.at(`/users/${name}`)))!;
  }
  domainOfB = onA.bob1!.domain!;
  await followB(alice, 'bob1');
  await followB(alice, 'bob2');
  await followedFromB(bobs[2]!, alice);
  await followB(dave, 'bob1');
  await followedFromB(bobs[1]!, dave);
  await settled(a, b);
}, 180_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

async function severed(u: TestUser): Promise<any[]> {
  await settled(a);
  const res = await u.api('/api/v1/notifications?types[]=severed_relationships');
  expect(res.status).toBe(200);
  return res.body as any[];
}

async function outboxRecord(eventId: string): Promise<ConsumerRecord<'notifications'>> {
  const [r] = await a.services.db.sql.query<{ id: string; actor_kind: string; actor_id: string; actor_version: number | null; origin: string; payload: any }>(
    `select id::text, actor_kind, actor_id::text, actor_version, origin, payload from outbox_events
      where type = 'relationships.severed' and payload->>'eventId' = $1`,
    [eventId],
  );
  expect(r).toBeTruthy();
  return { id: r!.id, actorKind: r!.actor_kind, actorId: r!.actor_id, actorVersion: r!.actor_version, origin: r!.origin as never, event: r!.payload };
}

const followsWithB = async (u: TestUser) =>
  (
    await a.services.db.sql.query<{ n: number }>(
      `select count(*)::int as n from follows f join accounts x on x.id = (case when f.account_id = $1 then f.target_account_id else f.account_id end)
        where (f.account_id = $1 or f.target_account_id = $1) and f.state in ('accepted', 'requested') and x.domain = $2`,
      [u.account.id, domainOfB],
    )
  )[0]!.n;

describe('severed_relationships', () => {
  it("a user's domain block: one notification with the user_domain_block event; nothing for one that lost nothing", async () => {
    expect(await followsWithB(dave)).toBe(2);
    expect((await dave.api('/api/v1/domain_blocks', { body: { domain: domainOfB } })).status).toBe(200);
    expect((await erin.api('/api/v1/domain_blocks', { body: { domain: domainOfB } })).status).toBe(200);
    expect(await followsWithB(dave)).toBe(0);
    const [n, ...more] = await severed(dave);
    expect(more).toEqual([]);
    const [event] = await a.services.db.sql.query<{ id: string; created_at: Date }>(
      `select id::text, created_at from relationship_severance_events where type = 'user_domain_block'`,
    );
    expect(n).toEqual({
      id: n.id,
      type: 'severed_relationships',
      group_key: `ungrouped-${n.id}`,
      created_at: n.created_at,
      account: (await dave.api(`/api/v1/accounts/${dave.account.id}`)).body,
      event: {
        id: event!.id,
        type: 'user_domain_block',
        purged: false,
        target_name: domainOfB,
        followers_count: 1,
        following_count: 1,
        created_at: new Date(event!.created_at).toISOString(),
      },
    });
    expect(await severed(erin)).toEqual([]);
    expect((await a.services.db.sql.query(`select 1 from account_relationship_severance_events where account_id = $1`, [erin.account.id])).length).toBe(0);
  });

  it('an admin suspends the domain: one domain_block notification per local account that lost follows, once even on replay', async () => {
    // Two mentions first: alice's page holds more than the event.
    for (const text of ['one', 'two']) {
      expect((await carol.api('/api/v1/statuses', { body: { status: `@alice ${text}` } })).status).toBe(200);
    }
    await settled(a);
    const block = await admin.api('/api/v1/admin/domain_blocks', { body: { domain: domainOfB, severity: 'suspend' } });
    expect(block.status).toBe(200);
    expect(block.body.domain).toBe(domainOfB);
    expect(await followsWithB(alice)).toBe(0);

    const [n, ...more] = await severed(alice);
    expect(more).toEqual([]);
    const [event] = await a.services.db.sql.query<{ id: string; created_at: Date }>(
      `select id::text, created_at from relationship_severance_events where type = 'domain_block'`,
    );
    const expected = {
      id: event!.id,
      type: 'domain_block',
      purged: false,
      target_name: domainOfB,
      followers_count: 1,
      following_count: 2,
      created_at: new Date(event!.created_at).toISOString(),
    };
    const self = (await alice.api(`/api/v1/accounts/${alice.account.id}`)).body;
    expect(n).toEqual({ id: n.id, type: 'severed_relationships', group_key: `ungrouped-${n.id}`, created_at: n.created_at, account: self, event: expected });
    // dave already lost his follows there, carol and erin never had any, the admin neither.
    for (const u of [carol, erin, admin]) expect(await severed(u)).toEqual([]);
    expect((await severed(dave)).map((x) => x.event.type)).toEqual(['user_domain_block']);
    expect(
      (await a.services.db.sql.query<{ account_id: string }>(
        `select account_id::text from account_relationship_severance_events where relationship_severance_event_id = $1`, [event!.id],
      )).map((r) => r.account_id),
    ).toEqual([alice.account.id]);

    // The event job replayed: nothing written twice, nothing reaches a sink again.
    const got: Parameters<NotificationSink>[0][] = [];
    const consume = notificationsConsumer(a.services, [async (items) => void got.push(items)]);
    const record = await outboxRecord(event!.id);
    await consume(record);
    await consume(record);
    expect(got).toEqual([]);
    expect(await severed(alice)).toEqual([n]);

    // types[] / exclude_types[] take the type.
    expect((await alice.api('/api/v1/notifications?exclude_types[]=severed_relationships')).body.map((x: any) => x.type)).toEqual(['mention', 'mention']);
    expect((await alice.api('/api/v1/notifications')).body.map((x: any) => x.type)).toEqual(['severed_relationships', 'mention', 'mention']);
    expect((await alice.api(`/api/v1/notifications/${n.id}`)).body).toEqual(n);

    // v2: ungrouped, carrying the event.
    const v2 = (await alice.api('/api/v2/notifications?types[]=severed_relationships')).body;
    expect(v2.notification_groups).toEqual([
      {
        group_key: `ungrouped-${n.id}`,
        notifications_count: 1,
        type: 'severed_relationships',
        most_recent_notification_id: Number(n.id),
        page_min_id: n.id,
        page_max_id: n.id,
        latest_page_notification_at: n.created_at,
        sample_account_ids: [alice.account.id],
        event: expected,
      },
    ]);
    expect(v2.accounts.map((x: any) => x.id)).toEqual([alice.account.id]);
    const one = (await alice.api(`/api/v2/notifications/ungrouped-${n.id}`)).body;
    expect(one.notification_groups[0]).toMatchObject({ type: 'severed_relationships', event: expected });
  });

  it('a block changed to suspend severs too; a pending request is not counted', async () => {
    const [{ id: blockId }] = (await admin.api('/api/v1/admin/domain_blocks')).body;
    expect((await admin.api(`/api/v1/admin/domain_blocks/${blockId}`, { method: 'DELETE' })).status).toBe(200);
    await followB(carol, 'bob1');
    // bob3 locks up: carol's request to follow them stays pending.
    expect((await bobs[2]!.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } })).status).toBe(200);
    await settled(a, b);
    await followAccount(a.services, carol.account.id, onA.bob3!.id);
    await settled(a, b);
    const silenced = await admin.api('/api/v1/admin/domain_blocks', { body: { domain: domainOfB, severity: 'silence' } });
    expect(silenced.status).toBe(200);
    expect(await severed(carol)).toEqual([]);
    expect(
      (await a.services.db.sql.query<{ target: string; state: string }>(
        `select x.username as target, f.state from follows f join accounts x on x.id = f.target_account_id where f.account_id = $1 order by x.username`,
        [carol.account.id],
      )),
    ).toEqual([{ target: 'bob1', state: 'accepted' }, { target: 'bob3', state: 'requested' }]);
    expect((await admin.api(`/api/v1/admin/domain_blocks/${silenced.body.id}`, { method: 'PUT', body: { severity: 'suspend' } })).status).toBe(200);
    expect(await followsWithB(carol)).toBe(0);
    const got = await severed(carol);
    expect(got.map((n) => [n.event.type, n.event.target_name, n.event.following_count, n.event.followers_count])).toEqual([['domain_block', domainOfB, 1, 0]]);
    // alice lost nothing this time: still her one notification.
    expect((await severed(alice)).length).toBe(1);
  });

  it('a page holding events costs one statement more, whatever its size', async () => {
    expect((await carol.api('/api/v1/statuses', { body: { status: '@dave hello' } })).status).toBe(200);
    const small1 = await capturedStatements(a, () => dave.api('/api/v1/notifications'));
    const small2 = await capturedStatements(a, () => dave.api('/api/v2/notifications'));
    const big1 = await capturedStatements(a, () => alice.api('/api/v1/notifications'));
    const big2 = await capturedStatements(a, () => alice.api('/api/v2/notifications'));
    expect((await alice.api('/api/v1/notifications')).body.length).toBe(3);
    expect((await dave.api('/api/v1/notifications')).body.map((x: any) => x.type)).toEqual(['mention', 'severed_relationships']);
    expect(big1).toEqual(small1);
    expect(big2).toEqual(small2);
    // The three of a page (test/notifications/notifications.test.ts) and the events.
    expect([big1.length, big2.length]).toEqual([4, 4]);
    expect(big1.filter((s) => s.startsWith('select e.id::text, e.type, e.purged, e.target_name')).length).toBe(1);
  });
});
