/**
 * The hub's fan-out of a status event to a stream many sockets share (src/streaming/hub.ts): one
 * publish to the native topic, with the subscribers who must not get the shared frame taken out
 * around it: who blocks or mutes the author or a mentioned account, blocks the author's domain, or
 * is blocked by the author gets nothing; a `hide` filter drops it, a `warn` filter sends that
 * subscriber its own frame with `filtered`; everyone else gets the shared frame exactly once. Those
 * taken out are back for the next event, and each socket's frames stay in id order even when a
 * published frame is still waiting to be written when one of its own goes out.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { SseClient, WsClient, sleep, type Frame } from './client.ts';
import { STREAMING_CHANNEL } from '../../src/streaming/store.ts';
import { streamingHubOf } from '../../src/streaming/hub.ts';

let roost: TestRoost;
const u: Record<string, TestUser> = {};
beforeAll(async () => {
  roost = await startTestRoost();
  for (const name of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'henry', 'ivan']) u[name] = await createTestUser(roost, name);
  const ok = async (p: Promise<{ status: number }>) => expect((await p).status).toBe(200);
  // carol blocks alice; dave mutes alice; henry blocks ivan; grace blocks the domain spam.example.
  await ok(u.carol.api(`/api/v1/accounts/${u.alice.account.id}/block`, { method: 'POST' }));
  await ok(u.dave.api(`/api/v1/accounts/${u.alice.account.id}/mute`, { method: 'POST' }));
  await ok(u.henry.api(`/api/v1/accounts/${u.ivan.account.id}/block`, { method: 'POST' }));
  await ok(u.grace.api('/api/v1/domain_blocks', { method: 'POST', body: { domain: 'spam.example' } }));
  // erin is warned about "twist" on public timelines; frank hides it.
  await ok(u.erin.api('/api/v2/filters', { method: 'POST', body: { title: 'plot', context: ['public'], filter_action: 'warn', keywords_attributes: [{ keyword: 'twist' }] } }));
  await ok(u.frank.api('/api/v2/filters', { method: 'POST', body: { title: 'plot', context: ['public'], filter_action: 'hide', keywords_attributes: [{ keyword: 'twist' }] } }));
  await settled(roost);
}, 60_000);
afterAll(async () => roost?.close());

const post = async (user: TestUser, status: string) => {
  const r = await user.api('/api/v1/statuses', { method: 'POST', body: { status } });
  expect(r.status).toBe(200);
  return r.body.id as string;
};
const statusId = (f: Frame) => (f.event === 'update' ? (JSON.parse(f.payload!) as { id: string }).id : null);
const updatesOf = (c: WsClient, id: string) => c.frames.filter((f) => statusId(f) === id);
const eventIds = (c: WsClient) => c.frames.filter((f) => f.event === 'update').map((f) => BigInt(f.id!));

/** Sockets on `public`, several per account for some, all open before anything is posted. */
async function openAll(perAccount: Record<string, number>): Promise<Record<string, WsClient[]>> {
  const out: Record<string, WsClient[]> = {};
  for (const [name, n] of Object.entries(perAccount)) {
    out[name] = await Promise.all(Array.from({ length: n }, () => WsClient.open(roost, `?access_token=${u[name].token}&stream=public`)));
  }
  await sleep(100);
  return out;
}
const closeAll = (sockets: Record<string, WsClient[]>) => Object.values(sockets).flat().forEach((c) => c.close());

/** Writes status events on `public` in one statement: they commit (and are announced) together. */
async function writeTogether(events: { payload: string; authorId: string; mentionIds?: string[]; authorDomain?: string | null }[]): Promise<string[]> {
  const params: unknown[] = [roost.services.clock.now()];
  const values = events.map((e) => {
    params.push(e.payload, e.authorId, e.mentionIds ?? [], e.authorDomain ?? null);
    const n = params.length;
    return `(array['public'], 'update', $${n - 3}, $${n - 2}::bigint, $${n - 1}::bigint[], $${n}::text, $1)`;
  });
  const rows = await roost.services.db.sql.query<{ id: string }>(
    `with ins as (
       insert into streaming_events (streams, event, payload, author_id, mention_ids, author_domain, created_at) values ${values.join(', ')} returning id)
     select id::text, pg_notify('${STREAMING_CHANNEL}', id::text) from ins order by ins.id`,
    params,
  );
  return rows.map((r) => r.id);
}
/** The payload of the event the status's post wrote (once the outbox consumer wrote it). */
async function payloadOf(id: string): Promise<string> {
  await settled(roost);
  const [row] = await roost.services.db.sql.query<{ payload: string }>(`select payload from streaming_events where event = 'update' and payload::jsonb->>'id' = $1 limit 1`, [id]);
  return row!.payload;
}

describe('fan-out of a status event on a shared stream', () => {
  it('the shared frame once to each socket; nothing to blockers, muters and hiders; its own `filtered` frame to a warned one; all back for the next event', async () => {
    const s = await openAll({ bob: 12, carol: 1, dave: 2, erin: 2, frank: 1, alice: 1 });
    const daveSse = await SseClient.open(roost, '/api/v1/streaming/public', u.dave.token);
    await sleep(100);
    const twist = await post(u.alice, 'the plot twist nobody saw coming');
    const calm = await post(u.bob, 'a calm afternoon');
    for (const c of Object.values(s).flat()) await c.waitFor((f) => statusId(f) === calm);
    await daveSse.waitFor((e) => e.event === 'update' && JSON.parse(e.data!).id === calm);
    await settled(roost);
    await sleep(200);

    const shared = updatesOf(s.bob[0], twist)[0];
    expect(JSON.parse(shared.payload!)).not.toHaveProperty('filtered');
    for (const c of [...s.bob, ...s.alice]) expect(updatesOf(c, twist)).toEqual([shared]);
    for (const c of [...s.carol, ...s.dave, ...s.frank]) expect(updatesOf(c, twist)).toEqual([]);
    expect(daveSse.events.filter((e) => e.event === 'update' && JSON.parse(e.data!).id === twist)).toEqual([]);
    for (const c of s.erin) {
      const [own] = updatesOf(c, twist);
      expect(own).toMatchObject({ stream: ['public'], event: 'update', id: shared.id });
      const { filtered, ...status } = JSON.parse(own.payload!) as { filtered: unknown };
      expect(filtered).toEqual([expect.objectContaining({ keyword_matches: ['twist'], filter: expect.objectContaining({ title: 'plot', filter_action: 'warn' }) })]);
      expect(status).toEqual(JSON.parse(shared.payload!));
      expect(updatesOf(c, twist).length).toBe(1);
    }
    // The calm status: the shared frame, once, to everyone (those left out before are back).
    const calmFrame = updatesOf(s.bob[0], calm)[0];
    for (const c of Object.values(s).flat()) expect(updatesOf(c, calm)).toEqual([calmFrame]);
    closeAll(s);
    daveSse.close();
  });

  it('drops for who blocks a mentioned account, blocks the author\'s domain or is blocked by the author, never for the author', async () => {
    const s = await openAll({ bob: 3, carol: 1, dave: 1, grace: 1, ivan: 1, henry: 1 });
    const calm = await payloadOf(await post(u.bob, 'calm again'));
    // By bob, mentioning alice (carol blocks her, dave mutes her); by henry (who blocks ivan), from
    // spam.example (grace blocks it); by carol, mentioning alice, whom carol blocks.
    const [mention, domain, own] = await writeTogether([
      { payload: calm, authorId: u.bob.account.id, mentionIds: [u.alice.account.id] },
      { payload: calm, authorId: u.henry.account.id, authorDomain: 'spam.example' },
      { payload: calm, authorId: u.carol.account.id, mentionIds: [u.alice.account.id] },
    ]);
    const got = (c: WsClient) => c.frames.filter((f) => [mention, domain, own].includes(f.id!)).map((f) => f.id);
    for (const c of s.bob) expect((await c.waitFor((f) => f.id === own)).length).toBe(1);
    await s.carol[0].waitFor((f) => f.id === own);
    await sleep(200);
    for (const c of [...s.bob, ...s.henry]) expect(got(c)).toEqual([mention, domain, own]);
    expect(got(s.carol[0])).toEqual([domain, own]);
    expect(got(s.dave[0])).toEqual([domain]);
    expect(got(s.grace[0])).toEqual([mention, own]);
    expect(got(s.ivan[0])).toEqual([mention, own]);
    closeAll(s);
  });

  it('keeps each socket\'s frames in id order when events committed together go out in one turn', async () => {
    const s = await openAll({ bob: 6, dave: 2, erin: 2, frank: 1 });
    const twist = await payloadOf(await post(u.alice, 'another twist'));
    const calm = await payloadOf(await post(u.bob, 'still calm'));
    await settled(roost);
    await sleep(200);
    const before = new Map(Object.values(s).flat().map((c) => [c, c.frames.length]));
    // The shared frame of the first is still queued in the topic when the second leaves dave,
    // erin and frank out (erin gets her own frame at once).
    const ids = await writeTogether([
      { payload: calm, authorId: u.bob.account.id },
      { payload: twist, authorId: u.alice.account.id },
      { payload: calm, authorId: u.bob.account.id },
      { payload: twist, authorId: u.alice.account.id },
      { payload: calm, authorId: u.bob.account.id },
    ]);
    for (const c of Object.values(s).flat()) await c.waitFor((f) => f.id === ids[4]);
    await sleep(200);
    const idsOf = (c: WsClient) => c.frames.slice(before.get(c)).map((f) => f.id);
    for (const c of s.bob) expect(idsOf(c)).toEqual(ids);
    for (const c of s.erin) {
      expect(idsOf(c)).toEqual(ids);
      const filtered = c.frames.slice(before.get(c)).map((f) => 'filtered' in JSON.parse(f.payload!));
      expect(filtered).toEqual([false, true, false, true, false]);
    }
    for (const c of [...s.dave, ...s.frank]) expect(idsOf(c)).toEqual([ids[0], ids[2], ids[4]]);
    for (const c of Object.values(s).flat()) expect(eventIds(c)).toEqual([...eventIds(c)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    closeAll(s);
  });

  it('a socket resuming on a shared stream gets what it missed, then the events that went live meanwhile, each once, in id order, screened as anyone\'s', async () => {
    const s = await openAll({ bob: 4 });
    const twist = await payloadOf(await post(u.alice, 'a twist while away'));
    const calm = await payloadOf(await post(u.bob, 'calm while away'));
    await settled(roost);
    const [{ last }] = await roost.services.db.sql.query<{ last: string }>(`select max(id)::text as last from streaming_events`);
    // The ids cross a power of ten (…, 999, 1000, …): they must go out in numeric order, not as text.
    const power = 10 ** String(Number(last) + 50).length;
    await roost.services.db.sql.query(`select setval('streaming_events_id_seq', $1::bigint)`, [power - 50]);
    // Enough missed events that the replay (a block/mute check each) is still going when the live ones come.
    const missed = await writeTogether(Array.from({ length: 150 }, () => ({ payload: calm, authorId: u.bob.account.id })));
    const erin = await WsClient.open(roost, `?access_token=${u.erin.token}&stream=public&last_event_id=${last}`);
    const dave = await WsClient.open(roost, `?access_token=${u.dave.token}&stream=public&last_event_id=${last}`);
    const live = await writeTogether([
      { payload: calm, authorId: u.bob.account.id },
      { payload: twist, authorId: u.alice.account.id },
      { payload: calm, authorId: u.bob.account.id },
    ]);
    await erin.waitFor((f) => f.id === live[2]);
    await dave.waitFor((f) => f.id === live[2]);
    for (const c of s.bob) await c.waitFor((f) => f.id === live[2]);
    await sleep(200);
    expect(erin.frames.map((f) => f.id)).toEqual([...missed, ...live]);
    expect(erin.frames.map((f) => 'filtered' in JSON.parse(f.payload!))).toEqual([...missed.map(() => false), false, true, false]);
    expect(dave.frames.map((f) => f.id)).toEqual([...missed, live[0], live[2]]);
    for (const c of s.bob) expect(c.frames.filter((f) => missed.includes(f.id!) || live.includes(f.id!)).map((f) => f.id)).toEqual([...missed, ...live]);
    closeAll(s);
    erin.close();
    dave.close();
  });

  it('a socket that resumes while an event is on its way gets it once, live, even when its replay ends first', async () => {
    const s = await openAll({ bob: 2 });
    const calm = await payloadOf(await post(u.bob, 'calm on the way'));
    const [{ last }] = await roost.services.db.sql.query<{ last: string }>(`select max(id)::text as last from streaming_events`);
    // The hub's screening of the next event (the block/mute query) waits until released, so its
    // delivery is under way while erin connects, resumes and finishes her (empty) replay. The real
    // hub, database and sockets; only the moment is held.
    const hub = streamingHubOf(roost.services)!;
    const screen = hub.screen.bind(hub);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let holding = true;
    hub.screen = async (row, groups) => {
      if (holding && BigInt(row.id) > BigInt(last)) {
        holding = false;
        await held;
      }
      return screen(row, groups);
    };
    try {
      const [onTheWay] = await writeTogether([{ payload: calm, authorId: u.bob.account.id }]);
      for (let i = 0; i < 100 && holding; i++) await sleep(10);
      expect(holding).toBe(false); // its delivery has begun
      const erin = await WsClient.open(roost, `?access_token=${u.erin.token}&stream=public&last_event_id=${last}`);
      await sleep(300); // her replay has ended
      release();
      await erin.waitFor((f) => f.id === onTheWay);
      for (const c of s.bob) await c.waitFor((f) => f.id === onTheWay);
      const [after] = await writeTogether([{ payload: calm, authorId: u.bob.account.id }]);
      await erin.waitFor((f) => f.id === after);
      await sleep(200);
      expect(erin.frames.map((f) => f.id)).toEqual([onTheWay, after]);
      for (const c of s.bob) expect(c.frames.filter((f) => f.id === onTheWay || f.id === after).map((f) => f.id)).toEqual([onTheWay, after]);
      erin.close();
    } finally {
      hub.screen = screen;
      release();
      closeAll(s);
    }
  });
});
