/**
 * A local account moving away, end to end across two real instances: the operator commands
 * (`roost accounts alias` on the target's server, `roost accounts migrate` on the origin's, run as
 * the control socket runs them), the account actor's redirect, the local followers moved at once,
 * Update(Person) with movedTo and the Move delivered, signed, to the followers' servers, where
 * their followers move too (the incoming half is services/moves.ts as well).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, relationshipOf, type TestUser } from '../helpers/auth.ts';
import { runCommand, type CommandArgs } from '../../src/control/commands.ts';
import { AccountSchema, type Account } from '../../src/db/entities/index.ts';
import type { RoostError } from '../../src/lib/errors.ts';

let a: TestRoost;
let b: TestRoost;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

const command = (r: TestRoost, name: string, args: CommandArgs) => runCommand(r.services, name, args, { federation: r.federation });
const failure = (r: TestRoost, name: string, args: CommandArgs) =>
  command(r, name, args).then(
    () => null,
    (e: RoostError) => [e.status, e.message],
  );
const row = (r: TestRoost, uri: string) => r.services.db.em().findOne(AccountSchema, { uri }, { refresh: true });


describe('roost accounts migrate', () => {
  it('moves a local account to a remote one that names it: followers here and there follow the target', async () => {
    const oldie = await createTestUser(a, 'oldie');
    const localFan = await createTestUser(a, 'localfan');
    const newbie = await createTestUser(b, 'newbie');
    const remoteFan = await createTestUser(b, 'remotefan');

    // A local follower with options, and a follower on B.
    expect((await localFan.api(`/api/v1/accounts/${oldie.account.id}/follow`, { body: { reblogs: false, notify: true } })).body.following).toBe(true);
    const oldieOnB = (await remoteFan.api(`/api/v1/accounts/search?q=oldie@${a.config.domain}&resolve=true`)).body[0];
    expect(oldieOnB.acct).toBe(`oldie@${a.config.domain}`);
    await remoteFan.api(`/api/v1/accounts/${oldieOnB.id}/follow`, { method: 'POST' });
    await eventually(async () => (await relationshipOf(remoteFan, oldieOnB.id))?.following === true, 20_000, 'the Accept from A');
    expect((await oldie.api('/api/v1/accounts/verify_credentials')).body.followers_count).toBe(2);

    // Without the alias on the target, nothing moves.
    expect(await failure(a, 'accounts.migrate', { username: 'oldie', target: `newbie@${b.config.domain}` })).toEqual([
      422,
      'The target account does not name this account among its aliases (alsoKnownAs): add the alias on the target first',
    ]);
    expect((await row(a, a.at('/users/oldie')))!.movedToAccountId).toBeNull();

    // B's operator names the old account on the new one; the actor shows it.
    expect(await command(b, 'accounts.alias', { username: 'newbie', add: [`@oldie@${a.config.domain}`] })).toEqual({
      username: 'newbie',
      aliases: [a.at('/users/oldie')],
    });
    const newbieActor = (await (await fetch(b.at('/users/newbie'), { headers: { accept: 'application/activity+json' } })).json()) as Record<string, unknown>;
    expect(newbieActor.alsoKnownAs).toBe(a.at('/users/oldie'));

    const result = await command(a, 'accounts.migrate', { username: 'oldie', target: `newbie@${b.config.domain}` });
    expect(result).toEqual({ username: 'oldie', target: b.at('/users/newbie'), replayed: false, migrated: 1, failed: 0 });

    // On A: the redirect is the account actor's, the API shows it, the actor carries movedTo.
    const origin = (await row(a, a.at('/users/oldie')))!;
    const newbieOnA = (await row(a, b.at('/users/newbie')))!;
    expect(origin.movedToAccountId).toBe(newbieOnA.id);
    expect((origin.machine as { value: { existing: { migration: string } } }).value.existing.migration).toBe('moved');
    expect((await localFan.api(`/api/v1/accounts/${oldie.account.id}`)).body.moved).toMatchObject({ id: newbieOnA.id, acct: `newbie@${b.config.domain}` });
    const oldieActor = (await (await fetch(a.at('/users/oldie'), { headers: { accept: 'application/activity+json' } })).json()) as Record<string, unknown>;
    expect(oldieActor.movedTo).toBe(b.at('/users/newbie'));

    // The local follower now follows the target (options kept) and no longer the origin.
    await eventually(async () => (await relationshipOf(localFan, newbieOnA.id))?.following === true, 20_000, 'the Accept for the local follower');
    expect(await relationshipOf(localFan, newbieOnA.id)).toMatchObject({ following: true, showing_reblogs: false, notifying: true });
    expect(await relationshipOf(localFan, oldie.account.id)).toMatchObject({ following: false, requested: false });

    // On B: the Move arrived; the follower there moved, and A got its Undo.
    await eventually(async () => (await relationshipOf(remoteFan, newbie.account.id))?.following === true, 20_000, 'the follower on B to move');
    expect(await relationshipOf(remoteFan, oldieOnB.id)).toMatchObject({ following: false });
    expect((await remoteFan.api(`/api/v1/accounts/${oldieOnB.id}`)).body.moved).toMatchObject({ id: newbie.account.id, acct: 'newbie' });
    await eventually(async () => (await oldie.api('/api/v1/accounts/verify_credentials')).body.followers_count === 0, 20_000, 'the Undo on A');
    const followers = await apiRequest(b, `/api/v1/accounts/${newbie.account.id}/followers`);
    expect(followers.body.map((x: { acct: string }) => x.acct).sort()).toEqual([`localfan@${a.config.domain}`, 'remotefan']);
    await settled(a, b);

    // Once is enough; a replay sends the Move again and moves nobody twice.
    expect(await failure(a, 'accounts.migrate', { username: 'oldie', target: `newbie@${b.config.domain}` })).toEqual([
      422,
      `oldie already moved to ${b.at('/users/newbie')}; replay the Move to send it again`,
    ]);
    expect(await command(a, 'accounts.migrate', { username: 'oldie', replay: true })).toEqual({
      username: 'oldie',
      target: b.at('/users/newbie'),
      replayed: true,
      migrated: 0,
      failed: 0,
    });
    await settled(a, b);
    expect((await newbie.api('/api/v1/accounts/verify_credentials')).body.followers_count).toBe(2);
    expect((await row(b, a.at('/users/oldie')))!.movedToAccountId).toBe(newbie.account.id);
  });

  it('moves between two local accounts, and says what is wrong', async () => {
    const from = await createTestUser(a, 'fromhere');
    const to = await createTestUser(a, 'tohere');
    const elsewhere = await createTestUser(a, 'elsewhere');
    const fan = await createTestUser(a, 'fanhere');
    await fan.api(`/api/v1/accounts/${from.account.id}/follow`, { method: 'POST' });
    await fan.api(`/api/v1/accounts/${from.account.id}/mute`, { body: { notifications: false } });

    expect(await failure(a, 'accounts.migrate', { username: 'nobody', target: 'tohere' })).toEqual([404, 'No local account nobody']);
    expect(await failure(a, 'accounts.migrate', { username: 'fromhere', target: 'ghost' })).toEqual([404, 'No account found for ghost']);
    expect(await failure(a, 'accounts.migrate', { username: 'fromhere' })).toEqual([422, 'A target account is required']);
    expect(await failure(a, 'accounts.migrate', { username: 'fromhere', replay: true })).toEqual([422, 'fromhere has not moved: nothing to replay']);
    expect(await failure(a, 'accounts.alias', { username: 'tohere', add: ['tohere'] })).toEqual([422, 'An account cannot be its own alias']);
    expect(await failure(a, 'accounts.alias', { username: 'tohere', remove: ['fromhere'] })).toEqual([422, 'fromhere is not an alias of tohere']);
    expect(await failure(a, 'accounts.alias', { username: 'tohere' })).toEqual([422, 'Nothing to change: give --add or --remove']);

    // An alias given as the actor URL; the target's own server is this one.
    await command(a, 'accounts.alias', { username: 'tohere', add: [a.at('/users/fromhere')] });
    await command(a, 'accounts.alias', { username: 'elsewhere', add: ['fromhere'] });
    expect(await command(a, 'accounts.migrate', { username: 'fromhere', target: `@tohere@${a.config.domain}` })).toMatchObject({ migrated: 1, failed: 0 });
    expect(await relationshipOf(fan, to.account.id)).toMatchObject({ following: true, muting: true, muting_notifications: false });
    expect(await relationshipOf(fan, from.account.id)).toMatchObject({ following: false });
    expect((await fan.api(`/api/v1/accounts/${from.account.id}`)).body.moved).toMatchObject({ id: to.account.id, acct: 'tohere' });

    // Moving again elsewhere needs --force; then the redirect follows.
    expect(await failure(a, 'accounts.migrate', { username: 'fromhere', target: 'elsewhere' })).toEqual([
      422,
      'fromhere already redirects to another account; force the migration to move again',
    ]);
    expect(await command(a, 'accounts.migrate', { username: 'fromhere', target: 'elsewhere', force: true })).toMatchObject({ migrated: 0 });
    expect((await fan.api(`/api/v1/accounts/${from.account.id}`)).body.moved).toMatchObject({ id: elsewhere.account.id });
    expect(await failure(a, 'accounts.migrate', { username: 'fromhere', target: 'tohere', replay: true })).toEqual([
      422,
      `fromhere moved to ${a.at('/users/elsewhere')}, not to tohere`,
    ]);

    // Removing an alias by handle; the account is then no longer a valid origin.
    expect(await command(a, 'accounts.alias', { username: 'tohere', remove: ['fromhere'] })).toEqual({ username: 'tohere', aliases: [] });
    const stale: Account = (await row(a, a.at('/users/tohere')))!;
    expect(stale.alsoKnownAs).toEqual([]);
  });
});
