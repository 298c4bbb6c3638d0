/**
 * The account_stats row: followers and following counts follow every step of a follow (request,
 * accept, unfollow, remove from followers, block, a remote follow over real federation, a deleted
 * remote actor), and always equal what counting the follows would give.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';

let roost: TestRoost;
let other: TestRoost;
beforeAll(async () => {
  [roost, other] = await Promise.all([startTestRoost(), startTestRoost()]);
});
afterAll(async () => {
  await Promise.all([roost?.close(), other?.close()]);
});

async function counts(viewer: TestUser, id: string): Promise<[number, number]> {
  const res = await viewer.api(`/api/v1/accounts/${id}`);
  expect(res.status).toBe(200);
  return [res.body.followers_count, res.body.following_count];
}

/** Every stats row of the instance equals the count of its accepted follows. */
async function statsMatchFollows(r: TestRoost): Promise<void> {
  const drift = await r.services.db.sql.query(
    `select a.id::text, coalesce(s.followers_count, 0) as stored_followers, coalesce(s.following_count, 0) as stored_following,
            (select count(*) from follows f where f.target_account_id = a.id and f.state = 'accepted')::int as followers,
            (select count(*) from follows f where f.account_id = a.id and f.state = 'accepted')::int as following
       from accounts a left join account_stats s on s.account_id = a.id`,
  );
  expect(drift.filter((d) => d.stored_followers !== d.followers || d.stored_following !== d.following)).toEqual([]);
}

describe('account_stats', () => {
  it('counts through request, accept, unfollow, remove from followers and block', async () => {
    const ann = await createTestUser(roost, 'sa');
    const bob = await createTestUser(roost, 'sb');
    const cat = await createTestUser(roost, 'sc');
    await ann.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } });

    // A request counts nothing until accepted.
    await bob.api(`/api/v1/accounts/${ann.account.id}/follow`, { method: 'POST' });
    expect(await counts(ann, ann.account.id)).toEqual([0, 0]);
    expect(await counts(ann, bob.account.id)).toEqual([0, 0]);
    await ann.api(`/api/v1/follow_requests/${bob.account.id}/authorize`, { method: 'POST' });
    expect(await counts(ann, ann.account.id)).toEqual([1, 0]);
    expect(await counts(ann, bob.account.id)).toEqual([0, 1]);

    // Following again changes nothing; cat follows too.
    await bob.api(`/api/v1/accounts/${ann.account.id}/follow`, { method: 'POST', body: { notify: true } });
    await cat.api(`/api/v1/accounts/${ann.account.id}/follow`, { method: 'POST' });
    await ann.api(`/api/v1/follow_requests/${cat.account.id}/authorize`, { method: 'POST' });
    await ann.api(`/api/v1/accounts/${cat.account.id}/follow`, { method: 'POST' });
    expect(await counts(ann, ann.account.id)).toEqual([2, 1]);
    expect(await counts(ann, cat.account.id)).toEqual([1, 1]);

    // Unfollow, remove from followers, block (ends both directions).
    await bob.api(`/api/v1/accounts/${ann.account.id}/unfollow`, { method: 'POST' });
    expect(await counts(ann, ann.account.id)).toEqual([1, 1]);
    expect(await counts(ann, bob.account.id)).toEqual([0, 0]);
    await ann.api(`/api/v1/accounts/${cat.account.id}/remove_from_followers`, { method: 'POST' });
    expect(await counts(ann, ann.account.id)).toEqual([0, 1]);
    expect(await counts(ann, cat.account.id)).toEqual([1, 0]);
    await cat.api(`/api/v1/accounts/${ann.account.id}/block`, { method: 'POST' });
    expect(await counts(bob, ann.account.id)).toEqual([0, 0]);
    expect(await counts(bob, cat.account.id)).toEqual([0, 0]);
    // The credentials and the ActivityPub collections read the same row.
    expect((await ann.api('/api/v1/accounts/verify_credentials')).body).toMatchObject({ followers_count: 0, following_count: 0 });
    await statsMatchFollows(roost);
  });

  it('counts a remote follow on both instances, and forgets a deleted remote follower', async () => {
    const local = await createTestUser(roost, 'sl');
    const remote = await createTestUser(other, 'sr');
    const localOnOther = await lookupRemoteAccount(other.services, other.federation, roost.at('/users/sl'));
    await remote.api(`/api/v1/accounts/${localOnOther!.id}/follow`, { method: 'POST' });
    await eventually(async () => (await counts(remote, localOnOther!.id))[0] === 1, 20_000, 'the Accept');
    expect(await counts(remote, remote.account.id)).toEqual([0, 1]);
    expect(await counts(local, local.account.id)).toEqual([1, 0]);
    const followers = await fetch(roost.at('/users/sl/followers'), { headers: { accept: 'application/activity+json' } });
    expect(((await followers.json()) as { totalItems: number }).totalItems).toBe(1);

    await remote.api(`/api/v1/accounts/${localOnOther!.id}/unfollow`, { method: 'POST' });
    await eventually(async () => (await counts(local, local.account.id))[0] === 0, 20_000, 'the Undo');
    expect(await counts(remote, remote.account.id)).toEqual([0, 0]);

    // Follow again, then the remote actor is deleted: the local account loses the follower.
    await remote.api(`/api/v1/accounts/${localOnOther!.id}/follow`, { method: 'POST' });
    await eventually(async () => (await counts(local, local.account.id))[0] === 1, 20_000, 'the second Follow');
    const { Delete } = await import('@fedify/vocab');
    const ctx = other.federation.createContext(new URL(other.url), undefined);
    await ctx.sendActivity(
      { identifier: 'sr' },
      { id: new URL(roost.at('/users/sl')), inboxId: new URL(roost.at('/users/sl/inbox')) },
      new Delete({ id: new URL(other.at('/users/sr#delete')), actor: ctx.getActorUri('sr'), object: ctx.getActorUri('sr') }),
    );
    await eventually(async () => (await counts(local, local.account.id))[0] === 0, 20_000, 'the Delete');
    await settled(roost, other);
    await statsMatchFollows(roost);
    await statsMatchFollows(other);
  });
});
