/**
 * Follow rules across two real instances, through the REST API of both: a locked remote target
 * keeps the request pending until its owner decides (Accept or Reject travels back); a requester
 * muted by the remote target stays pending although the target is unlocked; a target removing a
 * follower sends Reject and the follower's side sees the follow end.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, relationshipOf, type TestUser } from '../helpers/auth.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { AccountSchema, FollowSchema, type Account } from '../../src/db/entities/index.ts';

let a: TestRoost;
let b: TestRoost;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});


/** `user` of instance `on` as a remote account of instance `from`, resolved by handle. */
async function remote(from: TestRoost, on: TestRoost, user: TestUser): Promise<Account> {
  const account = await lookupRemoteAccount(from.services, from.federation, `${user.account.username}@${on.config.domain}`);
  expect(account?.uri).toBe(on.at(`/users/${user.account.username}`));
  return account!;
}

/** The follow of `follower` (of A) as B recorded it, once it arrived. */
async function arrivedOnB(follower: TestUser, target: TestUser) {
  return eventually(async () => {
    const em = b.services.db.em();
    const f = await em.findOne(AccountSchema, { uri: a.at(`/users/${follower.account.username}`) });
    return f ? em.findOne(FollowSchema, { accountId: f.id, targetAccountId: target.account.id }) : null;
  }, 20_000, 'the Follow to arrive on B');
}

describe('following across instances', () => {
  it('waits for a locked remote target to authorize, then follows; a rejected request ends', async () => {
    const ann = await createTestUser(a, 'ann');
    const zoe = await createTestUser(a, 'zoe');
    const lock = await createTestUser(b, 'lock');
    await lock.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } });
    const lockOnA = await remote(a, b, lock);
    expect(lockOnA.locked).toBe(true);

    const res = await ann.api(`/api/v1/accounts/${lockOnA.id}/follow`, { body: { notify: true } });
    expect(res.body).toMatchObject({ following: false, requested: true, notifying: true });
    expect((await arrivedOnB(ann, lock)).state).toBe('requested');
    const annOnB = (await b.services.db.em().findOneOrFail(AccountSchema, { uri: a.at('/users/ann') })).id;
    expect((await lock.api('/api/v1/follow_requests')).body.map((x: { acct: string }) => x.acct)).toEqual([`ann@${a.config.domain}`]);
    expect(await relationshipOf(lock, annOnB)).toMatchObject({ requested_by: true, followed_by: false });
    // Still pending on A until the Accept arrives.
    expect(await relationshipOf(ann, lockOnA.id)).toMatchObject({ following: false, requested: true });

    const ok = await lock.api(`/api/v1/follow_requests/${annOnB}/authorize`, { method: 'POST' });
    expect(ok.body).toMatchObject({ id: annOnB, followed_by: true, requested_by: false });
    await eventually(async () => (await relationshipOf(ann, lockOnA.id))?.following === true, 20_000, 'the Accept on A');
    expect(await relationshipOf(ann, lockOnA.id)).toMatchObject({ following: true, requested: false, notifying: true });

    // Another request, rejected: the Reject travels back and the request ends on A.
    await zoe.api(`/api/v1/accounts/${lockOnA.id}/follow`, { method: 'POST' });
    await arrivedOnB(zoe, lock);
    const zoeOnB = (await b.services.db.em().findOneOrFail(AccountSchema, { uri: a.at('/users/zoe') })).id;
    const no = await lock.api(`/api/v1/follow_requests/${zoeOnB}/reject`, { method: 'POST' });
    expect(no.body).toMatchObject({ followed_by: false, requested_by: false });
    await eventually(async () => (await relationshipOf(zoe, lockOnA.id))?.requested === false, 20_000, 'the Reject on A');
    expect(await relationshipOf(zoe, lockOnA.id)).toMatchObject({ following: false, requested: false });

    // The target removes its follower: Reject of an established follow ends it on A too.
    const removed = await lock.api(`/api/v1/accounts/${annOnB}/remove_from_followers`, { method: 'POST' });
    expect(removed.body.followed_by).toBe(false);
    await eventually(async () => (await relationshipOf(ann, lockOnA.id))?.following === false, 20_000, 'the Reject of the follow on A');
  });

  it('keeps a requester the remote target muted pending, although the target is unlocked', async () => {
    const mo = await createTestUser(a, 'mo');
    const open = await createTestUser(b, 'open');
    const openOnA = await remote(a, b, open);
    expect(openOnA.locked).toBe(false);
    const moOnB = await remote(b, a, mo);
    expect((await open.api(`/api/v1/accounts/${moOnB.id}/mute`, { method: 'POST' })).body.muting).toBe(true);

    const res = await mo.api(`/api/v1/accounts/${openOnA.id}/follow`, { method: 'POST' });
    expect(res.body).toMatchObject({ following: false, requested: true });
    expect((await arrivedOnB(mo, open)).state).toBe('requested');
    expect((await open.api('/api/v1/accounts/verify_credentials')).body.source.follow_requests_count).toBe(1);
    // No Accept comes back: the request stays pending on A as well.
    expect(await relationshipOf(mo, openOnA.id)).toMatchObject({ following: false, requested: true });

    // Unlocking again (locked → unlocked) still leaves it pending; only the normal approval accepts it.
    await open.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } });
    await open.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: false } });
    expect(await relationshipOf(open, moOnB.id)).toMatchObject({ requested_by: true, followed_by: false });
    await open.api(`/api/v1/follow_requests/${moOnB.id}/authorize`, { method: 'POST' });
    await eventually(async () => (await relationshipOf(mo, openOnA.id))?.following === true, 20_000, 'the Accept on A');
  });
});
