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
 * Cards: a Note whose only links are its mentions and hashtags queues no card job (its HTML is
 * read when it is stored, as the job would read it); one with a link gets its card, from a local
 * web page standing in for the outside world.
 *
 * Through the real inbox of a real Roost, from a fake remote server signing with its own key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { capturedStatements, eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser } from '../helpers/auth.ts';
import { AS_CONTEXT, startFakePeer, type FakePeer } from '../security/fake-peer.ts';
import { federateConsumer } from '../../src/effects/federate.ts';
import { upcast, type StoredEvent } from '../../src/events/catalogue.ts';
import type { ConsumerRecord } from '../../src/effects/registry.ts';
import type { OutboxRecord } from '../../src/events/outbox.ts';
import { FETCH_CARD_JOB } from '../../src/services/preview-cards.ts';

const PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';

let roost: TestRoost;
let peer: FakePeer;
let site: http.Server;
let page: string;

beforeAll(async () => {
  [roost, peer] = await Promise.all([startTestRoost(), startFakePeer()]);
  await createTestUser(roost, 'alice');
  site = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<html><head><meta property="og:title" content="Linked from afar"></head></html>');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  page = `http://127.0.0.1:${(site.address() as AddressInfo).port}/article`;
}, 120_000);
afterAll(async () => {
  await Promise.all([roost?.close(), peer?.close(), new Promise((resolve) => site?.close(resolve))]);
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
    console.log(`an inbound Create(Note): ${runs.map((r) => r.length).join(', ')} statements (budget ${BUDGET}, before ${BEFORE})\n  ${first!.join('\n  ')}`);
    expect(runs.map((r) => r.length)).toEqual([first!.length, first!.length, first!.length]);
    expect(first!.length).toBeLessThanOrEqual(BUDGET);
  }, 60_000);
});

/**
 * Before (2026-11-27): the federation effect loaded the whole status only to find it remote (5
 * statements), the home, list and tag feeds were three statements, the streaming effect read the
 * feeds' keys in a statement of its own, and every Note with a link (its mentions and hashtags
 * are links) queued a card job that read the status again, and the mention's notification read its
 * account apart from its status's author. Now: remote facts say `local: false`, the feeds are one
 * statement, the keys come with the status's facts, a card job is queued only for a link that may
 * have a card, and a notification's accounts are read with its statuses' authors.
 */
const BEFORE = 28;
const BUDGET = 18;

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

    // The federate consumer as the event job runs it (the fact upcast first), without the others.
    const federate = federateConsumer(roost.services, roost.federation);
    const dispatch = (r: OutboxRecord) => federate({ ...r, event: upcast(r.event as unknown as StoredEvent, r.actorId) } as ConsumerRecord<'federate'>);
    const db = roost.services.db;
    const jobs = async () => Number((await db.sql.query<{ n: string }>(`select count(*) as n from jobs`))[0]!.n);
    const record = (f: (typeof facts)[number]): OutboxRecord => ({
      id: f.id, actorKind: 'status', actorId: id, actorVersion: null, origin: 'federation', event: f.payload as unknown as OutboxRecord['event'],
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

describe("a remote Note's card", () => {
  it('is not looked for when its only links are mentions and hashtags, and is made for a link', async () => {
    const alice = roost.at('/users/alice');
    const cardJobs: string[] = [];
    const jobsSeen = async (fn: () => Promise<unknown>) => {
      // Every card job queued meanwhile, seen as the queue writes it (the worker may take it at once).
      const sql = roost.services.db.sql;
      const original = sql.transaction.bind(sql);
      sql.transaction = ((work: Parameters<typeof original>[0]) =>
        original((tx) => {
          const query = tx.query.bind(tx);
          tx.query = ((text: string, params?: readonly unknown[]) => {
            if (/insert into jobs/i.test(text) && params?.includes(FETCH_CARD_JOB)) cardJobs.push(text);
            return query(text, params as never);
          }) as typeof tx.query;
          return work(tx);
        })) as typeof original;
      try {
        await fn();
      } finally {
        sql.transaction = original;
      }
    };
    const create = (uri: string, content: string, tag: unknown[]) =>
      deliver({ id: `${uri}/activity`, type: 'Create', to: [PUBLIC, alice], object: { ...note(uri, content), tag } });
    const idOf = (uri: string) =>
      eventually(async () => (await roost.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [uri]))[0]?.id, 20_000, uri);

    const plain = `${peer.base}/statuses/cardless`;
    await jobsSeen(async () => {
      await create(plain,
        `<p><span class="h-card"><a href="${alice}" class="u-url mention">@alice</a></span> see ` +
          `<a href="${peer.base}/tags/cats" class="mention hashtag" rel="tag">#<span>cats</span></a></p>`,
        [{ type: 'Mention', href: alice }, { type: 'Hashtag', href: `${peer.base}/tags/cats`, name: '#cats' }]);
      await idOf(plain);
      await settled(roost);
    });
    expect(cardJobs).toEqual([]);

    const linked = `${peer.base}/statuses/linked`;
    await jobsSeen(async () => {
      await create(linked, `<p>read <a href="${page}" rel="nofollow">this</a></p>`, []);
      await idOf(linked);
      await settled(roost);
    });
    expect(cardJobs).toHaveLength(1);
    const id = await idOf(linked);
    const card = await eventually(
      async () => (await roost.services.db.sql.query<{ title: string; url: string }>(
        `select pc.title, pc.url from preview_cards_statuses pcs join preview_cards pc on pc.id = pcs.preview_card_id where pcs.status_id = $1`, [id]))[0],
      20_000,
      'the card',
    );
    expect(card).toEqual({ title: 'Linked from afar', url: page });
  }, 60_000);
});
