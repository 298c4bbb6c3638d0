/**
 * Hostile activities through the real inbox of a real Roost (real HTTP server, real database,
 * real draft-cavage signatures from fake remote servers with RSA keys of their own, served on
 * loopback): an actor that is not the signature's key owner, an object claiming another host's
 * id, a replayed request and one signed 13 hours ago, absurd collection sizes, 10,000 addressees,
 * deep nesting, and Deletes from actors Roost never saw. Each is refused or handled cleanly:
 * never a 500, nothing half-written, and the rows checked.
 * (Malformed domains and unknown severities on the admin domain-block API: test/admin/domain-policy-api.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled, startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { AS_CONTEXT, startFakePeer, type FakePeer } from '../security/fake-peer.ts';

const PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';

let roost: TestRoost;
let mallory: FakePeer; // the attacker's server
let victim: FakePeer; // another server, whose actor Roost knows
let alice: TestUser;
let aliceStatus: { id: string; uri: string };
let n = 0;

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const [row] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from (${sql}) x`, params);
  return row!.n;
}

const accountId = async (uri: string) =>
  (await roost.services.db.sql.query<{ id: string }>(`select id::text from accounts where uri = $1`, [uri]))[0]?.id ?? null;

beforeAll(async () => {
  [roost, mallory, victim] = await Promise.all([startTestRoost(), startFakePeer(), startFakePeer()]);
  alice = await createTestUser(roost, 'alice');
  const r = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'hello', visibility: 'public' } });
  aliceStatus = r.body;
  // Roost knows both remote actors: each follows alice (the Follow is theirs, properly signed).
  for (const peer of [mallory, victim]) {
    const res = await peer.deliver(roost.at('/users/alice/inbox'), {
      '@context': AS_CONTEXT, id: `${peer.base}/follows/${++n}`, type: 'Follow', actor: peer.actorId, object: roost.at('/users/alice'),
    });
    expect(res.status).toBe(202);
  }
  await eventually(async () => (await count(`select 1 from follows where target_account_id = $1 and state = 'accepted'`, [alice.account.id])) === 2, 20_000, 'both follows');
  await settled(roost);
}, 120_000);
afterAll(async () => {
  await Promise.all([roost?.close(), mallory?.close(), victim?.close()]);
});

describe('an activity whose actor is not the signature’s key owner', () => {
  it('refuses a Like, a Follow and a Delete in the victim’s name signed by mallory’s key, writing nothing', async () => {
    const bob = await createTestUser(roost, 'bob');
    const victimId = (await accountId(victim.actorId))!;
    const activities = [
      { id: `${mallory.base}/likes/${++n}`, type: 'Like', actor: victim.actorId, object: aliceStatus.uri },
      { id: `${mallory.base}/follows/${++n}`, type: 'Follow', actor: victim.actorId, object: roost.at('/users/bob') },
      { id: `${mallory.base}/deletes/${++n}`, type: 'Delete', actor: victim.actorId, object: victim.actorId },
    ];
    for (const a of activities) {
      const res = await mallory.deliver(roost.at('/inbox'), { '@context': AS_CONTEXT, ...a });
      expect([a.type, res.status]).toEqual([a.type, 401]);
    }
    await settled(roost);
    expect(await count(`select 1 from favourites where status_id = $1`, [aliceStatus.id])).toBe(0);
    expect(await count(`select 1 from follows where target_account_id = $1`, [bob.account.id])).toBe(0);
    expect(await accountId(victim.actorId)).toBe(victimId);
    expect(await count(`select 1 from follows where account_id = $1 and target_account_id = $2 and state = 'accepted'`, [victimId, alice.account.id])).toBe(1);
  });
});

describe('an object claiming another host’s id', () => {
  it('does not store a Note whose id is on another host as that host’s', async () => {
    const foreignId = `${victim.base}/users/mallory/statuses/forged-${++n}`;
    const res = await mallory.deliver(roost.at('/inbox'), {
      '@context': AS_CONTEXT, id: `${mallory.base}/creates/${n}`, type: 'Create', actor: mallory.actorId, to: [PUBLIC],
      object: { id: foreignId, type: 'Note', attributedTo: mallory.actorId, to: [PUBLIC], content: '<p>I am from the victim</p>' },
    });
    expect(res.status).toBe(202);
    await settled(roost);
    expect(await count(`select 1 from statuses where uri = $1`, [foreignId])).toBe(0);
    // Accepted (the signature is mallory's own) and dropped: not stored under any id.
    expect(await count(`select 1 from statuses where content like '%I am from the victim%'`)).toBe(0);
  });

  it('does not store a Note attributed to another host’s actor as theirs', async () => {
    const id = `${mallory.base}/statuses/${++n}`;
    const res = await mallory.deliver(roost.at('/inbox'), {
      '@context': AS_CONTEXT, id: `${mallory.base}/creates/${n}`, type: 'Create', actor: mallory.actorId, to: [PUBLIC],
      object: { id, type: 'Note', attributedTo: victim.actorId, to: [PUBLIC], content: '<p>words in the victim’s mouth</p>' },
    });
    expect(res.status).toBe(202);
    await settled(roost);
    expect(await count(`select 1 from statuses s join accounts a on a.id = s.account_id where s.uri = $1 and a.uri = $2`, [id, victim.actorId])).toBe(0);
    expect(await count(`select 1 from statuses where content like '%in the victim%'`)).toBe(0);
  });
});

describe('replayed signatures', () => {
  it('applies the same signed request sent twice once', async () => {
    const like = { '@context': AS_CONTEXT, id: `${mallory.base}/likes/${++n}`, type: 'Like', actor: mallory.actorId, object: aliceStatus.uri };
    const signed = await mallory.signed(roost.at('/inbox'), like);
    const body = await signed.text();
    const replay = () => fetch(roost.at('/inbox'), { method: 'POST', headers: signed.headers, body });
    expect((await replay()).status).toBe(202);
    await settled(roost);
    expect((await replay()).status).toBe(202);
    await settled(roost);
    expect(await count(`select 1 from favourites where status_id = $1`, [aliceStatus.id])).toBe(1);
    // Undone, then the same Like replayed: the activity id was seen, so it is not applied again.
    const undo = await mallory.deliver(roost.at('/inbox'), { '@context': AS_CONTEXT, id: `${mallory.base}/undos/${++n}`, type: 'Undo', actor: mallory.actorId, object: like });
    expect(undo.status).toBe(202);
    await eventually(async () => (await count(`select 1 from favourites where status_id = $1`, [aliceStatus.id])) === 0, 15_000, 'the Undo');
    expect((await replay()).status).toBe(202);
    await settled(roost);
    expect(await count(`select 1 from favourites where status_id = $1`, [aliceStatus.id])).toBe(0);
  });

  it('refuses a request signed 13 hours ago (outside the 12-hour window), writing nothing', async () => {
    const old = new Date(Date.now() - 13 * 3600_000).toUTCString();
    const uri = `${mallory.base}/statuses/${++n}`;
    const res = await mallory.deliver(
      roost.at('/inbox'),
      { '@context': AS_CONTEXT, id: `${uri}/activity`, type: 'Create', actor: mallory.actorId, to: [PUBLIC, roost.at('/users/alice')],
        object: { id: uri, type: 'Note', attributedTo: mallory.actorId, to: [PUBLIC, roost.at('/users/alice')], content: '<p>old</p>' } },
      { headers: { date: old } },
    );
    expect(res.status).toBe(401);
    await settled(roost);
    expect(await count(`select 1 from statuses where uri = $1`, [uri])).toBe(0);
  });
});

describe('absurd sizes and shapes', () => {
  it('takes an actor whose followers/outbox claim 10^18 or negative totalItems without crashing; the counts are Roost’s own', async () => {
    mallory.actor = {
      followers: { id: `${mallory.actorId}/followers`, type: 'OrderedCollection', totalItems: 1e18 },
      following: { id: `${mallory.actorId}/following`, type: 'OrderedCollection', totalItems: -5 },
      outbox: { id: `${mallory.actorId}/outbox`, type: 'OrderedCollection', totalItems: 1e18 },
      name: 'Big Numbers',
    };
    const { '@context': _c, ...actor } = mallory.actorJson();
    const res = await mallory.deliver(roost.at('/inbox'), { '@context': AS_CONTEXT, id: `${mallory.base}/updates/${++n}`, type: 'Update', actor: mallory.actorId, object: actor });
    expect(res.status).toBe(202);
    const id = (await accountId(mallory.actorId))!;
    await eventually(async () => (await count(`select 1 from accounts where id = $1 and display_name = 'Big Numbers'`, [id])) === 1, 15_000, 'the Update');
    const api = await fetch(roost.at(`/api/v1/accounts/${id}`));
    expect(api.status).toBe(200);
    const json = (await api.json()) as any;
    expect({ followers: json.followers_count, following: json.following_count, statuses: json.statuses_count }).toEqual({ followers: 0, following: 1, statuses: 0 });
    mallory.actor = {};
  });

  it('refuses a Create addressed to 10,000 recipients (over 1 MiB) with 413, writing nothing', async () => {
    const uri = `${mallory.base}/statuses/${++n}`;
    const many = Array.from({ length: 10_000 }, (_, i) => `${mallory.base}/users/x${i}`);
    const to = [PUBLIC, roost.at('/users/alice'), ...many];
    const res = await mallory.deliver(roost.at('/inbox'), {
      '@context': AS_CONTEXT, id: `${uri}/activity`, type: 'Create', actor: mallory.actorId, to, cc: many,
      object: { id: uri, type: 'Note', attributedTo: mallory.actorId, to, cc: many, content: '<p>to everyone</p>' },
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 'Request body too large (limit 1048576 bytes)' });
    await settled(roost);
    expect(await count(`select 1 from statuses where uri = $1`, [uri])).toBe(0);
  });

  it('handles a Create addressed to 2,000 + 2,000 remote recipients: stored once, no fetch for any of them', async () => {
    const uri = `${mallory.base}/statuses/${++n}`;
    const many = Array.from({ length: 2_000 }, (_, i) => `${mallory.base}/users/x${i}`);
    const to = [PUBLIC, roost.at('/users/alice'), ...many];
    const cc = many.map((u) => `${u}/followers`);
    const before = mallory.hits.length;
    const res = await mallory.deliver(roost.at('/inbox'), {
      '@context': AS_CONTEXT, id: `${uri}/activity`, type: 'Create', actor: mallory.actorId, to, cc,
      object: { id: uri, type: 'Note', attributedTo: mallory.actorId, to, cc, content: '<p>to everyone</p>' },
    });
    expect(res.status).toBe(202);
    await eventually(async () => (await count(`select 1 from statuses where uri = $1`, [uri])) === 1, 30_000, 'the Note');
    await settled(roost);
    expect(await count(`select 1 from statuses where uri = $1 and visibility = 'public'`, [uri])).toBe(1);
    expect(mallory.hits.slice(before)).toEqual([]);
  });

  it('refuses an activity nested 100 levels deep with 400, writing nothing', async () => {
    let object: Record<string, unknown> = { id: `${mallory.base}/deep`, type: 'Note', content: 'bottom' };
    for (let i = 0; i < 100; i++) object = { id: `${mallory.base}/deep/${i}`, type: 'Note', inReplyTo: object };
    const res = await mallory.deliver(roost.at('/inbox'), { '@context': AS_CONTEXT, id: `${mallory.base}/creates/${++n}`, type: 'Create', actor: mallory.actorId, object });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'JSON nested deeper than 64 levels' });
    await settled(roost);
    expect(await count(`select 1 from statuses where uri like $1`, [`${mallory.base}/deep%`])).toBe(0);
  });
});

describe('Deletes from actors Roost does not know', () => {
  it('answers 202 and fetches nothing: neither the actor nor its key', async () => {
    const before = mallory.hits.length;
    for (let i = 0; i < 20; i++) {
      const ghost = `${mallory.base}/users/ghost${i}`;
      const res = await mallory.deliver(roost.at('/inbox'), { '@context': AS_CONTEXT, id: `${ghost}#delete`, type: 'Delete', actor: ghost, object: ghost }, { keyId: new URL(`${ghost}#main-key`) });
      expect(res.status).toBe(202);
    }
    await settled(roost);
    expect(mallory.hits.slice(before)).toEqual([]);
    expect(await count(`select 1 from accounts where uri like $1`, [`${mallory.base}/users/ghost%`])).toBe(0);
  });
});
