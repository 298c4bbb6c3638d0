/**
 * At-least-once delivery (a restarted fan-out sends again, test/federation/delivery-crash.test.ts)
 * is safe for the receiver: the very same signed request — a Create, then a Like — POSTed twice
 * to a real instance's inbox yields one status and one favourite.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import type { webcrypto } from 'node:crypto';
import { signRequest } from '@fedify/fedify';
import { Create, Like, Note, PUBLIC_COLLECTION, type Activity } from '@fedify/vocab';
import { startTestRoost, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

let a: TestRoost;
let b: TestRoost;
let alice: TestUser;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
  [alice] = await Promise.all([createTestUser(a, 'alice'), createTestUser(b, 'bob')]);
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

/** bob's activity, signed once (draft-cavage, his RSA key), POSTed twice as the same bytes to alice's inbox. */
async function deliverTwice(activity: Activity): Promise<number[]> {
  const ctx = b.federation.createContext(new URL(b.url), undefined);
  // Fedify's pairs carry their private keys, though the type leaves them out (see delivery.ts).
  const pairs = (await ctx.getActorKeyPairs('bob')) as unknown as { keyId: URL; privateKey: webcrypto.CryptoKey }[];
  const rsa = pairs.find((k) => k.privateKey.algorithm.name === 'RSASSA-PKCS1-v1_5')!;
  const body = JSON.stringify(await activity.toJsonLd({ format: 'compact', contextLoader: ctx.contextLoader }));
  const signed = await signRequest(
    new Request(a.at('/users/alice/inbox'), { method: 'POST', headers: { 'content-type': 'application/activity+json' }, body }),
    rsa.privateKey,
    rsa.keyId,
  );
  const headers = Object.fromEntries(signed.headers);
  const statuses: number[] = [];
  for (let i = 0; i < 2; i++) {
    const res = await fetch(a.at('/users/alice/inbox'), { method: 'POST', headers, body });
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  await settled(a, b);
  return statuses;
}

describe('duplicate deliveries', () => {
  it('the same signed Create twice: one status', async () => {
    const uri = b.at('/users/bob/statuses/dup-1');
    const note = new Note({
      id: new URL(uri),
      attribution: new URL(b.at('/users/bob')),
      to: PUBLIC_COLLECTION,
      cc: new URL(a.at('/users/alice')),
      content: '<p>once</p>',
    });
    const codes = await deliverTwice(new Create({ id: new URL(`${uri}/activity`), actor: new URL(b.at('/users/bob')), to: PUBLIC_COLLECTION, cc: new URL(a.at('/users/alice')), object: note }));
    expect(codes.every((s) => s >= 200 && s < 300)).toBe(true);
    const rows = await a.services.db.sql.query<{ content: string }>(`select content from statuses where uri = $1`, [uri]);
    expect(rows).toEqual([{ content: expect.stringContaining("once") }]);
  });

  it('the same signed Like twice: one favourite', async () => {
    const r = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'like me once' } });
    expect(r.status).toBe(200);
    const codes = await deliverTwice(
      new Like({ id: new URL(b.at('/users/bob#likes/dup-1')), actor: new URL(b.at('/users/bob')), object: new URL(r.body.uri) }),
    );
    expect(codes.every((s) => s >= 200 && s < 300)).toBe(true);
    const favs = await a.services.db.sql.query<{ uri: string }>(
      `select a.uri from favourites f join accounts a on a.id = f.account_id where f.status_id = $1`,
      [r.body.id],
    );
    expect(favs).toEqual([{ uri: b.at('/users/bob') }]);
    expect((await alice.api(`/api/v1/statuses/${r.body.id}`)).body.favourites_count).toBe(1);
  });
});
