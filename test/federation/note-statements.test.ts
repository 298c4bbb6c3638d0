/**
 * What an inbound Create(Note) costs in SQL, from the POST to the last effect: the statements sent
 * through the instance's plain-SQL client outside a transaction (capturedStatements: the inbox's
 * checks, Fedify's key-value store, then the effects — feeds, streaming, notifications,
 * federation, the preview card's job); the job queue's own claim/ack/enqueue statements, the
 * status's own transaction (its statements go through the transaction's client) and MikroORM's
 * are not counted. Three public Notes mentioning a local account, from a fake remote server
 * signing with its own key; each must cost the same, within the budget below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedStatements, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser } from '../helpers/auth.ts';
import { AS_CONTEXT, startFakePeer, type FakePeer } from '../security/fake-peer.ts';

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
  const res = await peer.deliver(roost.at('/inbox'), {
    '@context': AS_CONTEXT, id: `${uri}/activity`, type: 'Create', actor: peer.actorId, to: [PUBLIC, alice],
    object: {
      id: uri, type: 'Note', attributedTo: peer.actorId, to: [PUBLIC, alice], published: '2026-11-01T00:00:00Z',
      content: `<p><span class="h-card"><a href="${alice}" class="u-url mention">@alice</a></span> note ${n}</p>`,
      tag: [{ type: 'Mention', href: alice, name: `@alice@${new URL(alice).host}` }],
    },
  });
  expect(res.status).toBe(202);
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
