/**
 * Authorized fetch between two real instances (real HTTP, real signatures): A runs with
 * federation.authorizedFetch, B with the default. Unsigned GETs of A's actors, Notes and
 * collections get 401 while its instance actor, WebFinger and NodeInfo stay public; B's fetches,
 * signed by its instance actor, get through, so B's users follow A's and receive their posts; a
 * server A blocks gets nothing. Forwarded Creates: one with an embedded object proof is taken on
 * it; one signed by another actor, or with a signature that does not verify, is taken after its
 * object is re-fetched from its origin (A, in authorized-fetch mode), and refused when the origin
 * does not have it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importJwk, signObject, signRequest } from '@fedify/fedify';
import { Create, Note, PUBLIC_COLLECTION } from '@fedify/vocab';
import { eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { lookupRemoteAccount, lookupObjectSafely } from '../../src/federation/lookup.ts';
import { followAccount } from '../../src/services/follows.ts';
import { createDomainBlock } from '../../src/services/domain-blocks.ts';

let a: TestRoost; // authorized fetch
let b: TestRoost;
let alice: TestUser; // on A
let dave: TestUser; // on A
let bob: TestUser; // on B
let carol: TestUser; // on B

const AP = { accept: 'application/activity+json' };

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost({ federation: { authorizedFetch: true } }), startTestRoost()]);
  [alice, dave, bob, carol] = await Promise.all([
    createTestUser(a, 'alice'),
    createTestUser(a, 'dave'),
    createTestUser(b, 'bob'),
    createTestUser(b, 'carol'),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

async function statusOn(r: TestRoost, uri: string) {
  const [row] = await r.services.db.sql.query<{ id: string; content: string; account_uri: string }>(
    `select s.id::text, s.content, x.uri as account_uri from statuses s join accounts x on x.id = s.account_id where s.uri = $1`,
    [uri],
  );
  return row ?? null;
}

/** A local account's private key on `r` (RSA for HTTP signatures, Ed25519 for object proofs). */
async function privateKeyOf(r: TestRoost, username: string, algorithm: 'RSASSA-PKCS1-v1_5' | 'Ed25519') {
  const [row] = await r.services.db.sql.query<{ private_jwk: any }>(
    `select k.private_jwk from account_keys k join accounts x on x.id = k.account_id where x.username = $1 and x.domain is null and k.algorithm = $2`,
    [username, algorithm],
  );
  return importJwk(typeof row!.private_jwk === 'string' ? JSON.parse(row!.private_jwk) : row!.private_jwk, 'private');
}

async function post(u: TestUser, status: string, visibility = 'public') {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body: { status, visibility } });
  expect(r.status).toBe(200);
  return r.body as { id: string; uri: string };
}

/** POSTs a JSON activity to `inbox`, HTTP-signed with `username`'s RSA key on `from` (or a broken signature). */
async function deliver(from: TestRoost, username: string, inbox: string, activity: unknown, opts: { breakSignature?: boolean } = {}) {
  const request = new Request(inbox, { method: 'POST', headers: { 'content-type': 'application/activity+json' }, body: JSON.stringify(activity) });
  const signed = await signRequest(request, await privateKeyOf(from, username, 'RSASSA-PKCS1-v1_5'), new URL(`${from.at(`/users/${username}`)}#main-key`), {
    spec: 'draft-cavage-http-signatures-12',
  });
  const headers = new Headers(signed.headers);
  if (opts.breakSignature) headers.set('signature', headers.get('signature')!.replace(/signature="[^"]+"/, `signature="${Buffer.alloc(256, 7).toString('base64')}"`));
  const res = await fetch(inbox, { method: 'POST', headers, body: JSON.stringify(activity) });
  return { status: res.status, text: await res.text() };
}

describe('authorized fetch', () => {
  it('refuses unsigned GETs of actors, Notes and collections; the instance actor, WebFinger and NodeInfo stay public', async () => {
    const note = await post(alice, 'only for signed fetches');
    for (const path of [
      '/users/alice',
      new URL(note.uri).pathname,
      `${new URL(note.uri).pathname}/activity`,
      `${new URL(note.uri).pathname}/replies`,
      '/users/alice/outbox',
      '/users/alice/outbox?cursor=first',
      '/users/alice/followers',
      '/users/alice/following',
      '/users/alice/collections/featured',
      '/users/alice/collections/tags',
    ]) {
      const res = await fetch(a.at(path), { headers: AP });
      expect([path, res.status]).toEqual([path, 401]);
      expect(await res.json()).toEqual({ error: 'Request not signed or not authorized' });
    }
    const instance = await fetch(a.at('/users/instance.actor'), { headers: AP });
    expect(instance.status).toBe(200);
    expect(((await instance.json()) as any).type).toBe('Application');
    const wf = await fetch(a.at(`/.well-known/webfinger?resource=acct:alice@${a.config.domain}`));
    expect(wf.status).toBe(200);
    expect(((await wf.json()) as any).links.find((l: any) => l.rel === 'self').href).toBe(a.at('/users/alice'));
    expect((await fetch(a.at('/.well-known/nodeinfo'))).status).toBe(200);
    // Without authorized fetch (B), the same documents are public.
    expect((await fetch(b.at('/users/bob'), { headers: AP })).status).toBe(200);
    expect((await fetch(b.at('/users/bob/outbox'), { headers: AP })).status).toBe(200);
  });

  it("serves B's signed fetches (through B's instance actor): B's users follow A's and receive their posts", async () => {
    const aliceOnB = await lookupRemoteAccount(b.services, b.federation, a.at('/users/alice'));
    expect(aliceOnB).toMatchObject({ username: 'alice', domain: a.config.domain, uri: a.at('/users/alice'), inboxUrl: a.at('/users/alice/inbox') });
    const byHandle = await lookupRemoteAccount(b.services, b.federation, `alice@${a.config.domain}`, { fresh: true });
    expect(byHandle?.id).toBe(aliceOnB!.id);

    const follow = await followAccount(b.services, bob.account.id, aliceOnB!.id);
    await eventually(async () => (await b.services.db.sql.query(`select 1 from follows where id = $1 and state = 'accepted'`, [follow.id])).length > 0, 20_000, 'the Accept');
    const note = await post(alice, 'hello, signed world');
    const arrived = await eventually(() => statusOn(b, note.uri), 20_000, "alice's post on B");
    expect(arrived).toMatchObject({ content: '<p>hello, signed world</p>', account_uri: a.at('/users/alice') });

    // An object fetch by B is signed and served.
    const ctx = b.federation.createContext(new URL(b.config.publicUrl), undefined);
    const fetched = await lookupObjectSafely(new URL(note.uri), ctx.documentLoader, ctx.contextLoader);
    expect(fetched).toBeInstanceOf(Note);
    expect(fetched?.id?.href).toBe(note.uri);
  });

  it('forwarded Creates: taken on an embedded proof, or after a re-fetch from the origin, refused when the origin denies it', async () => {
    // carol (B) follows dave (A) after dave posted, so dave's posts concern B but were never delivered there.
    const early = await post(dave, 'posted before carol followed');
    const other = await post(dave, 'another early post');
    const proofed = await post(dave, 'a third early post');
    const secret = await post(dave, 'for followers only', 'private');
    await settled(a, b);
    const daveOnB = (await lookupRemoteAccount(b.services, b.federation, a.at('/users/dave')))!;
    const follow = await followAccount(b.services, carol.account.id, daveOnB.id);
    await eventually(async () => (await b.services.db.sql.query(`select 1 from follows where id = $1 and state = 'accepted'`, [follow.id])).length > 0, 20_000, 'the Accept');
    for (const s of [early, other, proofed, secret]) expect(await statusOn(b, s.uri)).toBeNull();

    const createOf = (uri: string, content: string) => ({
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: `${uri}/activity`,
      type: 'Create',
      actor: a.at('/users/dave'),
      to: ['https://www.w3.org/ns/activitystreams#Public'],
      // What the forwarder claims; what is stored is what the origin serves.
      object: { id: uri, type: 'Note', attributedTo: a.at('/users/dave'), content, to: ['https://www.w3.org/ns/activitystreams#Public'] },
    });

    // Signed by alice (not the actor): the object is re-fetched from A (signed fetch) and stored as A serves it.
    const forwarded = await deliver(a, 'alice', b.at('/inbox'), createOf(early.uri, '<p>forged text</p>'));
    expect(forwarded.status).toBe(202);
    expect(await statusOn(b, early.uri)).toMatchObject({ content: '<p>posted before carol followed</p>', account_uri: a.at('/users/dave') });

    // dave's own key, but a signature that does not verify: the same re-fetch.
    const broken = await deliver(a, 'dave', b.at('/users/carol/inbox'), createOf(other.uri, '<p>forged again</p>'), { breakSignature: true });
    expect(broken.status).toBe(202);
    expect(await statusOn(b, other.uri)).toMatchObject({ content: '<p>another early post</p>', account_uri: a.at('/users/dave') });

    // A followers-only post forwarded to the shared inbox: the instance actor may not see it (401);
    // to carol's own inbox: re-fetched with carol's key, a follower's, and taken.
    expect((await deliver(a, 'alice', b.at('/inbox'), createOf(secret.uri, '<p>x</p>'))).status).toBe(401);
    expect(await statusOn(b, secret.uri)).toBeNull();
    expect((await deliver(a, 'alice', b.at('/users/carol/inbox'), createOf(secret.uri, '<p>x</p>'))).status).toBe(202);
    expect(await statusOn(b, secret.uri)).toMatchObject({ content: '<p>for followers only</p>', account_uri: a.at('/users/dave') });

    // An object the origin does not have: refused, nothing stored.
    const missing = a.at('/users/dave/statuses/99999999999');
    const denied = await deliver(a, 'alice', b.at('/inbox'), createOf(missing, '<p>never posted</p>'));
    expect(denied.status).toBe(401);
    expect(await statusOn(b, missing)).toBeNull();
    const deniedBroken = await deliver(a, 'dave', b.at('/inbox'), createOf(missing, '<p>never posted</p>'), { breakSignature: true });
    expect(deniedBroken.status).toBe(401);
    expect(await statusOn(b, missing)).toBeNull();
    // An object attributed to someone else than the Create's actor: refused.
    const misattributed = { ...createOf(early.uri, 'x'), actor: a.at('/users/alice') };
    expect((await deliver(a, 'dave', b.at('/inbox'), { ...misattributed, id: `${early.uri}/other` })).status).toBe(401);

    // An object integrity proof by dave (FEP-8b32), in a request signed by alice: Fedify takes it on the proof.
    const create = new Create({
      id: new URL(`${proofed.uri}/activity`),
      actor: new URL(a.at('/users/dave')),
      to: PUBLIC_COLLECTION,
      object: new Note({ id: new URL(proofed.uri), attribution: new URL(a.at('/users/dave')), content: '<p>a third early post</p>', to: PUBLIC_COLLECTION }),
    });
    const signed = await signObject(create, await privateKeyOf(a, 'dave', 'Ed25519'), new URL(`${a.at('/users/dave')}#multikey-2`));
    const withProof = await deliver(a, 'alice', b.at('/inbox'), await signed.toJsonLd({ format: 'compact' }));
    expect(withProof.status).toBe(202);
    const stored = await eventually(() => statusOn(b, proofed.uri), 20_000, 'the proofed Create processed');
    expect(stored).toMatchObject({ content: '<p>a third early post</p>', account_uri: a.at('/users/dave') });
  });

  it('profile and status links (/@user, /@user/:id) follow the same rule: refused unsigned, served signed', async () => {
    const note = await post(alice, 'linked by its web address');
    const statusLink = a.at(`/@alice/${note.id}`);
    const moved = await fetch(a.at('/@alice'), { headers: AP, redirect: 'manual' });
    expect([moved.status, moved.headers.get('location')]).toEqual([301, a.at('/users/alice')]);
    const movedNote = await fetch(statusLink, { headers: AP, redirect: 'manual' });
    expect([movedNote.status, movedNote.headers.get('location')]).toEqual([301, note.uri]);
    for (const link of [a.at('/@alice'), statusLink]) {
      const res = await fetch(link, { headers: AP });
      expect([link, res.status]).toEqual([link, 401]);
      expect(await res.json()).toEqual({ error: 'Request not signed or not authorized' });
    }
    // B resolves a pasted profile link and a status link with its signed fetches.
    const byLink = await lookupRemoteAccount(b.services, b.federation, a.at('/@alice'), { fresh: true });
    expect(byLink).toMatchObject({ username: 'alice', domain: a.config.domain, uri: a.at('/users/alice') });
    const ctx = b.federation.createContext(new URL(b.config.publicUrl), undefined);
    const fetched = await lookupObjectSafely(new URL(statusLink), ctx.documentLoader, ctx.contextLoader);
    expect(fetched).toBeInstanceOf(Note);
    expect(fetched?.id?.href).toBe(note.uri);
  });

  it('a server A blocks gets nothing, even signed', async () => {
    const note = await post(alice, 'not for blocked servers');
    await createDomainBlock(a.services, { domain: b.config.domain, severity: 'suspend' }, 'operator');
    await eventually(async () => !(await a.services.domainPolicy.allowed(b.config.domain)), 10_000, 'the block in force');
    // B's signed fetches (fresh, past B's cache) are refused.
    expect(await lookupRemoteAccount(b.services, b.federation, a.at('/users/dave'), { fresh: true })).toBeNull();
    const ctx = b.federation.createContext(new URL(b.config.publicUrl), undefined);
    const loader = await ctx.getDocumentLoader({ identifier: 'instance.actor' });
    await expect(loader(note.uri)).rejects.toThrow(/401/);
    await expect(loader(a.at('/users/alice/outbox'))).rejects.toThrow(/401/);
  });
});
