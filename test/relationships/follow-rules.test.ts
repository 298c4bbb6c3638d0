/**
 * The mission's follow rules through the REST API of real instances: a follow from a silenced
 * account, or from one muted by the target, stays a pending request even when the target is
 * unlocked; when the target unlocks, pending requests are accepted except those. Locally and
 * across two instances.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { setAccountSilenced } from '../../src/services/relationships.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { AccountSchema, FollowSchema } from '../../src/db/entities/index.ts';

let roost: TestRoost;

beforeAll(async () => {
  roost = await startTestRoost();
});
afterAll(async () => roost?.close());

const rel = async (viewer: TestUser, target: TestUser) => (await viewer.api(`/api/v1/accounts/relationships?id[]=${target.account.id}`)).body[0];

describe('following on one instance', () => {
  it('follows an unlocked account at once and reports every Relationship field', async () => {
    const a = await createTestUser(roost, 'ann');
    const b = await createTestUser(roost, 'ben');
    const res = await a.api(`/api/v1/accounts/${b.account.id}/follow`, { body: { reblogs: false, notify: true, languages: ['en'] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: b.account.id,
      following: true,
      showing_reblogs: false,
      notifying: true,
      languages: ['en'],
      followed_by: false,
      blocking: false,
      blocked_by: false,
      muting: false,
      muting_notifications: false,
      requested: false,
      requested_by: false,
      domain_blocking: false,
      endorsed: false,
      note: '',
    });
    expect((await rel(b, a)).followed_by).toBe(true);
    const un = await a.api(`/api/v1/accounts/${b.account.id}/unfollow`, { method: 'POST' });
    expect(un.body.following).toBe(false);
    expect((await rel(b, a)).followed_by).toBe(false);
  });

  it('makes a request to a locked account, counted in its credentials and authorized from its list', async () => {
    const a = await createTestUser(roost, 'cat');
    const b = await createTestUser(roost, 'dan');
    expect((await b.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } })).body.locked).toBe(true);
    const res = await a.api(`/api/v1/accounts/${b.account.id}/follow`, { method: 'POST' });
    expect(res.body).toMatchObject({ following: false, requested: true });
    expect((await rel(b, a)).requested_by).toBe(true);
    const creds = await b.api('/api/v1/accounts/verify_credentials');
    expect(creds.body.locked).toBe(true);
    expect(creds.body.source.follow_requests_count).toBe(1);
    const list = await b.api('/api/v1/follow_requests');
    expect(list.body.map((x: { id: string }) => x.id)).toEqual([a.account.id]);
    const ok = await b.api(`/api/v1/follow_requests/${a.account.id}/authorize`, { method: 'POST' });
    expect(ok.body).toMatchObject({ id: a.account.id, followed_by: true, requested_by: false });
    expect((await rel(a, b)).following).toBe(true);
    expect((await b.api('/api/v1/accounts/verify_credentials')).body.source.follow_requests_count).toBe(0);
  });

  it('keeps a silenced requester pending even when the target is unlocked', async () => {
    const s = await createTestUser(roost, 'sil');
    const t = await createTestUser(roost, 'tom');
    await setAccountSilenced(roost.services, s.account.id, true);
    const res = await s.api(`/api/v1/accounts/${t.account.id}/follow`, { method: 'POST' });
    expect(res.body).toMatchObject({ following: false, requested: true });
    expect((await t.api('/api/v1/accounts/verify_credentials')).body.source.follow_requests_count).toBe(1);
  });

  it('keeps a requester the target muted pending even when the target is unlocked', async () => {
    const m = await createTestUser(roost, 'mia');
    const t = await createTestUser(roost, 'tia');
    const mute = await t.api(`/api/v1/accounts/${m.account.id}/mute`, { body: { notifications: false } });
    expect(mute.body).toMatchObject({ muting: true, muting_notifications: false });
    const res = await m.api(`/api/v1/accounts/${t.account.id}/follow`, { method: 'POST' });
    expect(res.body).toMatchObject({ following: false, requested: true });
    // The requester cannot tell it is muted: the answer is an ordinary pending request.
    expect(res.body.muting).toBe(false);
  });

  it('accepts pending requests on unlock, except from silenced or muted requesters', async () => {
    const target = await createTestUser(roost, 'lou');
    const plain = await createTestUser(roost, 'pat');
    const silenced = await createTestUser(roost, 'sam');
    const muted = await createTestUser(roost, 'max');
    await target.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } });
    await setAccountSilenced(roost.services, silenced.account.id, true);
    await target.api(`/api/v1/accounts/${muted.account.id}/mute`, { method: 'POST' });
    for (const u of [plain, silenced, muted]) {
      expect((await u.api(`/api/v1/accounts/${target.account.id}/follow`, { method: 'POST' })).body.requested).toBe(true);
    }
    expect((await target.api('/api/v1/accounts/verify_credentials')).body.source.follow_requests_count).toBe(3);

    const unlocked = await target.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: false } });
    expect(unlocked.body.locked).toBe(false);
    expect(unlocked.body.source.follow_requests_count).toBe(2);
    expect(await rel(plain, target)).toMatchObject({ following: true, requested: false });
    expect(await rel(silenced, target)).toMatchObject({ following: false, requested: true });
    expect(await rel(muted, target)).toMatchObject({ following: false, requested: true });
    // Those stay for the normal approval.
    await target.api(`/api/v1/follow_requests/${muted.account.id}/authorize`, { method: 'POST' });
    expect((await rel(muted, target)).following).toBe(true);
  });

  it('answers bad input with Mastodon errors', async () => {
    const a = await createTestUser(roost, 'eve');
    const b = await createTestUser(roost, 'fay');
    const readOnly = await createTestUser(roost, 'gus', { scopes: ['read'] });
    expect((await a.api(`/api/v1/accounts/${a.account.id}/follow`, { method: 'POST' })).status).toBe(403);
    expect((await a.api('/api/v1/accounts/99999999/follow', { method: 'POST' })).body).toEqual({ error: 'Record not found' });
    const forbidden = await readOnly.api(`/api/v1/accounts/${b.account.id}/follow`, { method: 'POST' });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ error: 'This action is outside the authorized scopes' });
    const badDuration = await a.api(`/api/v1/accounts/${b.account.id}/mute`, { body: { duration: 'soon' } });
    expect(badDuration.status).toBe(422);
    expect(badDuration.body.details.duration[0].error).toBe('ERR_INVALID');
    expect((await rel(a, b)).muting).toBe(false);
    const tooLong = await a.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { display_name: 'x'.repeat(31) } });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body).toEqual({
      error: 'Validation failed: Display name is too long (maximum is 30 characters)',
      details: { display_name: [{ error: 'ERR_TOO_LONG', description: 'is too long (maximum is 30 characters)' }] },
    });
  });

  it('ends following both ways on a block, refuses new follows, and lists the block', async () => {
    const a = await createTestUser(roost, 'jon');
    const b = await createTestUser(roost, 'kim');
    await a.api(`/api/v1/accounts/${b.account.id}/follow`, { method: 'POST' });
    await b.api(`/api/v1/accounts/${a.account.id}/follow`, { method: 'POST' });
    expect(await rel(a, b)).toMatchObject({ following: true, followed_by: true });
    const blocked = await a.api(`/api/v1/accounts/${b.account.id}/block`, { method: 'POST' });
    expect(blocked.body).toMatchObject({ blocking: true, following: false, followed_by: false });
    expect(await rel(b, a)).toMatchObject({ blocked_by: true, following: false, followed_by: false });
    expect((await b.api(`/api/v1/accounts/${a.account.id}/follow`, { method: 'POST' })).status).toBe(403);
    expect((await a.api('/api/v1/blocks')).body.map((x: { id: string }) => x.id)).toEqual([b.account.id]);
    const unblocked = await a.api(`/api/v1/accounts/${b.account.id}/unblock`, { method: 'POST' });
    expect(unblocked.body).toMatchObject({ blocking: false, following: false });
    expect((await b.api(`/api/v1/accounts/${a.account.id}/follow`, { method: 'POST' })).body.following).toBe(true);
  });

  it('pages followers and following with Link headers', async () => {
    const star = await createTestUser(roost, 'star');
    const fans: TestUser[] = [];
    for (const n of ['f1', 'f2', 'f3', 'f4', 'f5']) {
      const u = await createTestUser(roost, n);
      await u.api(`/api/v1/accounts/${star.account.id}/follow`, { method: 'POST' });
      fans.push(u);
    }
    const ids = (body: { id: string }[]) => body.map((a) => a.id);
    const first = await apiRequest(roost, `/api/v1/accounts/${star.account.id}/followers?limit=2`);
    expect(ids(first.body)).toEqual([fans[4].account.id, fans[3].account.id]);
    const link = first.headers.get('link')!;
    const next = /<([^>]+)>; rel="next"/.exec(link)![1];
    expect(link).toMatch(/<[^>]+since_id=\d+[^>]*>; rel="prev"/);
    const second = await fetch(next);
    expect(ids((await second.json()) as { id: string }[])).toEqual([fans[2].account.id, fans[1].account.id]);
    const all = await apiRequest(roost, `/api/v1/accounts/${star.account.id}/followers?limit=80`);
    expect(all.body).toHaveLength(5);
    expect(all.headers.get('link')).not.toContain('rel="next"');
    const following = await apiRequest(roost, `/api/v1/accounts/${fans[0].account.id}/following`);
    expect(ids(following.body)).toEqual([star.account.id]);
    expect(following.body[0].followers_count).toBe(5);
    expect((await apiRequest(roost, `/api/v1/accounts/${star.account.id}/statuses`)).body).toEqual([]);
    expect((await apiRequest(roost, '/api/v1/accounts/1/followers')).status).toBe(404);
  });

  it('keeps notes, endorsements, mutes and domain blocks, each in the Relationship', async () => {
    const me = await createTestUser(roost, 'nia');
    const other = await createTestUser(roost, 'oli');
    const note = await me.api(`/api/v1/accounts/${other.account.id}/note`, { body: { comment: 'met at the conf' } });
    expect(note.body.note).toBe('met at the conf');
    const notFollowing = await me.api(`/api/v1/accounts/${other.account.id}/pin`, { method: 'POST' });
    expect(notFollowing.status).toBe(422);
    expect(notFollowing.body.error).toBe('Validation failed: You must be already following the person you want to endorse');
    await me.api(`/api/v1/accounts/${other.account.id}/follow`, { method: 'POST' });
    expect((await me.api(`/api/v1/accounts/${other.account.id}/pin`, { method: 'POST' })).body.endorsed).toBe(true);
    expect((await me.api('/api/v1/endorsements')).body.map((a: { id: string }) => a.id)).toEqual([other.account.id]);
    expect((await me.api(`/api/v1/accounts/${other.account.id}/unpin`, { method: 'POST' })).body.endorsed).toBe(false);

    // The followed account removes its follower.
    const removed = await other.api(`/api/v1/accounts/${me.account.id}/remove_from_followers`, { method: 'POST' });
    expect(removed.body.followed_by).toBe(false);
    expect((await rel(me, other)).following).toBe(false);

    await me.api(`/api/v1/accounts/${other.account.id}/mute`, { body: { duration: 3600 } });
    const mutes = await me.api('/api/v1/mutes');
    expect(mutes.body.map((a: { id: string }) => a.id)).toEqual([other.account.id]);
    expect(Date.parse(mutes.body[0].mute_expires_at) - Date.now()).toBeGreaterThan(3500_000);

    expect((await me.api('/api/v1/domain_blocks', { body: { domain: 'Spam.Example' } })).status).toBe(200);
    expect((await me.api('/api/v1/domain_blocks')).body).toEqual(['spam.example']);
    const bad = await me.api('/api/v1/domain_blocks', { body: { domain: 'not a domain' } });
    expect(bad.status).toBe(422);
    expect(bad.body.details.domain[0].error).toBe('ERR_INVALID');
    expect((await me.api('/api/v1/domain_blocks', { method: 'DELETE', body: { domain: 'spam.example' } })).status).toBe(200);
    expect((await me.api('/api/v1/domain_blocks')).body).toEqual([]);
  });

  it('answers familiar followers and suggests friends of friends', async () => {
    const me = await createTestUser(roost, 'q1');
    const friend = await createTestUser(roost, 'q2');
    const popular = await createTestUser(roost, 'q3');
    const muted = await createTestUser(roost, 'q4');
    // Only accounts that opted into discovery are suggested (as on Mastodon).
    await popular.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { discoverable: true } });
    await me.api(`/api/v1/accounts/${friend.account.id}/follow`, { method: 'POST' });
    await friend.api(`/api/v1/accounts/${popular.account.id}/follow`, { method: 'POST' });
    await friend.api(`/api/v1/accounts/${muted.account.id}/follow`, { method: 'POST' });
    await me.api(`/api/v1/accounts/${muted.account.id}/mute`, { method: 'POST' });
    const familiar = await me.api(`/api/v1/accounts/familiar_followers?id[]=${popular.account.id}&id[]=${friend.account.id}`);
    expect(familiar.body.map((f: { id: string; accounts: { id: string }[] }) => [f.id, f.accounts.map((a) => a.id)])).toEqual([
      [popular.account.id, [friend.account.id]],
      [friend.account.id, []],
    ]);
    const suggestions = await me.api('/api/v2/suggestions?limit=80');
    const ids = suggestions.body.map((s: { account: { id: string } }) => s.account.id);
    expect(suggestions.body[0]).toMatchObject({ source: 'past_interactions', sources: ['friends_of_friends'], account: { id: popular.account.id } });
    expect(ids).not.toContain(friend.account.id); // already followed
    expect(ids).not.toContain(muted.account.id);
    expect(ids).not.toContain(me.account.id);
    await me.api(`/api/v1/suggestions/${popular.account.id}`, { method: 'DELETE' });
    expect((await me.api('/api/v1/suggestions?limit=80')).body.map((a: { id: string }) => a.id)).not.toContain(popular.account.id);
  });

  it('lets a timed mute lapse by itself', async () => {
    const a = await createTestUser(roost, 'hal');
    const b = await createTestUser(roost, 'ivy');
    await a.api(`/api/v1/accounts/${b.account.id}/mute`, { body: { duration: 1 } });
    expect((await rel(a, b)).muting).toBe(true);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await rel(a, b)).muting).toBe(false);
  });
});

describe('across two instances', () => {
  let other: TestRoost;
  beforeAll(async () => {
    other = await startTestRoost();
  });
  afterAll(async () => other?.close());

  it('keeps a remote silenced requester pending on an unlocked target', async () => {
    const local = await createTestUser(roost, 'zed');
    const remote = await createTestUser(other, 'yan');
    // The target's moderators silenced the remote account.
    const remoteOnLocal = await lookupRemoteAccount(roost.services, roost.federation, other.at('/users/yan'));
    await setAccountSilenced(roost.services, remoteOnLocal!.id, true);
    const localOnOther = await lookupRemoteAccount(other.services, other.federation, roost.at('/users/zed'));
    const res = await remote.api(`/api/v1/accounts/${localOnOther!.id}/follow`, { method: 'POST' });
    expect(res.body).toMatchObject({ following: false, requested: true });
    const pending = await eventually(async () => {
      return roost.services.db.em().findOne(FollowSchema, { accountId: remoteOnLocal!.id, targetAccountId: local.account.id });
    }, 20_000, 'the Follow to arrive');
    expect(pending.state).toBe('requested');
    expect((await local.api('/api/v1/accounts/verify_credentials')).body.source.follow_requests_count).toBe(1);
    // Approving sends the Accept back; the remote side then follows.
    await local.api(`/api/v1/follow_requests/${remoteOnLocal!.id}/authorize`, { method: 'POST' });
    await eventually(async () => (await remote.api(`/api/v1/accounts/relationships?id[]=${localOnOther!.id}`)).body[0]?.following === true, 20_000, 'the Accept');
    // Unfollowing sends Undo: the local side sees the follower go.
    await remote.api(`/api/v1/accounts/${localOnOther!.id}/unfollow`, { method: 'POST' });
    await eventually(async () => {
      const f = await roost.services.db.em().findOne(FollowSchema, { accountId: remoteOnLocal!.id, targetAccountId: local.account.id });
      return f?.state === 'undone';
    }, 20_000, 'the Undo');
    void AccountSchema;
  });

  it('federates a block: the remote side sees blocked_by and the follow ends', async () => {
    const local = await createTestUser(roost, 'blk');
    const remote = await createTestUser(other, 'rem');
    const localOnOther = await lookupRemoteAccount(other.services, other.federation, roost.at('/users/blk'));
    await remote.api(`/api/v1/accounts/${localOnOther!.id}/follow`, { method: 'POST' });
    const remoteOnLocal = await eventually(
      async () => roost.services.db.em().findOne(AccountSchema, { uri: other.at('/users/rem') }),
      20_000,
      'the remote follower to arrive',
    );
    await eventually(async () => (await remote.api(`/api/v1/accounts/relationships?id[]=${localOnOther!.id}`)).body[0]?.following === true, 20_000, 'the Accept');
    const res = await local.api(`/api/v1/accounts/${remoteOnLocal.id}/block`, { method: 'POST' });
    expect(res.body).toMatchObject({ blocking: true, followed_by: false });
    await eventually(async () => {
      const r = (await remote.api(`/api/v1/accounts/relationships?id[]=${localOnOther!.id}`)).body[0];
      return r?.blocked_by === true && r.following === false;
    }, 20_000, 'the Block to arrive');
    await local.api(`/api/v1/accounts/${remoteOnLocal.id}/unblock`, { method: 'POST' });
    await eventually(async () => (await remote.api(`/api/v1/accounts/relationships?id[]=${localOnOther!.id}`)).body[0]?.blocked_by === false, 20_000, 'the Undo(Block)');
  });

  it('refreshes a remote profile on Update(Person) and forgets a deleted actor', async () => {
    const local = await createTestUser(roost, 'upd');
    const remote = await createTestUser(other, 'watcher');
    const localOnOther = await lookupRemoteAccount(other.services, other.federation, roost.at('/users/upd'));
    await remote.api(`/api/v1/accounts/${localOnOther!.id}/follow`, { method: 'POST' });
    await eventually(async () => (await remote.api(`/api/v1/accounts/relationships?id[]=${localOnOther!.id}`)).body[0]?.following === true, 20_000, 'the Accept');
    await local.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { display_name: 'Updated Name', note: 'new bio' } });
    await eventually(async () => {
      const a = await other.services.db.em().findOne(AccountSchema, { id: localOnOther!.id });
      // The actor's summary is the HTML the REST API renders for the bio (issue 8, item 18).
      return a?.displayName === 'Updated Name' && a.note === '<p>new bio</p>';
    }, 20_000, 'the Update(Person)');

    // A Delete(Person) from the other side removes that account and its follows here.
    const remoteOnLocal = await roost.services.db.em().findOneOrFail(AccountSchema, { uri: other.at('/users/watcher') });
    const { Delete } = await import('@fedify/vocab');
    const ctx = other.federation.createContext(new URL(other.url), undefined);
    await ctx.sendActivity(
      { identifier: 'watcher' },
      { id: new URL(roost.at('/users/upd')), inboxId: new URL(roost.at('/users/upd/inbox')) },
      new Delete({ id: new URL(other.at('/users/watcher#delete')), actor: ctx.getActorUri('watcher'), object: ctx.getActorUri('watcher') }),
    );
    await eventually(async () => !(await roost.services.db.em().findOne(AccountSchema, { id: remoteOnLocal.id })), 20_000, 'the Delete');
    expect((await local.api('/api/v1/accounts/verify_credentials')).body.followers_count).toBe(0);
  });

  it('resolves a remote account by handle through search with resolve=true', async () => {
    const me = await createTestUser(roost, 'finder');
    await createTestUser(other, 'findme');
    const handle = `findme@${other.config.domain}`;
    const before = await me.api(`/api/v1/accounts/search?q=${encodeURIComponent(handle)}`);
    expect(before.body).toEqual([]);
    const res = await me.api(`/api/v1/accounts/search?q=${encodeURIComponent('@' + handle)}&resolve=true`);
    expect(res.body.map((a: { acct: string }) => a.acct)).toEqual([handle]);
    expect(res.body[0].url).toBe(other.at('/@findme'));
    expect((await apiRequest(roost, `/api/v1/accounts/lookup?acct=${encodeURIComponent(handle)}`)).body.id).toBe(res.body[0].id);
  });
});
