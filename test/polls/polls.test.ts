/**
 * Polls through the real server, on an instance whose clock the test drives: created with their
 * status, read (GET /api/v1/polls/:id and in the status), voted on, refused as Mastodon refuses
 * (double vote, own poll, bad choice, ended poll, bad options), closed by their timer with
 * `poll.closed` once, deleted with their status, and the 3-minute Update throttle proved on the
 * outbox rows.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, capturedStatements, type TestRoost } from '../helpers/roost.ts';
import { POLL_TABLE, closePoll, recordRemoteVote, votePoll } from '../../src/services/polls.ts';
import { stepActor } from '../../src/services/actor-store.ts';
import { createTestUser, apiRequest, type TestUser } from '../helpers/auth.ts';
import { createManualClock } from '../../src/lib/clock.ts';

const T0 = new Date('2026-03-01T12:00:00.000Z');
const clock = createManualClock(T0);
const SEC = 1000;
const MIN = 60 * SEC;
let roost: TestRoost;
let author: TestUser;
let voter: TestUser;
let other: TestUser;

beforeAll(async () => {
  roost = await startTestRoost({}, { clock });
  author = await createTestUser(roost, 'pollster');
  voter = await createTestUser(roost, 'voter');
  other = await createTestUser(roost, 'other');
});
afterAll(async () => roost?.close());

const iso = (ms: number) => new Date(ms).toISOString();

async function post(poll: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return author.api('/api/v1/statuses', { method: 'POST', body: { status: 'Which one?', poll, ...extra } });
}

async function outbox(pollId: string) {
  return roost.services.db.sql.query<{ type: string; actor_version: number; origin: string; payload: Record<string, unknown> }>(
    `select type, actor_version, origin, payload from outbox_events where actor_kind = 'poll' and actor_id = $1 order by id`,
    [pollId],
  );
}

/** No job due now is left (timers due later stay: a poll's close). */
async function drained(): Promise<void> {
  await eventually(
    async () => (await roost.services.db.sql.query(`select 1 from jobs where state <> 'dead' and run_at <= $1 limit 1`, [clock.now()])).length === 0,
    20_000,
    'the due jobs to run',
  );
}

const count = async (table: string) => (await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n;

describe('creating a poll with its status', () => {
  it('renders the Poll entity in the status and at /api/v1/polls/:id, and schedules its close', async () => {
    const now = clock.now().getTime();
    const res = await post({ options: ['tea', 'coffee', ' '], expires_in: 3600, multiple: 'true' });
    expect(res.status).toBe(200);
    const poll = res.body.poll;
    expect(poll).toEqual({
      id: poll.id,
      expires_at: iso(now + 3600 * SEC),
      expired: false,
      multiple: true,
      votes_count: 0,
      voters_count: 0,
      options: [{ title: 'tea', votes_count: 0 }, { title: 'coffee', votes_count: 0 }],
      emojis: [],
      // The author counts as having voted (Mastodon's Poll#voted?).
      voted: true,
      own_votes: [],
    });
    expect(typeof poll.id).toBe('string');
    const anonymous = await apiRequest(roost, `/api/v1/polls/${poll.id}`);
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toEqual({
      id: poll.id, expires_at: poll.expires_at, expired: false, multiple: true, votes_count: 0, voters_count: 0,
      options: [{ title: 'tea', votes_count: 0 }, { title: 'coffee', votes_count: 0 }], emojis: [],
    });
    expect((await voter.api(`/api/v1/statuses/${res.body.id}`)).body.poll).toEqual({ ...poll, voted: false, own_votes: [] });
    expect(await outbox(poll.id)).toEqual([
      { type: 'poll.close_scheduled', actor_version: 0, origin: 'client', payload: { type: 'poll.close_scheduled', pollId: poll.id, runAt: iso(now + 3600 * SEC) } },
    ]);
    const timers = await roost.services.db.sql.query<{ run_at: Date; dedupe_key: string }>(`select run_at, dedupe_key from jobs where kind = 'timer' and dedupe_key = $1`, [`poll.close:${poll.id}`]);
    expect(timers.map((t) => [new Date(t.run_at).toISOString(), t.dedupe_key])).toEqual([[iso(now + 3600 * SEC), `poll.close:${poll.id}`]]);
    // A status without a poll says so.
    expect((await author.api('/api/v1/statuses', { method: 'POST', body: { status: 'no poll' } })).body.poll).toBeNull();
  });

  it('refuses bad polls with Mastodon\'s 422 and writes nothing', async () => {
    const statuses = await count('statuses');
    const polls = await count('polls');
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [{ options: ['a', 'b', 'c', 'd', 'e'], expires_in: 3600 }, {}, "Validation failed: Poll options can't contain more than 4 items"],
      [{ options: ['same', 'same'], expires_in: 3600 }, {}, 'Validation failed: Poll options contain duplicate items'],
      [{ options: ['only'], expires_in: 3600 }, {}, 'Validation failed: Poll options must have more than one item'],
      [{ options: ['a', 'x'.repeat(51)], expires_in: 3600 }, {}, 'Validation failed: Poll options cannot be longer than 50 characters each'],
      [{ options: ['a', 'b'], expires_in: 299 }, {}, 'Validation failed: Poll expires at is too soon'],
      [{ options: ['a', 'b'], expires_in: 2_629_747 }, {}, 'Validation failed: Poll expires at is too far into the future'],
      [{ options: ['a', 'b'] }, {}, 'Validation failed: Poll expires at is too far into the future'],
      [{ options: ['a', 'b'], expires_in: 3600 }, { media_ids: ['1'] }, 'Cannot attach more than 4 files'],
    ];
    for (const [poll, extra, error] of cases) {
      const res = await post(poll, extra);
      expect([res.status, res.body.error]).toEqual([422, error]);
    }
    expect([await count('statuses'), await count('polls')]).toEqual([statuses, polls]);
  });
});

describe('voting', () => {
  it('counts a vote, shows own_votes, and refuses a second vote, the author, bad choices', async () => {
    const poll = (await post({ options: ['yes', 'no', 'maybe'], expires_in: 600 })).body.poll;
    const res = await voter.api(`/api/v1/polls/${poll.id}/votes`, { method: 'POST', body: { choices: ['1'] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...poll, votes_count: 1, voters_count: 1, voted: true, own_votes: [1],
      options: [{ title: 'yes', votes_count: 0 }, { title: 'no', votes_count: 1 }, { title: 'maybe', votes_count: 0 }],
    });
    const refused: [TestUser, unknown, number, string][] = [
      [voter, { choices: ['0'] }, 422, 'Validation failed: You have already voted on this poll'],
      [author, { choices: ['0'] }, 422, 'Validation failed: You cannot vote in your own polls'],
      [other, { choices: ['3'] }, 422, 'Validation failed: The chosen vote option does not exist'],
      [other, { choices: ['-1'] }, 422, 'Validation failed: The chosen vote option does not exist'],
      [other, { choices: ['zero'] }, 422, 'Validation failed: The chosen vote option does not exist'],
      [other, { choices: ['0', '1'] }, 422, 'Validation failed: You have already voted on this poll'],
      [other, {}, 400, 'param is missing or the value is empty: choices'],
    ];
    for (const [who, body, status, error] of refused) {
      const r = await who.api(`/api/v1/polls/${poll.id}/votes`, { method: 'POST', body });
      expect([r.status, r.body.error]).toEqual([status, error]);
    }
    // Nothing half-written: one vote row, one vote counted.
    const rows = await roost.services.db.sql.query<{ voter: string; choices: number[] }>(`select voter, choices from poll_votes where poll_id = $1`, [poll.id]);
    expect(rows).toEqual([{ voter: voter.account.id, choices: [1] }]);
    expect((await other.api(`/api/v1/polls/${poll.id}`)).body).toMatchObject({ votes_count: 1, voted: false, own_votes: [] });
    expect((await other.api('/api/v1/polls/99999/votes', { method: 'POST', body: { choices: ['0'] } })).status).toBe(404);
  });

  it('on a multiple-choice poll takes a later vote for other options (Mastodon), refusing only a choice made already', async () => {
    const poll = (await post({ options: ['a', 'b', 'c', 'd'], expires_in: 600, multiple: true })).body.poll;
    const vote = (choices: string[]) => voter.api(`/api/v1/polls/${poll.id}/votes`, { method: 'POST', body: { choices } });
    expect((await vote(['0'])).status).toBe(200);
    const more = await vote(['2']);
    expect(more.status).toBe(200);
    expect(more.body).toMatchObject({ votes_count: 2, voters_count: 1, voted: true, own_votes: [0, 2] });
    for (const choices of [['2'], ['1', '0'], ['0']]) {
      const r = await vote(choices);
      expect([choices, r.status, r.body.error]).toEqual([choices, 422, 'Validation failed: You have already voted on this poll']);
    }
    const last = await vote(['3', '1']);
    expect(last.body).toMatchObject({
      votes_count: 4, voters_count: 1, own_votes: [0, 1, 2, 3],
      options: [{ title: 'a', votes_count: 1 }, { title: 'b', votes_count: 1 }, { title: 'c', votes_count: 1 }, { title: 'd', votes_count: 1 }],
    });
    const rows = await roost.services.db.sql.query<{ voter: string; choices: number[] }>(`select voter, choices from poll_votes where poll_id = $1`, [poll.id]);
    expect(rows).toEqual([{ voter: voter.account.id, choices: [0, 1, 2, 3] }]);
    const voted = (await outbox(poll.id)).filter((e) => e.type === 'poll.voted').map((e) => e.payload.choices);
    expect(voted).toEqual([[0], [2], [1, 3]]);
  });

  it('hides totals from others until the end, not from the author', async () => {
    const poll = (await post({ options: ['a', 'b'], expires_in: 600, hide_totals: true })).body.poll;
    expect((await voter.api(`/api/v1/polls/${poll.id}/votes`, { method: 'POST', body: { choices: ['0'] } })).body.options).toEqual([
      { title: 'a', votes_count: null },
      { title: 'b', votes_count: null },
    ]);
    expect((await author.api(`/api/v1/polls/${poll.id}`)).body.options).toEqual([{ title: 'a', votes_count: 1 }, { title: 'b', votes_count: 0 }]);
    expect((await apiRequest(roost, `/api/v1/polls/${poll.id}`)).body).toMatchObject({ votes_count: 1, options: [{ votes_count: null }, { votes_count: null }] });
  });

  it('a poll is seen by whoever sees its status: 404 otherwise', async () => {
    const res = await post({ options: ['a', 'b'], expires_in: 600 }, { visibility: 'private' });
    expect(res.body.visibility).toBe('private');
    expect((await apiRequest(roost, `/api/v1/polls/${res.body.poll.id}`)).status).toBe(404);
    expect((await other.api(`/api/v1/polls/${res.body.poll.id}`)).status).toBe(404);
    expect((await other.api(`/api/v1/polls/${res.body.poll.id}/votes`, { method: 'POST', body: { choices: ['0'] } })).status).toBe(404);
    expect((await author.api(`/api/v1/polls/${res.body.poll.id}`)).status).toBe(200);
  });
});

describe('votes at once (the one-statement fast path and its fallback to the lock)', () => {
  it('counts twelve voters voting together exactly once each, and one voter sending five votes together once', async () => {
    const poll = (await post({ options: ['a', 'b', 'c'], expires_in: 600 })).body.poll;
    const crowd = await Promise.all(Array.from({ length: 12 }, (_, i) => createTestUser(roost, `crowd${i}`)));
    const votes = await Promise.all(
      crowd.map((u, i) => u.api(`/api/v1/polls/${poll.id}/votes`, { method: 'POST', body: { choices: [String(i % 3)] } })),
    );
    expect(votes.map((r) => r.status)).toEqual(Array(12).fill(200));
    const insistent = crowd[0]!;
    const again = await Promise.all(
      Array.from({ length: 5 }, () => insistent.api(`/api/v1/polls/${poll.id}/votes`, { method: 'POST', body: { choices: ['2'] } })),
    );
    expect(again.map((r) => [r.status, r.body.error])).toEqual(Array(5).fill([422, 'Validation failed: You have already voted on this poll']));
    expect((await author.api(`/api/v1/polls/${poll.id}`)).body).toMatchObject({
      votes_count: 12,
      voters_count: 12,
      options: [{ title: 'a', votes_count: 4 }, { title: 'b', votes_count: 4 }, { title: 'c', votes_count: 4 }],
    });
    const rows = await roost.services.db.sql.query<{ voter: string; choices: number[] }>(`select voter, choices from poll_votes where poll_id = $1 order by voter`, [poll.id]);
    expect(rows).toEqual(crowd.map((u, i) => ({ voter: u.account.id, choices: [i % 3] })).sort((x, y) => (x.voter < y.voter ? -1 : 1)));
    // Every accepted vote is one step of its own: twelve poll.voted facts at twelve different
    // versions (the throttled Update's timer may step in between), none written twice.
    const voted = (await outbox(poll.id)).filter((e) => e.type === 'poll.voted');
    expect(voted).toHaveLength(12);
    expect(new Set(voted.map((e) => e.actor_version)).size).toBe(12);
  });
});

/** The statements `fn` sends through the instance's plain-SQL client (their first words). */
const statementsOf = (fn: () => Promise<unknown>) => capturedStatements(roost, fn, 30, { jobWrites: true });

describe('the guessed row (a poll this process last wrote)', () => {
  it('makes a vote one statement while the guess holds; a stale guess falls back to a read and counts right', async () => {
    const poll = (await post({ options: ['a', 'b'], expires_in: 600 })).body.poll;
    const [u0, u1, u2, u3, u4, u5] = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => createTestUser(roost, `guess${i}`)));
    const vote = (u: TestUser, choice: number) => votePoll(roost.services, u.account.id, poll.id, [choice]);
    // The first votes of a window ask for timers (the Update, the next one) and take the locking
    // path; which ones depends on when the Update's effect ran. Warm up until a vote has taken the
    // one-statement path: the row it wrote is then the guess.
    for (const u of [u0!, u1!, u2!, u3!]) {
      if ((await statementsOf(() => vote(u, 0))).at(-1) === 'with written as ( update polls') break;
    }
    const held = await capturedStatements(roost, () => vote(u4!, 1), 100_000, { jobWrites: true });
    expect(held.map((s) => s.slice(0, 30))).toEqual(['with written as ( update polls']);
    // A vote on a local poll is recorded (poll.voted in the outbox) but queues no event job and
    // wakes no worker: nothing acts on it (outbox.ts needsEventJob); votes on remote polls do get
    // one (their delivery: test/federation/polls.test.ts).
    expect(held[0]).toContain('insert into outbox_events');
    expect(held[0]).not.toContain('insert into jobs');
    expect(held[0]).not.toContain('pg_notify');
    expect((await outbox(poll.id)).at(-1)).toMatchObject({ type: 'poll.voted', payload: { voterId: u4!.account.id, local: true, pollLocal: true } });
    // A step this process did not make through the fast path (a remote vote, the locking path)
    // moves the poll on: the guess is stale, writes nothing, and the read path counts the vote.
    expect(await recordRemoteVote(roost.services, poll.id, 'https://remote.example/users/r', ['a'])).toEqual({ accepted: true });
    const stale = await statementsOf(() => vote(u5!, 0));
    expect(stale).toEqual(['with written as ( update polls', 'select *, exists (select 1 fro', 'with written as ( update polls']);
    // A voter who has voted, on a guess that holds: refused from the stored row, nothing written.
    await expect(vote(u4!, 0)).rejects.toThrow('You have already voted on this poll');
    // Every vote counted once: the warm-up's, u4's (b), the remote one (a) and u5's (a).
    const rows = await roost.services.db.sql.query<{ voter: string; choices: number[] }>(`select voter, choices from poll_votes where poll_id = $1`, [poll.id]);
    const a = rows.filter((r) => r.choices[0] === 0).length;
    expect(rows.filter((r) => r.choices[0] === 1).map((r) => r.voter)).toEqual([u4!.account.id]);
    expect((await author.api(`/api/v1/polls/${poll.id}`)).body).toMatchObject({
      votes_count: rows.length,
      voters_count: rows.length,
      options: [{ title: 'a', votes_count: a }, { title: 'b', votes_count: 1 }],
    });
  });
});

describe('the locking path of a vote', () => {
  it('rolls back the vote row it wrote before the step when the poll refuses the vote', async () => {
    const poll = (await post({ options: ['a', 'b'], expires_in: 600 })).body.poll;
    const late = await createTestUser(roost, 'late');
    expect(await closePoll(roost.services, poll.id)).toBe(true);
    const vote = { type: 'poll.vote' as const, voterId: late.account.id, choices: [0], now: clock.now().toISOString(), local: true, previous: null };
    // The vote row first, as votePoll's locking path writes it; the closed poll then refuses the step.
    const r = await stepActor(roost.services, POLL_TABLE, poll.id, async (sql) => {
      await sql.query(
        `insert into poll_votes (id, poll_id, voter, account_id, choices, created_at, updated_at) values ($1, $2, $3::text, $3::text::bigint, $4::integer[], $5, $5)`,
        [roost.services.ids.next(), poll.id, late.account.id, [0], clock.now()],
      );
      return vote;
    }, { origin: 'client' });
    expect(r).toMatchObject({ accepted: false, rejection: { reason: 'not_accepted', eventType: 'poll.vote' } });
    expect(await roost.services.db.sql.query(`select 1 from poll_votes where poll_id = $1 and voter = $2`, [poll.id, late.account.id])).toEqual([]);
    expect((await outbox(poll.id)).map((e) => e.type)).toEqual(['poll.close_scheduled', 'poll.updated', 'poll.closed']);
  });
});

describe('the end of a poll and the 3-minute Update throttle (outbox rows, controllable clock)', () => {
  it('no poll.updated sooner than 3 minutes after a vote; many votes within 3 minutes yield one, a vote after the window the next, the close a final one and poll.closed once', async () => {
    await drained();
    const start = clock.now().getTime();
    const created = await post({ options: ['up', 'down'], expires_in: 900 });
    const pollId: string = created.body.poll.id;
    const voters: TestUser[] = [];
    for (let i = 0; i < 8; i++) voters.push(await createTestUser(roost, `throttle${i}`));
    const vote = async (who: TestUser, choice: number) => {
      const r = await who.api(`/api/v1/polls/${pollId}/votes`, { method: 'POST', body: { choices: [String(choice)] } });
      expect(r.status).toBe(200);
    };
    const updates = async () => (await outbox(pollId)).filter((e) => e.type === 'poll.updated').length;

    // t = 0: nothing sent yet, still the Update waits 3 minutes after the vote (sooner, its timing
    // would tell the followers this voter's choice).
    await vote(voters[0]!, 0);
    await drained();
    expect(await updates()).toBe(0);
    // Five more votes within the next minute: nothing more scheduled.
    for (let i = 1; i <= 5; i++) {
      clock.advance(10 * SEC);
      await vote(voters[i]!, i % 2);
    }
    await drained();
    expect(await updates()).toBe(0);
    clock.advance(3 * MIN - 50 * SEC - 1); // just before 3 min after the first vote
    await drained();
    expect(await updates()).toBe(0);
    clock.advance(1);
    await eventually(async () => (await updates()) === 1, 10_000, 'the throttled Update');

    // A vote at 4 min: the next Update waits until 7 min (3 after the vote, not 3 after the last).
    clock.advance(MIN);
    await vote(voters[6]!, 1);
    clock.advance(3 * MIN - 1);
    await drained();
    expect(await updates()).toBe(1);
    clock.advance(1);
    await eventually(async () => (await updates()) === 2, 10_000, 'the next Update');

    // An ended poll refuses votes before its timer ran; the timer closes it with the final Update.
    clock.set(new Date(start + 900 * SEC));
    const late = await voters[7]!.api(`/api/v1/polls/${pollId}/votes`, { method: 'POST', body: { choices: ['0'] } });
    expect([late.status, late.body.error]).toEqual([422, 'Validation failed: The poll has already ended']);
    await eventually(async () => (await outbox(pollId)).some((e) => e.type === 'poll.closed'), 10_000, 'the close');
    await drained();

    const events = await outbox(pollId);
    expect(events.map((e) => [e.type, e.actor_version, e.origin])).toEqual([
      ['poll.close_scheduled', 0, 'client'],
      ['poll.voted', 1, 'client'],
      ['poll.update_scheduled', 1, 'client'],
      ['poll.voted', 2, 'client'],
      ['poll.voted', 3, 'client'],
      ['poll.voted', 4, 'client'],
      ['poll.voted', 5, 'client'],
      ['poll.voted', 6, 'client'],
      ['poll.updated', 7, 'timer'],
      ['poll.voted', 8, 'client'],
      ['poll.update_scheduled', 8, 'client'],
      ['poll.updated', 9, 'timer'],
      ['poll.updated', 10, 'timer'],
      ['poll.closed', 10, 'timer'],
    ]);
    const scheduled = events.filter((e) => e.type === 'poll.update_scheduled').map((e) => e.payload.runAt);
    expect(scheduled).toEqual([iso(start + 3 * MIN), iso(start + 7 * MIN)]);
    const closed = events.find((e) => e.type === 'poll.closed')!.payload;
    expect(closed).toEqual({
      type: 'poll.closed', pollId, authorId: author.account.id,
      voterIds: voters.slice(0, 7).map((v) => v.account.id).sort(),
    });
    const final = (await voters[0]!.api(`/api/v1/polls/${pollId}`)).body;
    expect(final).toMatchObject({ expired: true, votes_count: 7, voters_count: 7, voted: true, own_votes: [0], options: [{ votes_count: 3 }, { votes_count: 4 }] });
    const [row] = await roost.services.db.sql.query<{ state: string; closed_at: Date; cached_tallies: number[]; votes_count: number }>(
      `select state, closed_at, cached_tallies, votes_count from polls where id = $1`,
      [pollId],
    );
    expect([row!.state, new Date(row!.closed_at).toISOString(), row!.cached_tallies, row!.votes_count]).toEqual(['closed', iso(start + 900 * SEC), [3, 4], 7]);
  }, 60_000);
});

describe('deleting the status', () => {
  it('deletes its poll and drops its timers', async () => {
    const res = await post({ options: ['keep', 'drop'], expires_in: 600 });
    const pollId = res.body.poll.id;
    const del = await author.api(`/api/v1/statuses/${res.body.id}`, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(del.body.poll.id).toBe(pollId);
    expect((await outbox(pollId)).map((e) => [e.type, e.actor_version])).toEqual([
      ['poll.close_scheduled', 0],
      ['poll.deleted', 1],
    ]);
    expect((await roost.services.db.sql.query(`select 1 from jobs where dedupe_key = $1`, [`poll.close:${pollId}`])).length).toBe(0);
    expect((await apiRequest(roost, `/api/v1/polls/${pollId}`)).status).toBe(404);
    const [row] = await roost.services.db.sql.query<{ state: string }>(`select state from polls where id = $1`, [pollId]);
    expect(row!.state).toBe('deleted');
  });
});
