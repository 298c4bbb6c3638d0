/**
 * Two real Roost instances in one process, each with its own database and HTTP server on its own
 * port: WebFinger, actor documents, and a Follow that travels signed from one to the other and is
 * answered with an Accept.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { followAccount } from '../../src/services/follows.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { FollowSchema, AccountSchema } from '../../src/db/entities/index.ts';

let a: TestRoost;
let b: TestRoost;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost({ instance: { title: 'Roost A' } }), startTestRoost({ instance: { title: 'Roost B' } })]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

describe('federation between two instances', () => {
  it('serves WebFinger and the actor document of a local account', async () => {
    await createLocalAccount(a.services, { username: 'wanda', email: 'wanda@a.test' });
    const wf = await fetch(a.at(`/.well-known/webfinger?resource=acct:wanda@${a.config.domain}`));
    expect(wf.status).toBe(200);
    const jrd = (await wf.json()) as any;
    expect(jrd.subject).toBe(`acct:wanda@${a.config.domain}`);
    const self = jrd.links.find((l: { rel: string }) => l.rel === 'self');
    expect(self).toEqual({ rel: 'self', href: a.at('/users/wanda'), type: 'application/activity+json' });

    const res = await fetch(self.href, { headers: { accept: 'application/activity+json' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/activity\+json/);
    const actor = (await res.json()) as any;
    expect(actor.type).toBe('Person');
    expect(actor.id).toBe(a.at('/users/wanda'));
    expect(actor.preferredUsername).toBe('wanda');
    expect(actor.inbox).toBe(a.at('/users/wanda/inbox'));
    expect(actor.endpoints.sharedInbox).toBe(a.at('/inbox'));
    expect(actor.publicKey.id).toMatch(new RegExp(`^${a.at('/users/wanda')}#`));
    expect(actor.publicKey.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    // Both key pairs are published as Multikeys (RSA and Ed25519).
    expect(actor.assertionMethod).toHaveLength(2);

    const missing = await fetch(a.at('/.well-known/webfinger?resource=acct:nobody@' + a.config.domain));
    expect(missing.status).toBe(404);
  });

  it('delivers a signed Follow and gets an Accept back', async () => {
    const { account: alice } = await createLocalAccount(a.services, { username: 'alice', email: 'alice@a.test' });
    const { account: bob } = await createLocalAccount(b.services, { username: 'bob', email: 'bob@b.test' });

    const bobOnA = await lookupRemoteAccount(a.services, a.federation, b.at('/users/bob'));
    expect(bobOnA).not.toBeNull();
    expect(bobOnA!.domain).toBe(b.config.domain);
    expect(bobOnA!.username).toBe('bob');
    expect(bobOnA!.inboxUrl).toBe(b.at('/users/bob/inbox'));

    const follow = await followAccount(a.services, alice.id, bobOnA!.id);
    expect(follow.state).toBe('requested');

    // B verified the signature, recorded remote alice as a follower of bob, and accepted.
    const onB = await eventually(async () => {
      const em = b.services.db.em();
      const remoteAlice = await em.findOne(AccountSchema, { uri: a.at('/users/alice') });
      if (!remoteAlice) return null;
      return em.findOne(FollowSchema, { accountId: remoteAlice.id, targetAccountId: bob.id });
    }, 20_000, 'the Follow to arrive on B');
    expect(onB.state).toBe('accepted');
    expect(onB.uri).toBe(follow.uri);

    // The Accept came back to A.
    const accepted = await eventually(async () => {
      const f = await a.services.db.em().findOne(FollowSchema, { id: follow.id });
      return f?.state === 'accepted' ? f : null;
    }, 20_000, 'the Accept to arrive on A');
    expect(accepted.accountId).toBe(alice.id);

    // bob's followers collection on B counts the new follower.
    const followers = await fetch(b.at('/users/bob/followers'), { headers: { accept: 'application/activity+json' } });
    expect(((await followers.json()) as any).totalItems).toBe(1);

    // The featured collections (pinned posts, featured hashtags) are where the actor says, at
    // Mastodon's paths, and A recorded the first from the actor it fetched.
    const actor = (await (await fetch(b.at('/users/bob'), { headers: { accept: 'application/activity+json' } })).json()) as any;
    expect([actor.featured, actor.featuredTags]).toEqual([b.at('/users/bob/collections/featured'), b.at('/users/bob/collections/tags')]);
    expect(bobOnA!.featuredUrl).toBe(b.at('/users/bob/collections/featured'));
    for (const url of [actor.featured, actor.featuredTags]) {
      const res = await fetch(url, { headers: { accept: 'application/activity+json' } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id: url, type: 'OrderedCollection', totalItems: 0 });
    }
    expect((await fetch(b.at('/users/nobody/collections/featured'), { headers: { accept: 'application/activity+json' } })).status).toBe(404);
  });

  it('rejects an unsigned activity at the inbox', async () => {
    await createLocalAccount(b.services, { username: 'carol', email: 'carol@b.test' });
    const res = await fetch(b.at('/users/carol/inbox'), {
      method: 'POST',
      headers: { 'content-type': 'application/activity+json' },
      body: JSON.stringify({
        '@context': 'https://www.w3.org/ns/activitystreams',
        id: a.at('/users/alice#follows/forged'),
        type: 'Follow',
        actor: a.at('/users/alice'),
        object: b.at('/users/carol'),
      }),
    });
    expect(res.status).toBe(401);
    const carol = await b.services.db.em().findOneOrFail(AccountSchema, { username: 'carol', domain: null });
    expect(await b.services.db.em().count(FollowSchema, { targetAccountId: carol.id })).toBe(0);
  });

  it('refuses to fetch from loopback addresses unless ROOST_ALLOW_PRIVATE_ADDRESSES is on', async () => {
    const closed = await startTestRoost({ federation: { allowPrivateAddresses: false } });
    try {
      expect(closed.config.federation.allowPrivateAddresses).toBe(false);
      // The same lookup that succeeds on A (allowed) finds nothing here: Fedify refuses the address.
      expect(await lookupRemoteAccount(closed.services, closed.federation, b.at('/users/bob'))).toBeNull();
      expect(await closed.services.db.em().count(AccountSchema, { domain: b.config.domain })).toBe(0);
    } finally {
      await closed.close();
    }
  });
});
