/**
 * Notifications caused from another server, across two real instances: a remote follow, mention,
 * favourite and reblog notify the local account once each; a local poll's end notifies the remote
 * instance's local voter there (its copy closes from the final Update(Question)) and the author here.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { followAccount } from '../../src/services/follows.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { closePoll } from '../../src/services/polls.ts';
import type { Account } from '../../src/db/entities/index.ts';

let a: TestRoost;
let b: TestRoost;
let alice: TestUser; // on A
let bob: TestUser; // on B, follows alice
let bobOnA: Account;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
  [alice, bob] = await Promise.all([createTestUser(a, 'alice'), createTestUser(b, 'bob')]);
  const aliceOnB = (await lookupRemoteAccount(b.services, b.federation, a.at('/users/alice')))!;
  bobOnA = (await lookupRemoteAccount(a.services, a.federation, b.at('/users/bob')))!;
  const follow = await followAccount(b.services, bob.account.id, aliceOnB.id);
  await eventually(async () => (await b.services.db.sql.query(`select 1 from follows where id = $1 and state = 'accepted'`, [follow.id])).length > 0, 20_000, 'the Accept');
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

async function notifications(r: TestRoost, u: TestUser, type: string): Promise<any[]> {
  await settled(r);
  return ((await u.api(`/api/v1/notifications?types[]=${type}`)).body as any[]);
}

/** B's id of a status of A, once it arrived. */
async function onB(uri: string): Promise<string> {
  return eventually(async () => (await b.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [uri]))[0]?.id, 20_000, 'the status on B');
}

describe('notifications from another server', () => {
  it('a remote follow, mention, favourite and reblog notify once each', async () => {
    const [follow, ...more] = await notifications(a, alice, 'follow');
    expect(more).toEqual([]);
    expect(follow).toMatchObject({ type: 'follow', account: { id: bobOnA.id, acct: `bob@${b.config.domain}` } });

    const mention = (await bob.api('/api/v1/statuses', { body: { status: `@alice@${a.config.domain} hi from B` } })).body;
    const mentions = await eventually(async () => {
      const got = await notifications(a, alice, 'mention');
      return got.length ? got : null;
    }, 20_000, 'the mention on A');
    expect(mentions.map((n) => [n.account.id, n.status.uri, n.group_key])).toEqual([[bobOnA.id, mention.uri, `ungrouped-${mentions[0].id}`]]);

    const mine = (await alice.api('/api/v1/statuses', { body: { status: 'like and boost me' } })).body;
    const copy = await onB(mine.uri);
    expect((await bob.api(`/api/v1/statuses/${copy}/favourite`, { method: 'POST' })).status).toBe(200);
    expect((await bob.api(`/api/v1/statuses/${copy}/reblog`, { method: 'POST' })).status).toBe(200);
    for (const type of ['favourite', 'reblog']) {
      const got = await eventually(async () => {
        const n = await notifications(a, alice, type);
        return n.length ? n : null;
      }, 20_000, `the ${type} on A`);
      expect(got.map((n) => [n.type, n.account.id, n.status.id])).toEqual([[type, bobOnA.id, mine.id]]);
    }
  });

  it("a local poll's end: the author here, the voter on the other server", async () => {
    const asked = (await alice.api('/api/v1/statuses', { body: { status: 'A or B?', poll: { options: ['A', 'B'], expires_in: 3600 } } })).body;
    const copy = await onB(asked.uri);
    const pollOnB = (await bob.api(`/api/v1/statuses/${copy}`)).body.poll;
    expect((await bob.api(`/api/v1/polls/${pollOnB.id}/votes`, { body: { choices: ['1'] } })).status).toBe(200);
    await eventually(async () => (await a.services.db.sql.query(`select 1 from poll_votes where poll_id = $1`, [asked.poll.id])).length > 0, 20_000, 'the vote on A');
    await settled(a, b);
    expect(await closePoll(a.services, asked.poll.id, 'client')).toBe(true);
    const here = await notifications(a, alice, 'poll');
    expect(here.map((n) => [n.account.id, n.status.id])).toEqual([[alice.account.id, asked.id]]);
    const there = await eventually(async () => {
      const n = await notifications(b, bob, 'poll');
      return n.length ? n : null;
    }, 20_000, 'the poll notification on B');
    expect(there.map((n) => [n.account.acct, n.status.id, n.status.poll.expired])).toEqual([[`alice@${a.config.domain}`, copy, true]]);
  });

  it('a report about a remote account with forward: a Flag from the instance actor reaches its server', async () => {
    const theirs = (await bob.api('/api/v1/statuses', { body: { status: `@alice@${a.config.domain} report me` } })).body;
    const onA = await eventually(async () => (await a.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [theirs.uri]))[0]?.id, 20_000, 'the status on A');
    const res = await alice.api('/api/v1/reports', { body: { account_id: bobOnA.id, status_ids: [onA], comment: 'spam from B', forward: true } });
    expect(res.body).toMatchObject({ forwarded: true, category: 'other', status_ids: [onA], target_account: { id: bobOnA.id } });
    const flagId = `${a.config.publicUrl}/users/instance.actor#reports/${res.body.id}`;
    const delivery = await eventually(async () => {
      const [d] = await a.services.db.sql.query<{ activity_type: string; delivered: number; failed: number }>(
        `select activity_type, delivered, failed from deliveries where activity_id = $1`, [flagId]);
      return d && d.delivered + d.failed > 0 ? d : null;
    }, 20_000, 'the Flag delivered');
    expect(delivery).toMatchObject({ activity_type: 'Flag', delivered: 1, failed: 0 });
    // Not forwarded: a local account, or forward not asked.
    expect((await alice.api('/api/v1/reports', { body: { account_id: bobOnA.id, forward: false } })).body.forwarded).toBe(false);
  });
});
