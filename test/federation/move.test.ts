/**
 * Mastodon's follower migration across two real instances: an account on B moves to another
 * account on B that lists it in `alsoKnownAs`; B sends Move to A, where the local followers
 * unfollow the origin and follow the target (options kept), mutes carry over, and the origin is
 * shown as moved. A Move to an account that does not name the origin changes nothing.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { Move, Update } from '@fedify/vocab';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, relationshipOf, type TestUser } from '../helpers/auth.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { localActor } from '../../src/federation/convert/to-as.ts';
import { AccountSchema, type Account } from '../../src/db/entities/index.ts';

let a: TestRoost;
let b: TestRoost;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});


/** B's `username` announces to A's shared inbox that it moved to B's `to`. */
async function sendMove(username: string, to: string) {
  const ctx = b.federation.createContext(new URL(b.url), undefined);
  await ctx.sendActivity(
    { identifier: username },
    { id: new URL(a.at('/users/nobody')), inboxId: new URL(a.at('/inbox')) },
    new Move({
      id: new URL(b.at(`/users/${username}#moves/1`)),
      actor: ctx.getActorUri(username),
      object: ctx.getActorUri(username),
      target: ctx.getActorUri(to),
    }),
  );
}

async function followFromA(user: TestUser, remote: Account, body: Record<string, unknown> = {}) {
  const res = await user.api(`/api/v1/accounts/${remote.id}/follow`, { body });
  expect(res.status).toBe(200);
  await eventually(async () => (await relationshipOf(user, remote.id))?.following === true, 20_000, 'the Accept from B');
}


describe('Move between two instances', () => {
  it('moves the local followers of the origin to a target that names it, keeping their options', async () => {
    const fan = await createTestUser(a, 'fan');
    const fan2 = await createTestUser(a, 'fantoo');
    const muter = await createTestUser(a, 'muter');
    const oldie = await createTestUser(b, 'oldie');
    const newbie = await createTestUser(b, 'newbie');

    // Resolved by handle: WebFinger (over http, these are loopback test instances) then the actor.
    const oldieOnA = (await lookupRemoteAccount(a.services, a.federation, `@oldie@${b.config.domain}`))!;
    expect(oldieOnA.uri).toBe(b.at('/users/oldie'));
    await followFromA(fan, oldieOnA, { reblogs: false, notify: true });
    await followFromA(fan2, oldieOnA);
    expect((await muter.api(`/api/v1/accounts/${oldieOnA.id}/mute`, { body: { notifications: false } })).body.muting).toBe(true);
    expect((await oldie.api('/api/v1/accounts/verify_credentials')).body.followers_count).toBe(2);

    // A knows the new account from before it named the old one: the Move must not be judged on
    // that cached copy (its aliases are fetched anew).
    expect((await lookupRemoteAccount(a.services, a.federation, b.at('/users/newbie')))!.alsoKnownAs).toEqual([]);

    // The new account names the old one (Mastodon's account aliases; there is no REST API for them).
    await b.services.db.sql.query(`update accounts set also_known_as = $1::jsonb where id = $2`, [
      JSON.stringify([b.at('/users/oldie')]),
      newbie.account.id,
    ]);
    const actor = (await (await fetch(b.at('/users/newbie'), { headers: { accept: 'application/activity+json' } })).json()) as any;
    expect(actor.alsoKnownAs).toBe(b.at('/users/oldie'));

    await sendMove('oldie', 'newbie');

    const newbieOnA = await eventually(
      async () => a.services.db.em().findOne(AccountSchema, { uri: b.at('/users/newbie') }),
      20_000,
      'the target to be fetched on A',
    );
    await eventually(async () => (await relationshipOf(fan, newbieOnA.id))?.following === true, 20_000, 'fan to follow the target');
    await eventually(async () => (await relationshipOf(fan2, newbieOnA.id))?.following === true, 20_000, 'fan2 to follow the target');
    expect(await relationshipOf(fan, newbieOnA.id)).toMatchObject({ following: true, requested: false, showing_reblogs: false, notifying: true });
    expect(await relationshipOf(fan, oldieOnA.id)).toMatchObject({ following: false, requested: false });
    expect(await relationshipOf(fan2, newbieOnA.id)).toMatchObject({ following: true, showing_reblogs: true, notifying: false });
    expect(await relationshipOf(muter, newbieOnA.id)).toMatchObject({ muting: true, muting_notifications: false, following: false });

    // The origin shows where it went.
    const shown = await fan.api(`/api/v1/accounts/${oldieOnA.id}`);
    expect(shown.body.moved.id).toBe(newbieOnA.id);
    expect(shown.body.moved.acct).toBe(`newbie@${b.config.domain}`);

    // On B, the follows arrived on the target and the Undo on the origin.
    await eventually(async () => (await newbie.api('/api/v1/accounts/verify_credentials')).body.followers_count === 2, 20_000, 'the Follows on B');
    await eventually(async () => (await oldie.api('/api/v1/accounts/verify_credentials')).body.followers_count === 0, 20_000, 'the Undos on B');
    const followers = await apiRequest(b, `/api/v1/accounts/${newbie.account.id}/followers`);
    expect(followers.body.map((x: { acct: string }) => x.acct).sort()).toEqual([`fan@${a.config.domain}`, `fantoo@${a.config.domain}`]);
  });

  it('takes the redirect from movedTo on an Update(Person), and drops it when movedTo goes', async () => {
    const wanderer = await createTestUser(b, 'wanderer');
    await createTestUser(b, 'settler');
    const wandererOnA = (await lookupRemoteAccount(a.services, a.federation, b.at('/users/wanderer')))!;
    const settlerOnA = (await lookupRemoteAccount(a.services, a.federation, b.at('/users/settler')))!;
    const ctx = b.federation.createContext(new URL(b.url), undefined);
    const sendUpdate = async (n: number, movedTo: string | null) =>
      ctx.sendActivity(
        { identifier: 'wanderer' },
        { id: new URL(a.at('/users/nobody')), inboxId: new URL(a.at('/inbox')) },
        new Update({
          id: new URL(b.at(`/users/wanderer#updates/${n}`)),
          actor: ctx.getActorUri('wanderer'),
          object: await localActor(ctx, wanderer.account, movedTo),
        }),
      );
    const onA = () => a.services.db.em().findOneOrFail(AccountSchema, { id: wandererOnA.id });
    const migration = (row: Account) => (row.machine as { value: { existing: { migration: string } } }).value.existing.migration;

    await sendUpdate(1, b.at('/users/settler'));
    const moved = await eventually(async () => ((await onA()).movedToAccountId ? onA() : null), 20_000, 'the redirect on A');
    expect([moved.movedToAccountId, migration(moved)]).toEqual([settlerOnA.id, 'moved']);

    await sendUpdate(2, null);
    const back = await eventually(async () => ((await onA()).movedToAccountId === null ? onA() : null), 20_000, 'the redirect to go');
    expect(migration(back)).toBe('unmoved');
  });

  it('ignores a Move to an account that does not name the origin, and one sent for someone else', async () => {
    const fan = await createTestUser(a, 'loyal');
    await createTestUser(b, 'stayer');
    await createTestUser(b, 'stranger');
    const stayerOnA = (await lookupRemoteAccount(a.services, a.federation, b.at('/users/stayer')))!;
    await followFromA(fan, stayerOnA);

    await sendMove('stayer', 'stranger');
    await eventually(async () => a.services.db.em().findOne(AccountSchema, { uri: b.at('/users/stranger') }), 20_000, 'the target to be fetched');
    await settled(a, b);
    expect(await relationshipOf(fan, stayerOnA.id)).toMatchObject({ following: true });
    expect((await a.services.db.em().findOneOrFail(AccountSchema, { id: stayerOnA.id })).movedToAccountId).toBeNull();
    expect((await fan.api(`/api/v1/accounts/${stayerOnA.id}`)).body.moved).toBeUndefined();

    // A Move whose object is another account than its actor is not the actor's to send.
    await b.services.db.sql.query(`update accounts set also_known_as = $1::jsonb where username = 'stranger' and domain is null`, [
      JSON.stringify([b.at('/users/stayer')]),
    ]);
    const ctx = b.federation.createContext(new URL(b.url), undefined);
    await ctx.sendActivity(
      { identifier: 'stranger' },
      { id: new URL(a.at('/users/nobody')), inboxId: new URL(a.at('/inbox')) },
      new Move({ id: new URL(b.at('/users/stranger#moves/forged')), actor: ctx.getActorUri('stranger'), object: ctx.getActorUri('stayer'), target: ctx.getActorUri('stranger') }),
    );
    await settled(a, b);
    expect(await relationshipOf(fan, stayerOnA.id)).toMatchObject({ following: true });
    expect((await a.services.db.em().findOneOrFail(AccountSchema, { id: stayerOnA.id })).movedToAccountId).toBeNull();
  });
});
