/**
 * Polls across two real instances (real HTTP, real signatures), A on a clock the test drives:
 * A's poll reaches B as a Question with its poll; B's votes (one Create(Note) per choice) count
 * once on A and B sees the tallies converge after A's Update(Question); double votes, duplicate
 * deliveries and votes on an ended poll are refused; the Question is served at its URI; a Delete
 * takes the poll with it; and the 3-minute Update throttle, counted at a fake remote inbox.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { Collection, Create, Mention, Note, PUBLIC_COLLECTION, Question, Update, type Activity } from '@fedify/vocab';
import { Temporal } from '@js-temporal/polyfill';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { startSinks, type Sinks } from '../helpers/sink.ts';
import { followAccount } from '../../src/services/follows.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { recordRemoteVote } from '../../src/services/polls.ts';
import { createManualClock } from '../../src/lib/clock.ts';
import type { Account } from '../../src/db/entities/index.ts';

const SEC = 1000;
const MIN = 60 * SEC;
// A's clock starts at the wall clock (signatures are checked against it) and is driven from there.
const clock = createManualClock(new Date(Math.floor(Date.now() / 1000) * 1000));
let a: TestRoost;
let b: TestRoost;
let alice: TestUser; // on A, asks
let bob: TestUser; // on B, follows alice
let carol: TestUser; // on B, follows nobody
let bobOnA: Account;
let sinks: Sinks;

const AP = { accept: 'application/activity+json' };

beforeAll(async () => {
  [a, b, sinks] = await Promise.all([startTestRoost({}, { clock }), startTestRoost(), startSinks(2)]);
  [alice, bob, carol] = await Promise.all([createTestUser(a, 'alice'), createTestUser(b, 'bob'), createTestUser(b, 'carol')]);
  const aliceOnB = (await lookupRemoteAccount(b.services, b.federation, a.at('/users/alice')))!;
  bobOnA = (await lookupRemoteAccount(a.services, a.federation, b.at('/users/bob')))!;
  await lookupRemoteAccount(a.services, a.federation, b.at('/users/carol'));
  const follow = await followAccount(b.services, bob.account.id, aliceOnB.id);
  await eventually(async () => (await b.services.db.sql.query(`select 1 from follows where id = $1 and state = 'accepted'`, [follow.id])).length > 0, 20_000, 'the Accept');
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), sinks?.close()]);
});

async function ask(options: string[], opts: { multiple?: boolean; expiresIn?: number; status?: string } = {}) {
  const r = await alice.api('/api/v1/statuses', {
    method: 'POST',
    body: { status: opts.status ?? 'Which one? #polls', poll: { options, expires_in: opts.expiresIn ?? 3600, multiple: opts.multiple ?? false } },
  });
  expect(r.status).toBe(200);
  return r.body as { id: string; uri: string; poll: { id: string; expires_at: string } };
}

interface PollRow {
  id: string;
  local: boolean;
  options: string[];
  cached_tallies: number[];
  votes_count: number;
  voters_count: number;
  multiple: boolean;
  expires_at: string | null;
  state: string;
}
async function pollOf(r: TestRoost, statusUri: string): Promise<PollRow | undefined> {
  const [row] = await r.services.db.sql.query<PollRow>(
    `select p.id::text, p.local, p.options, p.cached_tallies, p.votes_count, p.voters_count, p.multiple, p.expires_at, p.state
       from polls p join statuses s on s.id = p.status_id where s.uri = $1`,
    [statusUri],
  );
  return row;
}
const pollArrived = (r: TestRoost, uri: string) => eventually(() => pollOf(r, uri), 20_000, `the poll of ${uri}`);
const votesOn = (r: TestRoost, pollId: string) =>
  r.services.db.sql.query<{ voter: string; account_id: string | null; choices: number[] }>(
    `select voter, account_id::text, choices from poll_votes where poll_id = $1 order by voter`,
    [pollId],
  );
const tallies = async (r: TestRoost, uri: string) => (await pollOf(r, uri))?.cached_tallies.join(',');

/** Sends activities from B's bob straight to alice's inbox, in order, and waits until A is idle. */
async function sendFromBob(...activities: Activity[]) {
  const ctx = b.federation.createContext(new URL(b.url), undefined);
  const to = { id: new URL(a.at('/users/alice')), inboxId: new URL(a.at('/users/alice/inbox')) };
  for (const activity of activities) await ctx.sendActivity({ identifier: 'bob' }, to, activity);
  await settled(a, b);
}
/** A vote Note of bob's, as Mastodon sends one. */
function voteOf(id: string, name: string, questionUri: string): Create {
  const to = new URL(a.at('/users/alice'));
  const note = new Note({ id: new URL(b.at(`/users/bob#votes/${id}`)), name, attribution: new URL(b.at('/users/bob')), replyTarget: new URL(questionUri), to });
  return new Create({ id: new URL(`${note.id!.href}/activity`), actor: new URL(b.at('/users/bob')), to, object: note });
}

describe('polls between two instances', () => {
  let q: Awaited<ReturnType<typeof ask>>;

  it('a poll reaches B as a Question with its options, tallies, kind and end, and is served as a Question', async () => {
    q = await ask(['tea', 'coffee'], { status: `Tea or coffee, @carol@${b.config.domain}? #polls` });
    const onB = await pollArrived(b, q.uri);
    expect(onB).toMatchObject({
      local: false, options: ['tea', 'coffee'], cached_tallies: [0, 0], votes_count: 0, voters_count: 0, multiple: false, state: 'open',
    });
    expect(new Date(onB.expires_at!).toISOString()).toBe(q.poll.expires_at);
    // Through B's API, as bob sees it.
    const [s] = await b.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [q.uri]);
    const seen = await bob.api(`/api/v1/statuses/${s!.id}`);
    expect(seen.body.poll).toEqual({
      id: onB.id, expires_at: q.poll.expires_at, expired: false, multiple: false, votes_count: 0, voters_count: 0,
      options: [{ title: 'tea', votes_count: 0 }, { title: 'coffee', votes_count: 0 }], emojis: [], voted: false, own_votes: [],
    });

    const res = await fetch(q.uri, { headers: AP });
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Record<string, unknown>;
    delete doc['@context'];
    expect(doc).toEqual({
      id: q.uri,
      type: 'Question',
      atomUri: q.uri,
      conversation: expect.stringMatching(/^tag:.*:objectType=Conversation$/),
      context: expect.stringMatching(new RegExp(`^${a.url}/contexts/\\d+$`)),
      attributedTo: a.at('/users/alice'),
      to: 'as:Public',
      cc: [a.at('/users/alice/followers'), b.at('/users/carol')],
      content: expect.stringContaining('Tea or coffee'),
      published: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      url: a.at(`/@alice/${q.id}`),
      sensitive: false,
      tag: [
        { type: 'Mention', href: b.at('/users/carol'), name: `@carol@${b.config.domain}` },
        { type: 'Hashtag', href: a.at('/tags/polls'), name: '#polls' },
      ],
      oneOf: [
        { type: 'Note', name: 'tea', replies: { type: 'Collection', totalItems: 0 } },
        { type: 'Note', name: 'coffee', replies: { type: 'Collection', totalItems: 0 } },
      ],
      endTime: q.poll.expires_at.replace('.000Z', 'Z'),
      votersCount: 0,
      // The collections a served Note names too (federation/collections.ts).
      replies: {
        id: `${q.uri}/replies`,
        type: 'Collection',
        totalItems: 0,
        first: { id: `${q.uri}/replies?cursor=first`, type: 'CollectionPage', partOf: `${q.uri}/replies` },
      },
      likes: { id: `${q.uri}/likes`, type: 'Collection', totalItems: 0 },
      shares: { id: `${q.uri}/shares`, type: 'Collection', totalItems: 0 },
      interactionPolicy: { canQuote: { automaticApproval: 'as:Public' } },
    });
    // Carol (mentioned, not a follower) has it too.
    const [onBForCarol] = await b.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [q.uri]);
    expect((await carol.api(`/api/v1/statuses/${onBForCarol!.id}`)).status).toBe(200);
  });

  it('a vote from B counts on A once, and B sees the tallies converge after the Update', async () => {
    const onB = (await pollOf(b, q.uri))!;
    // Another vote on A first: B learns it only from A's Update.
    const dora = await createTestUser(a, 'dora');
    expect((await dora.api(`/api/v1/polls/${q.poll.id}/votes`, { method: 'POST', body: { choices: ['0'] } })).status).toBe(200);
    const voted = await bob.api(`/api/v1/polls/${onB.id}/votes`, { method: 'POST', body: { choices: ['1'] } });
    expect(voted.status).toBe(200);
    expect(voted.body).toMatchObject({ voted: true, own_votes: [1] });
    await eventually(async () => (await tallies(a, q.uri)) === '1,1', 20_000, "bob's vote on A");
    expect(await votesOn(a, q.poll.id)).toEqual(
      [
        { voter: bobOnA.uri, account_id: bobOnA.id, choices: [1] },
        { voter: dora.account.id, account_id: dora.account.id, choices: [0] },
      ].sort((x, y) => x.voter.localeCompare(y.voter)),
    );
    expect((await pollOf(a, q.uri))!.voters_count).toBe(2);
    // dora's vote sent A's first Update at once; bob's waits for the 3 minutes to pass. Then A's
    // Update(Question) brings B the counts as A has them (dora's vote included).
    await settled(a, b);
    clock.advance(3 * MIN);
    await eventually(async () => (await tallies(b, q.uri)) === '1,1', 20_000, 'the tallies on B');
    await settled(a, b);
    expect(await pollOf(b, q.uri)).toMatchObject({ cached_tallies: [1, 1], votes_count: 2, voters_count: 2, state: 'open' });
    expect((await bob.api(`/api/v1/polls/${onB.id}`)).body).toMatchObject({
      votes_count: 2, voters_count: 2, voted: true, own_votes: [1], options: [{ title: 'tea', votes_count: 1 }, { title: 'coffee', votes_count: 1 }],
    });
    // bob's vote was never stored as a status on A.
    expect(await a.services.db.sql.query(`select 1 from statuses where account_id = $1 and in_reply_to_id = $2`, [bobOnA.id, q.id])).toEqual([]);
  });

  it('a double vote is refused on B; a second vote Note and a duplicate delivery are refused on A', async () => {
    const onB = (await pollOf(b, q.uri))!;
    const again = await bob.api(`/api/v1/polls/${onB.id}/votes`, { method: 'POST', body: { choices: ['0'] } });
    expect([again.status, again.body.error]).toEqual([422, 'Validation failed: You have already voted on this poll']);
    // Straight to A: the same Note again, and a Note for the other option.
    await sendFromBob(voteOf('dup', 'coffee', q.uri), voteOf('dup', 'coffee', q.uri), voteOf('other', 'tea', q.uri));
    expect(await pollOf(a, q.uri)).toMatchObject({ cached_tallies: [1, 1], votes_count: 2, voters_count: 2 });
    expect((await votesOn(a, q.poll.id)).find((v) => v.voter === bobOnA.uri)).toEqual({ voter: bobOnA.uri, account_id: bobOnA.id, choices: [1] });
  });

  it('a multiple-choice poll: one Note per choice from B, one voter on A, converging on B', async () => {
    const m = await ask(['red', 'green', 'blue'], { multiple: true });
    const onB = await pollArrived(b, m.uri);
    expect(onB).toMatchObject({ multiple: true, options: ['red', 'green', 'blue'] });
    const voted = await bob.api(`/api/v1/polls/${onB.id}/votes`, { method: 'POST', body: { choices: ['0', '2'] } });
    expect(voted.status).toBe(200);
    await eventually(async () => (await tallies(a, m.uri)) === '1,0,1', 20_000, 'both Notes on A');
    expect(await pollOf(a, m.uri)).toMatchObject({ votes_count: 2, voters_count: 1 });
    expect(await votesOn(a, m.poll.id)).toEqual([{ voter: bobOnA.uri, account_id: bobOnA.id, choices: [0, 2] }]);
    // The first Note's Update went at once, the second's after 3 minutes.
    await settled(a, b);
    clock.advance(3 * MIN);
    await eventually(async () => (await tallies(b, m.uri)) === '1,0,1', 20_000, 'the tallies on B');
    expect(await pollOf(b, m.uri)).toMatchObject({ cached_tallies: [1, 0, 1], votes_count: 2, voters_count: 1 });
    // A later vote for another option is taken on B (Mastodon) and reaches A as one more Note;
    // a choice made already is refused.
    const more = await bob.api(`/api/v1/polls/${onB.id}/votes`, { method: 'POST', body: { choices: ['1'] } });
    expect([more.status, more.body.own_votes]).toEqual([200, [0, 1, 2]]);
    const same = await bob.api(`/api/v1/polls/${onB.id}/votes`, { method: 'POST', body: { choices: ['1'] } });
    expect([same.status, same.body.error]).toEqual([422, 'Validation failed: You have already voted on this poll']);
    await eventually(async () => (await tallies(a, m.uri)) === '1,1,1', 20_000, 'the third Note on A');
    expect(await pollOf(a, m.uri)).toMatchObject({ votes_count: 3, voters_count: 1 });
    expect(await votesOn(a, m.poll.id)).toEqual([{ voter: bobOnA.uri, account_id: bobOnA.id, choices: [0, 1, 2] }]);
    await settled(a, b);
    clock.advance(3 * MIN);
    await eventually(async () => (await tallies(b, m.uri)) === '1,1,1', 20_000, 'the tallies on B again');
    // The Question says anyOf.
    const doc = (await (await fetch(m.uri, { headers: AP })).json()) as Record<string, unknown>;
    expect([doc.type, (doc.anyOf as { name: string; replies: { totalItems: number } }[]).map((o) => [o.name, o.replies.totalItems]), 'oneOf' in doc]).toEqual([
      'Question', [['red', 1], ['green', 1], ['blue', 1]], false,
    ]);
  });

  it('a vote on an ended poll is refused on A; the close reaches B', async () => {
    const e = await ask(['now', 'later'], { expiresIn: 300 });
    await pollArrived(b, e.uri);
    await settled(a, b);
    clock.advance(301 * SEC);
    await eventually(async () => (await pollOf(a, e.uri))?.state === 'closed', 20_000, 'the close on A');
    await sendFromBob(voteOf('late', 'now', e.uri));
    expect(await pollOf(a, e.uri)).toMatchObject({ cached_tallies: [0, 0], votes_count: 0, voters_count: 0, state: 'closed' });
    expect(await votesOn(a, e.poll.id)).toEqual([]);
    // The final Update carries `closed`: B's copy is closed as well.
    await eventually(async () => (await pollOf(b, e.uri))?.state === 'closed', 20_000, 'the close on B');
    const doc = (await (await fetch(e.uri, { headers: AP })).json()) as Record<string, unknown>;
    expect(typeof doc.closed).toBe('string');
  });

  it('a poll hiding its totals is served without counts until its end', async () => {
    const r = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'Secret ballot', poll: { options: ['aye', 'nay'], expires_in: 3600, hide_totals: true } } });
    expect(r.status).toBe(200);
    const dora = await createTestUser(a, 'dora2');
    expect((await dora.api(`/api/v1/polls/${r.body.poll.id}/votes`, { method: 'POST', body: { choices: ['0'] } })).status).toBe(200);
    const doc = (await (await fetch(r.body.uri, { headers: AP })).json()) as Record<string, unknown>;
    expect([doc.type, doc.oneOf, doc.votersCount]).toEqual([
      'Question', [{ type: 'Note', name: 'aye', replies: { type: 'Collection' } }, { type: 'Note', name: 'nay', replies: { type: 'Collection' } }], 1,
    ]);
    expect(await pollArrived(b, r.body.uri)).toMatchObject({ options: ['aye', 'nay'], cached_tallies: [0, 0] });
  });

  it('a Delete removes the status and its poll on B', async () => {
    const d = await ask(['keep', 'drop']);
    const onB = await pollArrived(b, d.uri);
    expect((await alice.api(`/api/v1/statuses/${d.id}`, { method: 'DELETE' })).status).toBe(200);
    await eventually(async () => (await pollOf(b, d.uri))?.state === 'deleted', 20_000, 'the Delete on B');
    expect((await bob.api(`/api/v1/polls/${onB.id}`)).status).toBe(404);
    const [s] = await b.services.db.sql.query<{ deleted: boolean }>(`select deleted_at is not null as deleted from statuses where uri = $1`, [d.uri]);
    expect(s).toEqual({ deleted: true });
  });
});

describe('a remote Question arriving at A (as a Mastodon server sends it)', () => {
  it('Create(Question) stores the poll with its tallies; Update(Question) applies tallies, and an edit may replace the poll', async () => {
    const uri = b.at('/users/bob/statuses/q1');
    const at = (ms: number) => Temporal.Instant.fromEpochMilliseconds(Math.floor(ms / 1000) * 1000) as unknown as globalThis.Temporal.Instant;
    const published = Date.now() - 60_000;
    const endTime = Date.now() + 3600_000;
    const question = (o: { options: [string, number][]; multiple?: boolean; voters: number; updated?: number }) => {
      const options = o.options.map(([name, n]) => new Note({ name, replies: new Collection({ totalItems: n }) }));
      return new Question({
        id: new URL(uri),
        attribution: new URL(b.at('/users/bob')),
        to: PUBLIC_COLLECTION,
        cc: new URL(a.at('/users/alice')),
        content: '<p>Which, @alice?</p>',
        tags: [new Mention({ href: new URL(a.at('/users/alice')), name: `@alice@${a.config.domain}` })],
        published: at(published),
        ...(o.updated ? { updated: at(o.updated) } : {}),
        ...(o.multiple ? { inclusiveOptions: options } : { exclusiveOptions: options }),
        endTime: at(endTime),
        voters: o.voters,
      });
    };
    const actor = new URL(b.at('/users/bob'));
    await sendFromBob(new Create({ id: new URL(`${uri}/activity`), actor, to: PUBLIC_COLLECTION, object: question({ options: [['x', 2], ['y', 1]], voters: 3 }) }));
    const stored = (await pollOf(a, uri))!;
    expect(stored).toMatchObject({ local: false, options: ['x', 'y'], cached_tallies: [2, 1], votes_count: 3, voters_count: 3, multiple: false, state: 'open' });
    expect(new Date(stored.expires_at!).getTime()).toBe(Math.floor(endTime / 1000) * 1000);
    const [s] = await a.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [uri]);
    expect((await alice.api(`/api/v1/statuses/${s!.id}`)).body.poll).toMatchObject({
      id: stored.id, multiple: false, votes_count: 3, voters_count: 3, options: [{ title: 'x', votes_count: 2 }, { title: 'y', votes_count: 1 }],
    });

    // A tally Update: applied. One with other options that is not an edit: refused.
    await sendFromBob(
      new Update({ id: new URL(`${uri}#updates/1`), actor, to: PUBLIC_COLLECTION, object: question({ options: [['x', 5], ['y', 1]], voters: 6 }) }),
      new Update({ id: new URL(`${uri}#updates/2`), actor, to: PUBLIC_COLLECTION, object: question({ options: [['p', 9], ['q', 9]], voters: 18 }) }),
    );
    expect(await pollOf(a, uri)).toMatchObject({ id: stored.id, options: ['x', 'y'], cached_tallies: [5, 1], voters_count: 6 });
    // An edit that changes the poll: a new poll, as stated (votes reset, as Mastodon).
    await sendFromBob(new Update({
      id: new URL(`${uri}#updates/3`), actor, to: PUBLIC_COLLECTION,
      object: question({ options: [['x', 0], ['z', 0]], multiple: true, voters: 0, updated: Date.now() - 1000 }),
    }));
    const replaced = (await pollOf(a, uri))!;
    expect(replaced).toMatchObject({ options: ['x', 'z'], multiple: true, cached_tallies: [0, 0], voters_count: 0, state: 'open' });
    expect(replaced.id).not.toBe(stored.id);
    expect((await alice.api(`/api/v1/statuses/${s!.id}`)).body.poll).toMatchObject({ id: replaced.id, multiple: true });
  });
});

describe('the 3-minute Update throttle, at a remote inbox (A on the controllable clock)', () => {
  it('no Update sooner than 3 minutes after a vote; many votes within 3 minutes yield one; a vote after the window the next; the close a final one', async () => {
    await settled(a, b);
    const sinkActor = `${sinks.urls[0]}/users/sam`;
    await a.services.db.sql.query(
      `insert into accounts (id, username, domain, uri, inbox_url, display_name, note, created_at, updated_at)
       values ($1, 'sam', $2, $3, $4, '', '', now(), now())`,
      [a.services.ids.next(), new URL(sinks.urls[0]!).host, sinkActor, `${sinkActor}/inbox`],
    );
    const start = clock.now().getTime();
    const t = await ask(['up', 'down'], { expiresIn: 900 });
    const voters: TestUser[] = [];
    for (let i = 0; i < 6; i++) voters.push(await createTestUser(a, `thr${i}`));
    const vote = async (who: TestUser, choice: number) => {
      expect((await who.api(`/api/v1/polls/${t.poll.id}/votes`, { method: 'POST', body: { choices: [String(choice)] } })).status).toBe(200);
    };
    const updatesAtSink = () => sinks.posts.filter((p) => p.type === 'Update' && p.activityId.startsWith(`${t.uri}#updates/poll/`));
    const waitFor = async (n: number, what: string) => {
      await eventually(async () => updatesAtSink().length >= n, 20_000, what);
      await settled(a);
      expect(updatesAtSink().length).toBe(n);
    };

    // t = 0: the remote account votes (as its server's vote Note would). No Update goes at once:
    // it would tell alice's followers this voter's choice by its timing. It waits 3 minutes.
    expect(await recordRemoteVote(a.services, t.poll.id, sinkActor, ['up'], { uri: `${sinkActor}#votes/1` })).toEqual({ accepted: true });
    await settled(a);
    expect(updatesAtSink().length).toBe(0);
    // Many local votes within the next minute: still nothing until 3 minutes after the first.
    for (let i = 0; i < 5; i++) {
      clock.advance(10 * SEC);
      await vote(voters[i]!, i % 2);
    }
    await settled(a);
    expect(updatesAtSink().length).toBe(0);
    clock.advance(3 * MIN - 50 * SEC - 1);
    await settled(a);
    expect(updatesAtSink().length).toBe(0);
    clock.advance(1);
    await waitFor(1, 'the throttled Update, 3 minutes after the first vote');

    // A vote at 4 min: not at 6 min (3 minutes after the last Update) but at 7 (3 after the vote).
    clock.advance(MIN);
    await vote(voters[5]!, 1);
    clock.advance(3 * MIN - 1);
    await settled(a);
    expect(updatesAtSink().length).toBe(1);
    clock.advance(1);
    await waitFor(2, 'the next Update');

    // The close: a final one.
    clock.set(new Date(start + 900 * SEC));
    await waitFor(3, 'the final Update');
    expect(new Set(updatesAtSink().map((p) => p.activityId)).size).toBe(3);
    expect(updatesAtSink().every((p) => p.path === '/users/sam/inbox' && p.signature !== null)).toBe(true);
    // B (bob follows alice) has the last tallies and the end.
    await settled(a, b);
    expect(await pollOf(b, t.uri)).toMatchObject({ cached_tallies: [4, 3], votes_count: 7, voters_count: 7, state: 'closed' });
  }, 120_000);
});

describe('an Update(Question) to a shared inbox', () => {
  it('reaches a shared inbox standing for a follower and a non-following voter once', async () => {
    await settled(a, b);
    const base = sinks.urls[1]!;
    const host = new URL(base).host;
    const sharedInbox = `${base}/inbox`;
    // Two accounts of the sink's server behind one shared inbox: fay follows alice, vic only votes.
    const [fay, vic] = [a.services.ids.next(), a.services.ids.next()];
    for (const [id, name] of [[fay, 'fay'], [vic, 'vic']] as const) {
      await a.services.db.sql.query(
        `insert into accounts (id, username, domain, uri, inbox_url, shared_inbox_url, display_name, note, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, '', '', now(), now())`,
        [id, name, host, `${base}/users/${name}`, `${base}/users/${name}/inbox`, sharedInbox],
      );
    }
    await a.services.db.sql.query(
      `insert into follows (id, account_id, target_account_id, state, created_at, updated_at) values ($1, $2, $3, 'accepted', now(), now())`,
      [a.services.ids.next(), fay, alice.account.id],
    );
    const p = await ask(['left', 'right'], { expiresIn: 3600 });
    await settled(a, b);
    expect(await recordRemoteVote(a.services, p.poll.id, `${base}/users/vic`, ['left'], { uri: `${base}/users/vic#votes/1` })).toEqual({ accepted: true });
    clock.advance(3 * MIN);
    const updates = () => sinks.posts.filter((x) => x.host === host && x.type === 'Update' && x.activityId.startsWith(`${p.uri}#updates/poll/`));
    await eventually(async () => updates().length >= 1, 20_000, 'the Update at the shared inbox');
    await settled(a, b);
    expect(updates().map((x) => x.path)).toEqual(['/inbox']);
    // The Create(Question) reached it once as well (fay follows alice; vic had not voted yet).
    expect(sinks.posts.filter((x) => x.host === host && x.type === 'Create' && x.activityId.startsWith(p.uri)).map((x) => x.path)).toEqual(['/inbox']);
  }, 60_000);
});
