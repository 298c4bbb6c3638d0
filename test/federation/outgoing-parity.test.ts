/**
 * What Roost sends, as Mastodon sends it, received by a fake Mastodon server over real HTTP: a
 * Note's OStatus terms (`atomUri`, `inReplyToAtomUri`, `conversation`, also as `context`) and its
 * `replies` collection with a `first` page; a pin and an unpin as Add and Remove to the featured
 * collection, to the followers; public Creates, Updates, Deletes and Announces with Mastodon's
 * linked-data signature (RsaSignature2017), verified with the actor's key.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { verifyJsonLd } from '@fedify/fedify';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { startFakeSoftware, type FakeSoftware } from '../helpers/fake-software.ts';
import type { Placeholders } from '../fixtures/activitypub/load.ts';

let roost: TestRoost;
let alice: TestUser;
let peer: FakeSoftware;
let values: Placeholders;

beforeAll(async () => {
  [roost, peer] = await Promise.all([startTestRoost(), startFakeSoftware('mastodon')]);
  alice = await createTestUser(roost, 'alice');
  values = {
    local: roost.url,
    local_host: new URL(roost.url).host,
    local_actor: roost.at('/users/alice'),
    local_actor_id: alice.account.id,
    local_note: roost.at('/nothing'),
    local_poll: roost.at('/nothing'),
    now: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    later: new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z'),
  };
  // The peer's account follows alice: her public posts go to its inbox.
  expect((await peer.deliver(roost.at('/users/alice/inbox'), 'follow', values)).status).toBe(202);
  const follower = peer.fixture('actor', values).id as string;
  await eventually(async () => (await roost.services.db.sql.query(`select 1 from follows f join accounts a on a.id = f.account_id where a.uri = $1 and f.state = 'accepted'`, [follower])).length > 0, 20_000, 'the follow');
}, 120_000);
afterAll(async () => {
  await Promise.all([roost?.close(), peer?.close()]);
});

/** The activity of `type` about `objectUri` the peer received (waits for it). */
async function received(type: string, objectUri: string): Promise<Record<string, any>> {
  const find = () =>
    peer.posts.map((p) => p.body as Record<string, any>).find((b) => b.type === type && (b.object?.id ?? b.object) === objectUri);
  return eventually(async () => find() ?? null, 20_000, `${type} of ${objectUri}`);
}

describe('outgoing Notes as Mastodon sends them', () => {
  it('a Create carries atomUri, inReplyToAtomUri, conversation and context (one per thread) and replies with a first page', async () => {
    const post = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'A thread starts' } });
    expect(post.status).toBe(200);
    const reply = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'and goes on', in_reply_to_id: post.body.id } });
    expect(reply.status).toBe(200);
    const first = await received('Create', post.body.uri);
    const second = await received('Create', reply.body.uri);
    const [a, b] = [first.object, second.object];
    expect(JSON.stringify(first['@context'])).toContain('"atomUri":"ostatus:atomUri"');
    expect(a.atomUri).toBe(post.body.uri);
    expect(a.inReplyToAtomUri ?? null).toBeNull();
    expect(a.conversation).toMatch(new RegExp(`^tag:${roost.services.config.domain.replace(/\./g, '\\.')},\\d{4}-\\d{2}-\\d{2}:objectId=\\d+:objectType=Conversation$`));
    // `context`: the thread rooted here as a collection (FEP-7888), at Mastodon 4.5's /contexts/….
    expect(a.context).toMatch(new RegExp(`^${roost.url}/contexts/\\d+$`));
    expect([b.atomUri, b.inReplyToAtomUri, b.conversation, b.context]).toEqual([reply.body.uri, post.body.uri, a.conversation, a.context]);
    expect(a.replies).toEqual({
      id: `${post.body.uri}/replies`,
      type: 'Collection',
      first: { type: 'CollectionPage', partOf: `${post.body.uri}/replies`, next: `${post.body.uri}/replies?cursor=first` },
    });
    // (An empty `items` does not survive JSON-LD compaction: no items is the same empty page.)
    // The Note served at its URI says the same, with its real first page of replies.
    const served = (await (await fetch(post.body.uri, { headers: { accept: 'application/activity+json' } })).json()) as Record<string, any>;
    expect([served.atomUri, served.conversation, served.context]).toEqual([post.body.uri, a.conversation, a.context]);
    expect([served.replies.first.items].flat()).toEqual([reply.body.uri]);
    expect(served.replies.totalItems).toBe(1);
    // The thread's collection lists both, oldest first, with their count.
    const context = (await (await fetch(a.context, { headers: { accept: 'application/activity+json' } })).json()) as Record<string, any>;
    expect(context).toMatchObject({ id: a.context, type: 'Collection', totalItems: 2 });
    const page = (await (await fetch(context.first, { headers: { accept: 'application/activity+json' } })).json()) as Record<string, any>;
    expect(page.items).toEqual([post.body.uri, reply.body.uri]);
    await settled(roost);
  });
});

describe('pins as Mastodon federates them', () => {
  it('pin sends Add and unpin sends Remove (target: the featured collection) to the followers', async () => {
    const post = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'Pin me' } });
    expect((await alice.api(`/api/v1/statuses/${post.body.id}/pin`, { method: 'POST' })).status).toBe(200);
    const add = await received('Add', post.body.uri);
    const featured = roost.at('/users/alice/collections/featured');
    expect(add).toMatchObject({ type: 'Add', actor: roost.at('/users/alice'), object: post.body.uri, target: featured });
    expect(typeof add.id).toBe('string');
    expect((await alice.api(`/api/v1/statuses/${post.body.id}/unpin`, { method: 'POST' })).status).toBe(200);
    const remove = await received('Remove', post.body.uri);
    expect(remove).toMatchObject({ type: 'Remove', actor: roost.at('/users/alice'), object: post.body.uri, target: featured });
    expect(remove.id).not.toBe(add.id);
    // An unpin of a status not pinned sends nothing more.
    expect((await alice.api(`/api/v1/statuses/${post.body.id}/unpin`, { method: 'POST' })).status).toBe(200);
    await settled(roost);
    expect(peer.posts.filter((p) => ['Add', 'Remove'].includes((p.body as { type: string }).type)).length).toBe(2);
  });
});

describe('linked-data signatures as Mastodon makes them', () => {
  it('a public Create, Update, Announce and Delete carry an RsaSignature2017 that verifies with the actor\'s key; a private Create none', async () => {
    const ctx = roost.federation.createContext(new URL(roost.url), undefined);
    const loaders = { documentLoader: ctx.documentLoader, contextLoader: ctx.contextLoader };
    const post = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'Signed, sealed, delivered' } });
    expect(post.status).toBe(200);
    const create = await received('Create', post.body.uri);
    expect(create.signature).toMatchObject({ type: 'RsaSignature2017', creator: `${roost.at('/users/alice')}#main-key` });
    expect(typeof create.signature.signatureValue).toBe('string');
    expect(await verifyJsonLd(create, loaders)).toBe(true);
    // Tampered with, it does not verify.
    expect(await verifyJsonLd({ ...create, object: { ...create.object, content: '<p>forged</p>' } }, loaders)).toBe(false);

    expect((await alice.api(`/api/v1/statuses/${post.body.id}`, { method: 'PUT', body: { status: 'Signed again' } })).status).toBe(200);
    const update = await received('Update', post.body.uri);
    expect(update.signature?.type).toBe('RsaSignature2017');
    expect(await verifyJsonLd(update, loaders)).toBe(true);

    const boost = await alice.api(`/api/v1/statuses/${post.body.id}/reblog`, { method: 'POST' });
    expect(boost.status).toBe(200);
    const announce = await received('Announce', post.body.uri);
    expect(await verifyJsonLd(announce, loaders)).toBe(true);

    expect((await alice.api(`/api/v1/statuses/${post.body.id}`, { method: 'DELETE' })).status).toBe(200);
    const del = await received('Delete', post.body.uri);
    expect(del.signature?.type).toBe('RsaSignature2017');
    expect(await verifyJsonLd(del, loaders)).toBe(true);

    const secret = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'followers only', visibility: 'private' } });
    const privateCreate = await received('Create', secret.body.uri);
    expect(privateCreate.signature).toBeUndefined();
  }, 60_000);
});
