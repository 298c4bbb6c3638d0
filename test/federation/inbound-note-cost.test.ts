/**
 * What an inbound Note costs once accepted.
 *
 * Statements: from the POST to the last effect, the statements sent through the instance's
 * plain-SQL client outside a transaction (capturedStatements: the inbox's checks, Fedify's
 * key-value store, then the effects — feeds, streaming, notifications, federation, the preview
 * card's job); the job queue's own claim/ack/enqueue statements, the status's own transaction (its
 * statements go through the transaction's client) and MikroORM's are not counted. Three public
 * Notes mentioning a local account; each must cost the same, within the budget below.
 *
 * Facts: a remote status's facts say it is remote (`local: false` on status.created,
 * status.updated and status.deleted), and the federation effect, which federates only local
 * statuses, then sends no SQL for them: it used to load the whole status (the row, its mentions,
 * tags, media and poll: five statements per inbound Note) only to find it was not ours. The
 * dispatcher is the one the job worker runs, without its surface consumers (feeds, streaming,
 * notifications), whose work is theirs.
 *
 * Through the real inbox of a real Roost, from a fake remote server signing with its own key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedStatements, eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser } from '../helpers/auth.ts';
import { AS_CONTEXT, startFakePeer, type FakePeer } from '../security/fake-peer.ts';
import { createEffectDispatcher } from '../../src/effects/dispatch.ts';
import type { OutboxRecord } from '../../src/effects/outbox.ts';

const PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';

let roost: TestRoost;
let peer: FakePeer;

beforeAll(async () => {
  [roost, peer] = await Promise.all([startTestRoost(), startFakePeer()]);
  await createTestUser(roost, 'alice');
}, 120_000);
afterAll(async () => {
  await Promise.all([roost?.close(), peer?.close()]);
});

async function deliverNote(n: number): Promise<void> {
  const uri = `${peer.base}/statuses/cost-${n}`;
  const alice = roost.at('/users/alice');
  await deliver({
    id: `${uri}/activity`, type: 'Create', to: [PUBLIC, alice],
    object: {
      ...note(uri, `<p><span class="h-card"><a href="${alice}" class="u-url mention">@alice</a></span> note ${n}</p>`),
      tag: [{ type: 'Mention', href: alice, name: `@alice@${new URL(alice).host}` }],
    },
  });
  await settled(roost);
}

describe('an inbound Create(Note)', () => {
  it('costs the same fixed number of statements each time', async () => {
    await deliverNote(0); // the peer's actor and key are fetched and stored on first contact
    const runs: string[][] = [];
    for (let n = 1; n <= 3; n++) runs.push(await capturedStatements(roost, () => deliverNote(n), 50));
    const [first] = runs;
    const stored = await roost.services.db.sql.query(`select 1 from statuses where uri like $1`, [`${peer.base}/statuses/cost-%`]);
    expect(stored).toHaveLength(4);
    const kind = roost.services.db.kind;
    console.log(`an inbound Create(Note) on ${kind}: ${runs.map((r) => r.length).join(', ')} statements (budget ${BUDGET[kind]}, before ${BEFORE[kind]})\n  ${first!.join('\n  ')}`);
    expect(runs.map((r) => r.length)).toEqual([first!.length, first!.length, first!.length]);
    expect(first!.length).toBeLessThanOrEqual(BUDGET[kind]);
  }, 60_000);
});

/**
 * Before (2026-11-27): the federation effect loaded the whole status only to find it remote (5
 * statements), the home, list and tag feeds were three statements, and the streaming effect read
 * the feeds' keys in a statement of its own. Now: remote facts say `local: false`, the feeds are one
 * statement, the keys come with the status's facts.
 */
const BEFORE = { pglite: 28, postgres: 28 } as const;
const BUDGET = { pglite: 20, postgres: 20 } as const;

const note = (uri: string, content: string) => ({
  id: uri, type: 'Note', attributedTo: peer.actorId, to: [PUBLIC, roost.at('/users/alice')], content, published: '2026-11-01T00:00:00Z',
});

async function deliver(activity: Record<string, unknown>): Promise<void> {
  const res = await peer.deliver(roost.at('/inbox'), { '@context': AS_CONTEXT, actor: peer.actorId, to: [PUBLIC], ...activity });
  expect(res.status).toBe(202);
}

/** The status's facts as recorded: the type, the origin, the payload. */
async function factsOf(statusId: string) {
  const rows = await roost.services.db.sql.query<{ id: string; type: string; origin: string; payload: Record<string, unknown> }>(
    `select id::text, type, origin, payload from outbox_events where actor_kind = 'status' and actor_id = $1 order by id`,
    [statusId],
  );
  return rows.map((r) => ({ ...r, payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload }));
}

describe("a remote status's facts", () => {
  it('say local: false on create, update and delete, and the federation effect sends no SQL for them', async () => {
    const uri = `${peer.base}/statuses/facts-1`;
    await deliver({ id: `${uri}/activity`, type: 'Create', object: note(uri, '<p>first</p>') });
    const id = await eventually(
      async () => (await roost.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [uri]))[0]?.id,
      20_000,
      'the Note',
    );
    await settled(roost);
    await deliver({ id: `${uri}#updates/1`, type: 'Update', object: { ...note(uri, '<p>second</p>'), updated: '2026-11-02T00:00:00Z' } });
    await settled(roost);
    await deliver({ id: `${uri}#delete`, type: 'Delete', object: { id: uri, type: 'Tombstone' } });
    await eventually(async () => (await factsOf(id)).some((f) => f.type === 'status.deleted'), 20_000, 'the Delete');
    await settled(roost);

    const facts = await factsOf(id);
    expect(facts.map((f) => [f.type, f.origin, f.payload.local])).toEqual([
      ['status.created', 'federation', false],
      ['status.updated', 'federation', false],
      ['status.deleted', 'federation', false],
    ]);

    // The dispatcher as the job worker runs it, without the surface consumers.
    const dispatch = createEffectDispatcher(roost.services, roost.federation);
    const db = roost.services.db;
    const jobs = async () => Number((await db.sql.query<{ n: string }>(`select count(*) as n from jobs`))[0]!.n);
    const record = (f: (typeof facts)[number]): OutboxRecord => ({
      id: f.id, actorKind: 'status', actorId: id, actorVersion: null, origin: 'federation', event: f.payload as OutboxRecord['event'],
    });
    const jobsBefore = await jobs();
    for (const f of facts) {
      const before = db.statements();
      await dispatch(record(f));
      expect([f.type, db.statements() - before]).toEqual([f.type, 0]);
    }
    // A fact recorded before the flag existed is loaded and checked as before: still nothing sent,
    // at the price of the load (the row, its mentions, tags, media and poll).
    const { local: _local, ...unflagged } = facts[0]!.payload;
    const before = db.statements();
    await dispatch(record({ ...facts[0]!, payload: unflagged }));
    expect(db.statements() - before).toBeGreaterThanOrEqual(5);
    expect(await jobs()).toBe(jobsBefore);
  }, 60_000);
});
