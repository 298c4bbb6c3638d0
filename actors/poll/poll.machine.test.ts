import { describe, expect, it } from 'vitest';
import { upgradeSnapshot } from '../runtime/definition.ts';
import { InvalidSnapshotError, create, step, stepOrThrow } from '../runtime/step.ts';
import { pollDefinition, pollMachine, pollVoteRefusal } from './poll.machine.ts';
import type { PollContext, PollEmitted, PollEvent, PollInput, PollSnapshot, PollState, PollVoteRefusalReason } from './poll.machine.ts';

const P = 'poll-1';
const A1 = 'acct-1';
const A2 = 'acct-2';
const R = 'https://remote.example/users/rita';
const AUTHOR = 'acct-author';
const EXPIRES = '2026-01-01T01:00:00.000Z';
const NOW = '2026-01-01T00:30:00.000Z';
const LAST = '2026-01-01T00:29:00.000Z';
/** NOW + 3 minutes: the next Update (3 minutes after the vote, which is later than LAST + 3 minutes). */
const NEXT = '2026-01-01T00:33:00.000Z';

// ── Starting snapshots, at version 7: one per state, and per variant that changes outcomes ──
const LOCAL: PollContext = {
  pollId: P, local: true, options: ['a', 'b', 'c'], multiple: false, hideTotals: false, expiresAt: EXPIRES, authorId: AUTHOR,
  votes: [1, 0, 0], votersCount: 1, closedAt: null, lastUpdateSentAt: LAST, updatePending: false,
};
const REMOTE: PollContext = {
  ...LOCAL, local: false, multiple: true, votes: [4, 2, 0], votersCount: 5, lastUpdateSentAt: null,
};
const STARTS = {
  'open.local': ['open', LOCAL],
  'open.local.pending': ['open', { ...LOCAL, updatePending: true }],
  'open.remote': ['open', REMOTE],
  'closed.local': ['closed', { ...LOCAL, closedAt: EXPIRES }],
  'closed.remote': ['closed', { ...REMOTE, closedAt: EXPIRES }],
  deleted: ['deleted', LOCAL],
} satisfies Record<string, [PollState, PollContext]>;
type Start = keyof typeof STARTS;

function at(start: Start): PollSnapshot {
  const [value, context] = STARTS[start];
  return { value, context, version: 7 };
}

// ── Events, each under a label used by the table ──────────────────────────────────────────
const EVENTS = {
  'vote.local': { type: 'poll.vote', voterId: A2, choices: [1], now: NOW, local: true },
  'vote.remote': { type: 'poll.vote', voterId: R, choices: [2], now: NOW, local: false },
  'vote.again': { type: 'poll.vote', voterId: A1, choices: [1], now: NOW, local: true, previous: [0] },
  'vote.self': { type: 'poll.vote', voterId: AUTHOR, choices: [1], now: NOW, local: true },
  'vote.expired': { type: 'poll.vote', voterId: A2, choices: [1], now: EXPIRES, local: true },
  'vote.empty': { type: 'poll.vote', voterId: A2, choices: [], now: NOW, local: true },
  'vote.out_of_range': { type: 'poll.vote', voterId: A2, choices: [3], now: NOW, local: true },
  'vote.duplicate': { type: 'poll.vote', voterId: A2, choices: [1, 1], now: NOW, local: true },
  'vote.two': { type: 'poll.vote', voterId: A2, choices: [1, 0], now: NOW, local: true },
  close: { type: 'poll.close', now: NOW, voterIds: [A1] },
  tally: { type: 'poll.tally', counts: [5, 6, 7], votersCount: 9 },
  'tally.closing': { type: 'poll.tally', counts: [5, 6, 7], votersCount: 9, closed: true, voterIds: [A1] },
  'tally.short': { type: 'poll.tally', counts: [5, 6], votersCount: 9 },
  update_due: { type: 'poll.update_due', now: NOW },
  delete: { type: 'poll.delete' },
} satisfies Record<string, PollEvent>;
type Label = keyof typeof EVENTS;

// ── Expected emitted events ───────────────────────────────────────────────────────────────
const voted = (voterId: string, choices: number[], local: boolean, pollLocal = true): PollEmitted => ({ type: 'poll.voted', pollId: P, voterId, choices, local, pollLocal });
const scheduled = (runAt: string): PollEmitted => ({ type: 'poll.update_scheduled', pollId: P, runAt });
const updated: PollEmitted = { type: 'poll.updated', pollId: P };
const closed: PollEmitted = { type: 'poll.closed', pollId: P, voterIds: [A1], authorId: AUTHOR };
const deleted: PollEmitted = { type: 'poll.deleted', pollId: P };

// ── The table: every state × every event ──────────────────────────────────────────────────
// [next state, emitted, context changes] or { refused: why } (for votes: pollVoteRefusal's reason).
type Refused = { refused: PollVoteRefusalReason | string };
type Outcome = Refused | [PollState, PollEmitted[], Partial<PollContext>];
const no = (refused: string): Refused => ({ refused });

const VOTE_REFUSALS = {
  'vote.again': no('already_voted'),
  'vote.self': no('self_vote'),
  'vote.expired': no('expired'),
  'vote.empty': no('no_choice'),
  'vote.out_of_range': no('invalid_choice'),
  'vote.duplicate': no('duplicate_choice'),
} satisfies Partial<Record<Label, Outcome>>;

const ENDED_VOTES = {
  'vote.local': no('closed'),
  'vote.remote': no('closed'),
  'vote.again': no('closed'),
  'vote.self': no('closed'),
  'vote.expired': no('closed'),
  'vote.empty': no('closed'),
  'vote.out_of_range': no('closed'),
  'vote.duplicate': no('closed'),
  'vote.two': no('closed'),
} satisfies Partial<Record<Label, Outcome>>;

const LOCAL_CLOSE: Outcome = ['closed', [updated, closed], { closedAt: NOW, lastUpdateSentAt: NOW, updatePending: false }];
const LOCAL_TALLY_REFUSED = {
  tally: no('a local poll counts its own votes'),
  'tally.closing': no('a local poll counts its own votes'),
  'tally.short': no('a local poll counts its own votes'),
} satisfies Partial<Record<Label, Outcome>>;

const TABLE: Record<Start, Record<Label, Outcome>> = {
  'open.local': {
    'vote.local': ['open', [voted(A2, [1], true), scheduled(NEXT)], { votes: [1, 1, 0], votersCount: 2, updatePending: true }],
    'vote.remote': ['open', [voted(R, [2], false), scheduled(NEXT)], { votes: [1, 0, 1], votersCount: 2, updatePending: true }],
    ...VOTE_REFUSALS,
    'vote.two': no('single_choice'),
    close: LOCAL_CLOSE,
    ...LOCAL_TALLY_REFUSED,
    update_due: no('no Update pending'),
    delete: ['deleted', [deleted], {}],
  },
  'open.local.pending': {
    // One Update pending already: the vote is counted, nothing more is scheduled.
    'vote.local': ['open', [voted(A2, [1], true)], { votes: [1, 1, 0], votersCount: 2 }],
    'vote.remote': ['open', [voted(R, [2], false)], { votes: [1, 0, 1], votersCount: 2 }],
    ...VOTE_REFUSALS,
    'vote.two': no('single_choice'),
    close: LOCAL_CLOSE,
    ...LOCAL_TALLY_REFUSED,
    update_due: ['open', [updated], { updatePending: false, lastUpdateSentAt: NOW }],
    delete: ['deleted', [deleted], {}],
  },
  'open.remote': {
    // A local account votes on a remote poll: counted here, delivered to the poll's server.
    'vote.local': ['open', [voted(A2, [1], true, false)], { votes: [4, 3, 0], votersCount: 6 }],
    'vote.remote': no('remote_poll'),
    ...VOTE_REFUSALS,
    'vote.two': ['open', [voted(A2, [0, 1], true, false)], { votes: [5, 3, 0], votersCount: 6 }],
    // A multiple-choice poll: a voter adds a choice it has not made (Mastodon), not a new voter.
    'vote.again': ['open', [voted(A1, [1], true, false)], { votes: [4, 3, 0] }],
    close: ['closed', [closed], { closedAt: NOW, updatePending: false }],
    tally: ['open', [], { votes: [5, 6, 7], votersCount: 9 }],
    'tally.closing': ['closed', [closed], { votes: [5, 6, 7], votersCount: 9, closedAt: EXPIRES }],
    'tally.short': no('counts do not fit the options'),
    update_due: no('no Update pending (remote polls send none)'),
    delete: ['deleted', [deleted], {}],
  },
  'closed.local': {
    ...ENDED_VOTES,
    close: no('already closed: poll.closed goes out once'),
    ...LOCAL_TALLY_REFUSED,
    update_due: no('closing sent the final Update'),
    delete: ['deleted', [deleted], {}],
  },
  'closed.remote': {
    ...ENDED_VOTES,
    close: no('already closed: poll.closed goes out once'),
    tally: ['closed', [], { votes: [5, 6, 7], votersCount: 9 }],
    'tally.closing': ['closed', [], { votes: [5, 6, 7], votersCount: 9 }],
    'tally.short': no('counts do not fit the options'),
    update_due: no('closed'),
    delete: ['deleted', [deleted], {}],
  },
  deleted: {
    ...ENDED_VOTES,
    close: no('deleted'),
    tally: no('deleted'),
    'tally.closing': no('deleted'),
    'tally.short': no('deleted'),
    update_due: no('deleted'),
    delete: no('deleted'),
  },
};

const ROWS = (Object.keys(STARTS) as Start[]).flatMap((start) =>
  (Object.keys(EVENTS) as Label[]).map((label) => {
    const outcome = TABLE[start][label];
    const expected = 'refused' in outcome ? `refused (${outcome.refused})` : `${outcome[0]} [${outcome[1].map((e) => e.type).join(', ')}]`;
    return { start, label, outcome, expected };
  }),
);

describe('poll machine: every state × every event', () => {
  it('the table covers exactly the machine\'s states and event types', () => {
    expect(Object.keys(pollMachine.root.states).sort()).toEqual(['closed', 'deleted', 'open']);
    expect([...new Set(Object.values(STARTS).map(([state]) => state))].sort()).toEqual(['closed', 'deleted', 'open']);
    const tableEventTypes = new Set(Object.values(EVENTS).map((event) => event.type));
    expect([...tableEventTypes].sort()).toEqual([...new Set(pollMachine.root.events)].sort());
    expect(ROWS).toHaveLength(Object.keys(STARTS).length * Object.keys(EVENTS).length);
  });

  it.each(ROWS)('$start + $label → $expected', ({ start, label, outcome }) => {
    const before = at(start);
    const event = EVENTS[label];
    const result = step(pollMachine, before, event);
    if ('refused' in outcome) {
      expect(result.accepted).toBe(false);
      expect(!result.accepted && result.rejection.reason).toBe('not_accepted');
      expect(result.snapshot).toEqual(before);
      expect(result.version).toBe(7);
      expect(result.emitted).toEqual([]);
      if (event.type === 'poll.vote') {
        expect(pollVoteRefusal(before.value as PollState, before.context, event)?.reason).toBe(outcome.refused);
      }
      return;
    }
    const [next, emitted, changes] = outcome;
    expect(result.accepted).toBe(true);
    expect(result.snapshot).toEqual({ value: next, context: { ...before.context, ...changes }, version: 8 });
    expect(result.emitted).toEqual(emitted);
    expect(result.changed).toBe(true);
  });
});

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const t = (ms: number) => new Date(T0 + ms).toISOString();
const SEC = 1000;
const MIN = 60 * SEC;

function newPoll(overrides: Partial<PollInput> = {}): PollSnapshot {
  const input: PollInput = { pollId: P, local: true, options: ['yes', 'no', 'maybe'], multiple: false, hideTotals: false, expiresAt: t(60 * MIN), authorId: AUTHOR, ...overrides };
  return create(pollMachine, input).snapshot;
}

describe('poll machine: creation', () => {
  it('schedules the close at expiresAt on creation, and not for a poll without an end', () => {
    const input: PollInput = { pollId: P, local: true, options: ['yes', 'no'], multiple: false, hideTotals: false, expiresAt: t(60 * MIN) };
    const created = create(pollMachine, input);
    expect(created.emitted).toEqual([{ type: 'poll.close_scheduled', pollId: P, runAt: t(60 * MIN) }]);
    expect(created.snapshot).toMatchObject({ value: 'open', version: 0, context: { votes: [0, 0], votersCount: 0, updatePending: false, authorId: null } });
    // A first step from the input carries the creation fact in front of its own.
    const first = stepOrThrow(pollMachine, undefined, { type: 'poll.vote', voterId: A1, choices: [0], now: t(0), local: true }, input);
    expect(first.emitted.map((e) => e.type)).toEqual(['poll.close_scheduled', 'poll.voted', 'poll.update_scheduled']);
    expect(create(pollMachine, { ...input, local: false, expiresAt: null }).emitted).toEqual([]);
  });

  it('refuses an input without options or with a bad end', () => {
    const base: PollInput = { pollId: P, local: true, options: ['yes'], multiple: false, hideTotals: false, expiresAt: null };
    expect(() => create(pollMachine, { ...base, options: [] })).toThrow(/options/);
    expect(() => create(pollMachine, { ...base, expiresAt: 'tomorrow' })).toThrow(/expiresAt/);
    expect(() => create(pollMachine, { ...base, pollId: '' })).toThrow(/pollId/);
  });
});

describe('poll machine: the 3-minute Update throttle', () => {
  it('votes at 0 s, 10 s, 2 min, 4 min, 8 min schedule Updates at 3, 7 and 11 min, one pending at a time', () => {
    let s = newPoll();
    const vote = (voterId: string, at: number) => {
      const r = stepOrThrow(pollMachine, s, { type: 'poll.vote', voterId, choices: [0], now: t(at), local: true });
      s = r.snapshot;
      return r.emitted.filter((e) => e.type === 'poll.update_scheduled');
    };
    const due = (at: number) => {
      const r = step(pollMachine, s, { type: 'poll.update_due', now: t(at) });
      s = r.snapshot;
      return r;
    };

    // t=0: nothing sent yet, still the Update waits 3 minutes (sent at once, it would tell the
    // author's followers this one voter's choice by its timing).
    expect(vote('v1', 0)).toEqual([scheduled(t(3 * MIN))]);
    expect(s.context.updatePending).toBe(true);
    // t=10 s, 2 min: one is pending already — nothing more is scheduled.
    expect(vote('v2', 10 * SEC)).toEqual([]);
    expect(vote('v3', 2 * MIN)).toEqual([]);
    // A second timer firing for the same Update is refused: only one Update per pending one.
    expect(due(3 * MIN).emitted).toEqual([updated]);
    expect(due(3 * MIN).accepted).toBe(false);
    expect(s.context).toMatchObject({ updatePending: false, lastUpdateSentAt: t(3 * MIN), votes: [3, 0, 0], votersCount: 3 });

    // t=4 min: the last went at 3 min, but this vote's Update waits until 7 min.
    expect(vote('v4', 4 * MIN)).toEqual([scheduled(t(7 * MIN))]);
    expect(s.context.votes).toEqual([4, 0, 0]);
    expect(due(7 * MIN).emitted).toEqual([updated]);
    // t=8 min: 3 minutes after this vote (11 min), later than 3 minutes after the last (10 min).
    expect(vote('v5', 8 * MIN)).toEqual([scheduled(t(11 * MIN))]);
  });

  it('a remote poll never schedules an Update; closing a local one sends the final Update and clears the pending one', () => {
    const remote = stepOrThrow(pollMachine, newPoll({ local: false }), { type: 'poll.vote', voterId: A1, choices: [1], now: t(0), local: true });
    expect(remote.emitted).toEqual([voted(A1, [1], true, false)]);
    expect(remote.snapshot.context.updatePending).toBe(false);

    const voting = stepOrThrow(pollMachine, newPoll(), { type: 'poll.vote', voterId: A1, choices: [1], now: t(0), local: true });
    const closing = stepOrThrow(pollMachine, voting.snapshot, { type: 'poll.close', now: t(MIN), voterIds: [A1] });
    expect(closing.emitted).toEqual([updated, closed]);
    expect(closing.snapshot.context).toMatchObject({ updatePending: false, lastUpdateSentAt: t(MIN), closedAt: t(MIN) });
    expect(step(pollMachine, closing.snapshot, { type: 'poll.update_due', now: t(MIN) }).accepted).toBe(false);
  });
});

describe('poll machine: closing', () => {
  it('poll.closed goes out exactly once: the close timer after an early close is a no-op', () => {
    let s = newPoll();
    s = stepOrThrow(pollMachine, s, { type: 'poll.vote', voterId: R, choices: [2], now: t(0), local: false }).snapshot;
    s = stepOrThrow(pollMachine, s, { type: 'poll.vote', voterId: A1, choices: [0], now: t(MIN), local: true }).snapshot;
    const early = stepOrThrow(pollMachine, s, { type: 'poll.close', now: t(10 * MIN), voterIds: [R, A1] });
    expect(early.emitted.filter((e) => e.type === 'poll.closed')).toEqual([{ type: 'poll.closed', pollId: P, voterIds: [A1, R], authorId: AUTHOR }]);
    const timer = step(pollMachine, early.snapshot, { type: 'poll.close', now: t(60 * MIN), voterIds: [R, A1] });
    expect(timer.accepted).toBe(false);
    expect(timer.emitted).toEqual([]);
    expect(timer.snapshot).toEqual(early.snapshot);
    // And no votes after the end.
    expect(pollVoteRefusal('closed', early.snapshot.context, { voterId: A2, choices: [0], now: t(11 * MIN), local: true })).toEqual({
      reason: 'closed', error: 'Validation failed: The poll has already ended',
    });
  });

  it('a vote at or after expiresAt is refused even before the close timer ran', () => {
    const s = newPoll();
    const late = { type: 'poll.vote' as const, voterId: A1, choices: [0], now: t(60 * MIN), local: true };
    expect(step(pollMachine, s, late).accepted).toBe(false);
    expect(pollVoteRefusal('open', s.context, late)?.error).toBe('Validation failed: The poll has already ended');
    expect(step(pollMachine, s, { ...late, now: t(60 * MIN - 1) }).accepted).toBe(true);
  });
});

describe('poll machine: remote tallies', () => {
  it('replaces the counts, keeps local voters\' choices, closes once on closed: true', () => {
    let s = newPoll({ local: false, multiple: true, votes: [3, 1, 0], votersCount: 3, authorId: AUTHOR });
    s = stepOrThrow(pollMachine, s, { type: 'poll.vote', voterId: A1, choices: [0, 2], now: t(0), local: true }).snapshot;
    expect(s.context).toMatchObject({ votes: [4, 1, 1], votersCount: 4 });

    const tally = stepOrThrow(pollMachine, s, { type: 'poll.tally', counts: [10, 4, 2], votersCount: 12 });
    expect(tally.emitted).toEqual([]);
    expect(tally.snapshot.context).toMatchObject({ votes: [10, 4, 2], votersCount: 12 });

    const final = stepOrThrow(pollMachine, tally.snapshot, { type: 'poll.tally', counts: [11, 4, 2], votersCount: 13, closed: true, voterIds: [A1] });
    expect(final.snapshot.value).toBe('closed');
    expect(final.emitted).toEqual([{ type: 'poll.closed', pollId: P, voterIds: [A1], authorId: AUTHOR }]);
    const again = stepOrThrow(pollMachine, final.snapshot, { type: 'poll.tally', counts: [12, 4, 2], votersCount: 14, closed: true });
    expect(again.emitted).toEqual([]);
    expect(again.snapshot.context.votes).toEqual([12, 4, 2]);
  });

  it('a single-choice tally without votersCount counts one voter per vote; malformed tallies are refused', () => {
    const s = newPoll({ local: false });
    expect(stepOrThrow(pollMachine, s, { type: 'poll.tally', counts: [2, 5, 1], votersCount: null }).snapshot.context.votersCount).toBe(8);
    for (const counts of [[1, -1, 0], [1, 0.5, 0], [1, 2], [1, 2, 3, 4]]) {
      expect(step(pollMachine, s, { type: 'poll.tally', counts, votersCount: 3 }).accepted).toBe(false);
    }
    expect(step(pollMachine, s, { type: 'poll.tally', counts: [1, 2, 3], votersCount: -1 }).accepted).toBe(false);
    expect(step(pollMachine, newPoll(), { type: 'poll.tally', counts: [1, 2, 3], votersCount: 3 }).accepted).toBe(false);
  });
});

describe('poll machine: multiple-choice rules', () => {
  it('single choice takes one option; multiple takes several, each counted once, one voter', () => {
    const single = newPoll();
    const two = { type: 'poll.vote' as const, voterId: A1, choices: [0, 2], now: t(0), local: true };
    expect(step(pollMachine, single, two).accepted).toBe(false);
    expect(pollVoteRefusal('open', single.context, two)?.error).toBe('Validation failed: You have already voted on this poll');

    const multi = stepOrThrow(pollMachine, newPoll({ multiple: true }), { ...two, choices: [2, 0] });
    expect(multi.emitted[0]).toEqual(voted(A1, [0, 2], true));
    expect(multi.snapshot.context).toMatchObject({ votes: [1, 0, 1], votersCount: 1 });
    // Voting again for an option not chosen yet adds it (Mastodon's VoteValidator), one voter still.
    const more = stepOrThrow(pollMachine, multi.snapshot, { ...two, choices: [1], previous: [0, 2] });
    expect(more.emitted[0]).toEqual(voted(A1, [1], true));
    expect(more.snapshot.context).toMatchObject({ votes: [1, 1, 1], votersCount: 1 });
    // A choice made already, alone or with a new one, is refused (Mastodon 422).
    for (const choices of [[2], [1, 2]]) {
      const again = { ...two, choices, previous: [0, 2] };
      expect(step(pollMachine, multi.snapshot, again).accepted).toBe(false);
      expect(pollVoteRefusal('open', multi.snapshot.context, again)).toEqual({
        reason: 'already_voted', error: 'Validation failed: You have already voted on this poll',
      });
    }
    for (const choices of [[], [0, 0], [3], [-1], [1.5]]) {
      expect(step(pollMachine, newPoll({ multiple: true }), { ...two, choices }).accepted).toBe(false);
    }
  });
});

describe('poll machine: the author and remote voters adding choices', () => {
  it('refuses a vote by the poll\'s author (Mastodon\'s self_vote)', () => {
    const s = newPoll({ authorId: AUTHOR });
    const own = { type: 'poll.vote' as const, voterId: AUTHOR, choices: [0], now: t(0), local: true };
    expect(step(pollMachine, s, own).accepted).toBe(false);
    expect(pollVoteRefusal('open', s.context, own)).toEqual({ reason: 'self_vote', error: 'Validation failed: You cannot vote in your own polls' });
  });

  it('a remote voter adds new choices to a local multiple-choice poll without counting as a second voter', () => {
    let s = newPoll({ multiple: true, authorId: AUTHOR });
    s = stepOrThrow(pollMachine, s, { type: 'poll.vote', voterId: R, choices: [0], now: t(0), local: false }).snapshot;
    const more = stepOrThrow(pollMachine, s, { type: 'poll.vote', voterId: R, choices: [2], now: t(SEC), local: false, previous: [0] });
    expect(more.emitted).toEqual([voted(R, [2], false)]);
    expect(more.snapshot.context).toMatchObject({ votes: [1, 0, 1], votersCount: 1 });
    // The same choice again is the same vote: refused, for a local voter too.
    const same = { type: 'poll.vote' as const, voterId: R, choices: [0], now: t(SEC), local: false, previous: [0, 2] };
    expect(pollVoteRefusal('open', more.snapshot.context, same)?.reason).toBe('already_voted');
    expect(pollVoteRefusal('open', more.snapshot.context, { ...same, voterId: A1, local: true, choices: [0], previous: [0] })?.reason).toBe('already_voted');
    // On a single-choice poll a remote voter votes once.
    const single = stepOrThrow(pollMachine, newPoll(), { type: 'poll.vote', voterId: R, choices: [0], now: t(0), local: false }).snapshot;
    expect(pollVoteRefusal('open', single.context, { ...same, choices: [1], previous: [0] })?.reason).toBe('already_voted');
  });
});

describe('poll definition', () => {
  it('is version 1: a stamped snapshot reads as is, a newer one is refused', () => {
    const s = newPoll();
    expect(pollDefinition.version).toBe(1);
    expect(upgradeSnapshot(pollDefinition, { ...s, definition: 1 })).toEqual(s);
    expect(() => upgradeSnapshot(pollDefinition, { ...s, definition: 2 })).toThrow(InvalidSnapshotError);
    expect(() => pollDefinition.migrate(s, 0)).toThrow(/no migration/);
  });
});
