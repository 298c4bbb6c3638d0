/**
 * The shared inbox's fast path (src/federation/inbox-fast.ts) through a real Roost on a real port,
 * with real draft-cavage signatures from fake remote servers: a delivery signed with a key already
 * in memory is verified and queued there, and stores what Fedify's path stores; everything it must
 * not decide — a bad signature, a digest mismatch, an actor that is not the key's owner, a stale
 * Date, a blocked server, a Linked Data signature or a proof — is handed on to Fedify's path and
 * answered as Fedify answers it, nothing stored. The fast path's counters say which way each went.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled, startTestRoost, eventually, watchStatements, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { AS_CONTEXT, startFakePeer, type FakePeer } from '../security/fake-peer.ts';
import { inboxFastPath, type RoostFederation } from '../../src/federation/index.ts';

const PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';

let roost: TestRoost;
let peer: FakePeer;
let other: FakePeer;
let blocked: FakePeer;
let alice: TestUser;
let owner: TestUser;
let n = 0;

const stats = () => inboxFastPath(roost.federation as RoostFederation)!.stats;
const fallbacks = (reason: string) => stats().fallbacks[reason] ?? 0;

/** A Create of a public Note addressed to alice, from `from`'s actor (or `actor`). */
function create(from: FakePeer, extra: Record<string, unknown> = {}, actor = from.actorId) {
  const uri = `${from.base}/users/mallory/statuses/${++n}`;
  const to = [PUBLIC, roost.at('/users/alice')];
  return {
    uri,
    body: {
      '@context': AS_CONTEXT,
      id: `${uri}/activity`,
      type: 'Create',
      actor,
      to,
      object: { id: uri, type: 'Note', attributedTo: actor, to, content: `<p>note ${n}</p>`, published: new Date().toISOString() },
      ...extra,
    },
  };
}

async function stored(uri: string) {
  const [row] = await roost.services.db.sql.query<Record<string, unknown>>(
    `select s.visibility, s.content, a.uri as account, s.local, s.in_reply_to_id, s.reblog_of_id, s.sensitive, s.spoiler_text, s.language,
            s.conversation_id is not null as in_conversation, s.deleted_at,
            (select count(*)::int from mentions m where m.status_id = s.id) as mentions
       from statuses s join accounts a on a.id = s.account_id where s.uri = $1`,
    [uri],
  );
  return row ?? null;
}

async function storedCount(uri: string): Promise<number> {
  const [row] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from statuses where uri = $1`, [uri]);
  return row!.n;
}

/** The Fedify messages `fn` enqueues (one INSERT each: deliveries sent one at a time), with their ordering keys. */
async function enqueuedMessages(fn: () => Promise<unknown>): Promise<{ message: Record<string, unknown>; orderingKey: unknown }[]> {
  const seen: { message: Record<string, unknown>; orderingKey: unknown }[] = [];
  await watchStatements(
    roost,
    (text, params) => {
      if (/INSERT INTO jobs/.test(text) && params?.[1] === 'fedify.message') seen.push({ message: JSON.parse(params[2] as string), orderingKey: params[6] });
    },
    fn,
  );
  return seen;
}

/** A first delivery from each peer: its key is fetched by Fedify and kept in memory. */
async function warm(p: FakePeer) {
  const { uri, body } = create(p);
  const res = await p.deliver(roost.at('/inbox'), body);
  expect(res.status).toBe(202);
  await eventually(async () => (await storedCount(uri)) === 1, 20_000, `${p.base}'s first Note`);
}

beforeAll(async () => {
  [roost, peer, other, blocked] = await Promise.all([startTestRoost(), startFakePeer(), startFakePeer(), startFakePeer()]);
  alice = await createTestUser(roost, 'alice');
  owner = await createTestUser(roost, 'operator', { role: 'Owner', scopes: ['admin:read', 'admin:write'] });
  const before = fallbacks('key not in memory');
  for (const p of [peer, other, blocked]) await warm(p);
  expect(fallbacks('key not in memory')).toBe(before + 3);
  await settled(roost);
}, 120_000);
afterAll(async () => {
  await Promise.all([roost?.close(), peer?.close(), other?.close(), blocked?.close()]);
});

describe('a delivery signed with a key in memory', () => {
  it('is taken by the fast path (Fedify’s 202) and stores the same status as Fedify’s path', async () => {
    const fast = create(peer);
    const taken = stats().accepted;
    let res!: Response;
    const [fastMessage] = await enqueuedMessages(async () => (res = await peer.deliver(roost.at('/inbox'), fast.body)));
    expect(res.status).toBe(202);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toBe('Activity is enqueued.');
    expect(stats().accepted).toBe(taken + 1);

    // The same kind of delivery through Fedify's path (an Accept header it answers with Vary: the fast path hands it on).
    const slow = create(peer);
    const viaFedify = fallbacks('accept header');
    let res2!: Response;
    const [slowMessage] = await enqueuedMessages(async () => (res2 = await peer.deliver(roost.at('/inbox'), slow.body, { headers: { accept: 'application/activity+json' } })));
    expect(res2.status).toBe(202);
    expect(await res2.text()).toBe('Activity is enqueued.');
    expect(fallbacks('accept header')).toBe(viaFedify + 1);
    expect(stats().accepted).toBe(taken + 1);

    // Fedify's message, field for field (its own id and time aside), on the same ordering key.
    expect(fastMessage!.message.activity).toEqual(fast.body);
    expect(slowMessage!.message.activity).toEqual(slow.body);
    expect(Object.keys(fastMessage!.message)).toEqual(Object.keys(slowMessage!.message));
    const rest = (m: Record<string, unknown>) => ({ ...m, id: typeof m.id, started: typeof m.started, activity: null });
    expect(rest(fastMessage!.message)).toEqual(rest(slowMessage!.message));
    expect(fastMessage!.orderingKey).toBe(`inbox ${peer.actorId}`);
    expect(slowMessage!.orderingKey).toBe(fastMessage!.orderingKey);

    await settled(roost);
    const a = await stored(fast.uri);
    const b = await stored(slow.uri);
    expect(a).not.toBeNull();
    expect(a).toMatchObject({ visibility: 'public', account: peer.actorId, local: false, mentions: 1 });
    // The same row but for the content (each Note says its own number).
    expect(a!.content).toMatch(/note \d+/);
    expect({ ...a, content: null }).toEqual({ ...b, content: null });
  });

  it('goes through the same queue, ordered per actor: a Like then its Undo apply in order', async () => {
    const s = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'like me', visibility: 'public' } });
    const like = { '@context': AS_CONTEXT, id: `${peer.base}/likes/${++n}`, type: 'Like', actor: peer.actorId, object: s.body.uri };
    const taken = stats().accepted;
    expect((await peer.deliver(roost.at('/inbox'), like)).status).toBe(202);
    expect((await peer.deliver(roost.at('/inbox'), { '@context': AS_CONTEXT, id: `${peer.base}/undos/${++n}`, type: 'Undo', actor: peer.actorId, object: like })).status).toBe(202);
    expect(stats().accepted).toBe(taken + 2);
    await settled(roost);
    const [row] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from favourites where status_id = $1`, [s.body.id]);
    expect(row!.n).toBe(0);
  });
});

describe('what the fast path hands on to Fedify, answered as Fedify answers it', () => {
  /** `send`'s delivery is handed on for `reason`, answered `status` by Fedify's path, and none of `uris` is stored. */
  async function handedOn(reason: string, status: number, send: () => Promise<Response>, uris: string[]) {
    const before = fallbacks(reason);
    const res = await send();
    expect(res.status).toBe(status);
    expect(fallbacks(reason)).toBe(before + 1);
    await settled(roost);
    for (const uri of uris) expect(await storedCount(uri)).toBe(0);
  }

  it('a bad signature (another key under the keyId): 401, nothing stored', async () => {
    const { uri, body } = create(peer);
    await handedOn('signature', 401, async () => fetch(await other.signed(roost.at('/inbox'), body, { keyId: peer.keyId })), [uri]);
  });

  it('a digest mismatch (the body changed after signing): 401, nothing stored', async () => {
    const signedFor = create(peer);
    const sent = create(peer);
    const request = await peer.signed(roost.at('/inbox'), signedFor.body);
    await handedOn(
      'digest mismatch',
      401,
      () => fetch(roost.at('/inbox'), { method: 'POST', headers: request.headers, body: JSON.stringify(sent.body) }),
      [signedFor.uri, sent.uri],
    );
  });

  it('an actor that is not the key’s owner: 401, nothing stored', async () => {
    const { uri, body } = create(other, {}, peer.actorId);
    await handedOn('actor is not the key owner', 401, () => other.deliver(roost.at('/inbox'), body), [uri]);
  });

  it('a Date 13 hours old (outside the 12-hour window): 401, nothing stored', async () => {
    const { uri, body } = create(peer);
    const date = new Date(Date.now() - 13 * 3600_000).toUTCString();
    await handedOn('date', 401, () => peer.deliver(roost.at('/inbox'), body, { headers: { date } }), [uri]);
  });

  it('a server the domain policy suspends: 403, nothing stored', async () => {
    const domain = new URL(blocked.base).host;
    const r = await owner.api('/api/v1/admin/domain_blocks', { method: 'POST', body: { domain, severity: 'suspend' } });
    expect(r.status).toBe(200);
    await settled(roost);
    const { uri, body } = create(blocked);
    await handedOn('domain policy', 403, () => blocked.deliver(roost.at('/inbox'), body), [uri]);
  });

  it('a Linked Data signature or an object proof in the body: Fedify’s path decides', async () => {
    const ld = create(peer, {
      signature: { type: 'RsaSignature2017', creator: peer.keyId.href, created: new Date().toISOString(), signatureValue: 'AAAA' },
    });
    const proof = create(peer, {
      proof: { type: 'DataIntegrityProof', cryptosuite: 'eddsa-jcs-2022', verificationMethod: `${peer.actorId}#ed25519-key`, proofPurpose: 'assertionMethod', proofValue: 'z1111' },
    });
    const before = fallbacks('embedded signature or proof');
    const taken = stats().accepted;
    const statuses: number[] = [];
    for (const d of [ld, proof]) statuses.push((await peer.deliver(roost.at('/inbox'), d.body)).status);
    expect(fallbacks('embedded signature or proof')).toBe(before + 2);
    expect(stats().accepted).toBe(taken);
    // Fedify's answer: the LD signature does not verify, the proof does not either, and the HTTP
    // signature (the actor's own) does: taken.
    expect(statuses).toEqual([202, 202]);
  });

  it('a Delete, in any spelling, is left to the unknown-actor gate and Fedify', async () => {
    const before = fallbacks('activity type');
    const taken = stats().accepted;
    for (const type of ['Delete', 'as:Delete', 'https://www.w3.org/ns/activitystreams#Delete']) {
      const res = await peer.deliver(roost.at('/inbox'), { '@context': AS_CONTEXT, id: `${peer.base}/deletes/${++n}`, type, actor: peer.actorId, object: `${peer.base}/users/mallory/statuses/none` });
      expect([type, res.status]).toEqual([type, 202]);
    }
    expect(fallbacks('activity type')).toBe(before + 3);
    expect(stats().accepted).toBe(taken);
  });

  it('a context that could change what `actor` means: Fedify’s path decides', async () => {
    const { body } = create(peer, { '@context': ['https://www.w3.org/ns/activitystreams', { actor: 'https://evil.example/ns#notActor' }] });
    const before = fallbacks('context');
    const taken = stats().accepted;
    await peer.deliver(roost.at('/inbox'), body);
    expect(fallbacks('context')).toBe(before + 1);
    expect(stats().accepted).toBe(taken);
  });
});
