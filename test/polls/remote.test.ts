/**
 * The service functions the inbox calls for polls, against the real database: remote votes on a
 * local poll (Mastodon's Create(Note) with `name`, one Note per choice) counted once per voter,
 * and a remote poll's tallies (Update(Question)) applied, closing it once.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { createManualClock } from '../../src/lib/clock.ts';
import { applyRemoteTally, createPoll, recordRemoteVote, votePoll } from '../../src/services/polls.ts';

const clock = createManualClock(new Date('2026-04-01T08:00:00.000Z'));
let roost: TestRoost;
let author: TestUser;
let local: TestUser;
const R1 = 'https://remote.example/users/rita';
const R2 = 'https://remote.example/users/sam';

beforeAll(async () => {
  roost = await startTestRoost({}, { clock });
  author = await createTestUser(roost, 'asker');
  local = await createTestUser(roost, 'localvoter');
});
afterAll(async () => roost?.close());

async function localPoll(options: string[], multiple: boolean, expiresIn = 3600): Promise<string> {
  const res = await author.api('/api/v1/statuses', { method: 'POST', body: { status: 'Q?', poll: { options, expires_in: expiresIn, multiple } } });
  expect(res.status).toBe(200);
  return res.body.poll.id;
}

const sql = () => roost.services.db.sql;
const pollRow = async (id: string) =>
  (await sql().query<{ cached_tallies: number[]; votes_count: number; voters_count: number; state: string }>(
    `select cached_tallies, votes_count, voters_count, state from polls where id = $1`,
    [id],
  ))[0]!;
const votes = (id: string) => sql().query<{ voter: string; account_id: string | null; choices: number[]; uri: string | null }>(
  `select voter, account_id::text, choices, uri from poll_votes where poll_id = $1 order by voter`,
  [id],
);
const events = (id: string) => sql().query<{ type: string; origin: string; payload: Record<string, unknown> }>(
  `select type, origin, payload from outbox_events where actor_kind = 'poll' and actor_id = $1 order by id`,
  [id],
);

describe('recordRemoteVote', () => {
  it('counts a remote voter once on a single-choice poll; a second Note or an unknown option is refused', async () => {
    const id = await localPoll(['yes', 'no'], false);
    expect(await recordRemoteVote(roost.services, id, R1, ['no'], { uri: `${R1}#votes/1` })).toEqual({ accepted: true });
    expect(await recordRemoteVote(roost.services, id, R1, ['yes'], { uri: `${R1}#votes/2` })).toEqual({ accepted: false, reason: 'already_voted' });
    expect(await recordRemoteVote(roost.services, id, R2, ['perhaps'])).toEqual({ accepted: false, reason: 'invalid_choice' });
    expect(await recordRemoteVote(roost.services, id, R2, ['yes', 'no'])).toEqual({ accepted: false, reason: 'single_choice' });
    expect(await pollRow(id)).toEqual({ cached_tallies: [0, 1], votes_count: 1, voters_count: 1, state: 'open' });
    expect(await votes(id)).toEqual([{ voter: R1, account_id: null, choices: [1], uri: `${R1}#votes/1` }]);
    // A remote vote on a local poll is news for the other servers: the Update goes out, 3 minutes
    // after the vote (sooner, its timing would tell that voter's choice).
    await settled(roost);
    expect((await events(id)).map((e) => e.type)).not.toContain('poll.updated');
    clock.advance(3 * 60_000);
    await eventually(async () => (await events(id)).some((e) => e.type === 'poll.updated'), 10_000, 'the Update');
    await settled(roost);
    const types = (await events(id)).map((e) => [e.type, e.origin]);
    expect(types).toEqual([
      ['poll.close_scheduled', 'client'],
      ['poll.voted', 'federation'],
      ['poll.update_scheduled', 'federation'],
      ['poll.updated', 'timer'],
    ]);
  });

  it('on a multiple-choice poll takes each option once, one Note at a time, as one voter', async () => {
    const id = await localPoll(['a', 'b', 'c'], true);
    // A remote voter known here: its vote row names its account.
    const [known] = await sql().query<{ id: string }>(
      `insert into accounts (id, username, domain, uri, display_name, note, created_at, updated_at)
       values ($1, 'sam', 'remote.example', $2, '', '', now(), now()) returning id::text`,
      [roost.services.ids.next(), R2],
    );
    expect(await recordRemoteVote(roost.services, id, R1, ['a'])).toEqual({ accepted: true });
    expect(await recordRemoteVote(roost.services, id, R1, ['c'])).toEqual({ accepted: true });
    expect(await recordRemoteVote(roost.services, id, R1, ['a'])).toEqual({ accepted: false, reason: 'already_voted' });
    expect(await recordRemoteVote(roost.services, id, R2, ['a', 'b', 'a'])).toEqual({ accepted: true });
    expect(await pollRow(id)).toEqual({ cached_tallies: [2, 1, 1], votes_count: 4, voters_count: 2, state: 'open' });
    expect(await votes(id)).toEqual([
      { voter: R1, account_id: null, choices: [0, 2], uri: null },
      { voter: R2, account_id: known!.id, choices: [0, 1], uri: null },
    ]);
    // The local API shows the same counts.
    expect((await local.api(`/api/v1/polls/${id}`)).body).toMatchObject({ votes_count: 4, voters_count: 2, voted: false });
  });

  it('refuses votes after the end and on unknown polls', async () => {
    const id = await localPoll(['x', 'y'], false, 300);
    clock.advance(300_000);
    expect(await recordRemoteVote(roost.services, id, R1, ['x'])).toEqual({ accepted: false, reason: 'expired' });
    expect(await recordRemoteVote(roost.services, '12345', R1, ['x'])).toEqual({ accepted: false, reason: 'not_found' });
    expect(await votes(id)).toEqual([]);
  });
});

describe('applyRemoteTally', () => {
  it('replaces a remote poll\'s counts, closes it once with the local voters, and refuses local polls and bad counts', async () => {
    const [remote] = await sql().query<{ id: string }>(
      `insert into accounts (id, username, domain, uri, display_name, note, created_at, updated_at)
       values ($1, 'quiz', 'quiz.example', 'https://quiz.example/users/quiz', '', '', now(), now()) returning id::text`,
      [roost.services.ids.next()],
    );
    const statusId = roost.services.ids.next();
    const expiresAt = new Date(clock.now().getTime() + 3600_000);
    const pollId = await sql().transaction(async (tx) => {
      await tx.query(
        `insert into statuses (id, account_id, uri, url, text, content, visibility, local, created_at, updated_at)
         values ($1, $2, 'https://quiz.example/notes/1', null, '', '<p>Quiz?</p>', 'public', false, $3, $3)`,
        [statusId, remote!.id, clock.now()],
      );
      return createPoll(roost.services, tx, {
        statusId, accountId: remote!.id, local: false, uri: 'https://quiz.example/notes/1',
        options: ['left', 'right'], multiple: false, hideTotals: false, expiresAt, votes: [3, 1], votersCount: 4,
      }, 'federation');
    });
    // A local account votes on the remote poll (the federation engineer delivers it), a remote one may not.
    await votePoll(roost.services, local.account.id, pollId, [1]);
    expect(await recordRemoteVote(roost.services, pollId, R1, ['left'])).toEqual({ accepted: false, reason: 'remote_poll' });
    expect(await pollRow(pollId)).toEqual({ cached_tallies: [3, 2], votes_count: 5, voters_count: 5, state: 'open' });

    expect(await applyRemoteTally(roost.services, pollId, [10, 7], 17, false)).toBe(true);
    expect(await pollRow(pollId)).toEqual({ cached_tallies: [10, 7], votes_count: 17, voters_count: 17, state: 'open' });
    expect(await applyRemoteTally(roost.services, pollId, [1, 2, 3], 6, false)).toBe(false);
    expect(await applyRemoteTally(roost.services, pollId, [1, -2], 6, false)).toBe(false);
    expect(await applyRemoteTally(roost.services, pollId, [11, 8], null, true)).toBe(true);
    expect(await pollRow(pollId)).toEqual({ cached_tallies: [11, 8], votes_count: 19, voters_count: 19, state: 'closed' });
    // A late correction after the end: counted, no second poll.closed.
    expect(await applyRemoteTally(roost.services, pollId, [12, 8], 20, true)).toBe(true);
    const closed = (await events(pollId)).filter((e) => e.type === 'poll.closed');
    expect(closed.map((e) => [e.payload, e.origin])).toEqual([
      [{ type: 'poll.closed', pollId, voterIds: [local.account.id], authorId: remote!.id }, 'federation'],
    ]);
    expect((await local.api(`/api/v1/polls/${pollId}`)).body).toMatchObject({ expired: true, votes_count: 20, voters_count: 20, voted: true, own_votes: [1] });

    const localId = await localPoll(['p', 'q'], false);
    expect(await applyRemoteTally(roost.services, localId, [1, 1], 2, false)).toBe(false);
    expect(await applyRemoteTally(roost.services, '12345', [1, 1], 2, false)).toBe(false);
  });
});
