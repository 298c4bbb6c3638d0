/**
 * Poll actor: one per poll (local polls and remote Questions alike), keyed by the poll id.
 *
 * Created with its whole description as input (the statuses service creates the poll with its
 * status): `create(pollMachine, input)` gives the version-0 snapshot and `poll.close_scheduled`
 * (entry of `open`, only when the poll has an end), or the first `step` with that input carries
 * the same event in front of its own.
 *
 * States (adjectives):
 *   open     votes are counted
 *   closed   ended (the close timer at expiresAt, the author ending it early, or a remote
 *            tally saying so); remote tallies may still correct the counts
 *   deleted  its status was deleted; accepts nothing
 *
 * Events (imperatives; `now` is an ISO instant the service reads from its clock):
 *   poll.vote       {voterId, choices, now, local, previous?} — voterId is a local account id or
 *                   a remote actor URI; `local` says the voter is a local account; `previous` is
 *                   the voter's earlier choices on this poll (a fact the service reads from its
 *                   vote rows, null or absent when none). Refused (see `pollVoteRefusal`, which
 *                   gives the reason and Mastodon's 422 message) when closed, expired
 *                   (now ≥ expiresAt), the voter is the poll's author (Mastodon's self_vote),
 *                   choices empty / out of range / duplicated, more than one choice on a
 *                   single-choice poll, the voter already voted on a single-choice poll or
 *                   votes again for a choice it made, or a remote voter on a remote poll (its
 *                   votes reach us as tallies). On a multiple-choice poll any voter (local, or
 *                   remote on a local poll: Mastodon sends one Note per choice) may add choices
 *                   it has not made yet, as Mastodon's VoteValidator allows: counted, but not as
 *                   a new voter.
 *   poll.close      {now, voterIds?} — open → closed. Once: in closed it is refused, so the close
 *                   timer firing after an early close writes nothing. `voterIds` (read by the
 *                   service from the vote rows) travel on in `poll.closed`.
 *   poll.tally      {counts, votersCount, closed?, voterIds?} — a remote poll's Update: replaces
 *                   the counts; `closed: true` closes it (closedAt = expiresAt, the end its server
 *                   announced). Refused for local polls and for counts that do not fit the options.
 *   poll.update_due {now} — the throttle timer: only while an Update is pending.
 *   poll.delete     open/closed → deleted.
 *
 * Emitted (facts):
 *   poll.close_scheduled {pollId, runAt}   on creation, runAt = expiresAt (no end, no timer)
 *   poll.voted {pollId, voterId, choices, local, pollLocal}
 *                                          every accepted vote; `local` on a remote poll
 *                                          (`pollLocal` false) means "deliver this vote to the
 *                                          poll's server"
 *   poll.update_scheduled {pollId, runAt}  a vote on a LOCAL poll while no Update is pending:
 *                                          runAt = max(now, lastUpdateSentAt) + 3 min. At most
 *                                          one pending, so the Update of the Question goes out
 *                                          at most once per 3 minutes per poll, and never sooner
 *                                          than 3 minutes after the vote that asked for it.
 *   poll.updated {pollId}                  send the Update now (on poll.update_due, and the
 *                                          final one when a local poll closes)
 *   poll.closed {pollId, voterIds, authorId}
 *                                          exactly once per poll: the poll-ended notification
 *                                          for the voters (local account ids; remote ones are
 *                                          URIs) and the author
 *   poll.deleted {pollId}                  drop pending timers
 *
 * Context holds the counts, never the list of voters: a poll with 10,000 voters keeps a snapshot
 * of a few hundred bytes, so a vote costs the same whatever came before (test/bench/polls.ts).
 * Who voted for what lives in the service's vote rows (poll_votes), which give the machine the
 * voter's earlier choices (`previous`) and the voters at close. The Poll entity is rendered from
 * the columns the store projects (src/serializers/poll.ts), not here.
 */
import { assign, emit, enqueueActions, setup } from 'xstate';
import type { PersistedSnapshot } from '../runtime/step.ts';
import { InvalidSnapshotError } from '../runtime/step.ts';
import { defineMachine } from '../runtime/definition.ts';

/** The mission's throttle: one ActivityPub Update per poll per 3 minutes. */
export const POLL_UPDATE_INTERVAL_MS = 3 * 60 * 1000;

export interface PollInput {
  pollId: string;
  /** The poll belongs to this server (its Updates are ours to send). */
  local: boolean;
  /** Option titles, in order. */
  options: string[];
  multiple: boolean;
  hideTotals: boolean;
  /** ISO instant, or null for a (remote) poll without an end. */
  expiresAt: string | null;
  /** The account that wrote the poll's status (it may not vote on it). */
  authorId?: string | null;
  /** A remote poll's tallies when first seen; zeros otherwise. */
  votes?: number[];
  /** A remote poll's voters when first seen: null when its server does not say (a multiple-choice one). */
  votersCount?: number | null;
}

export interface PollContext {
  pollId: string;
  local: boolean;
  options: string[];
  multiple: boolean;
  hideTotals: boolean;
  expiresAt: string | null;
  authorId: string | null;
  /** Votes per option, same order as options. */
  votes: number[];
  /** Distinct voters (for a remote poll: what its server says; null when it does not say). */
  votersCount: number | null;
  closedAt: string | null;
  /** When the last Update of the Question was sent (local polls). */
  lastUpdateSentAt: string | null;
  /** An Update is scheduled and not yet sent. */
  updatePending: boolean;
}

export type PollEvent =
  | { type: 'poll.vote'; voterId: string; choices: number[]; now: string; local: boolean; previous?: number[] | null }
  | { type: 'poll.close'; now: string; voterIds?: string[] }
  | { type: 'poll.tally'; counts: number[]; votersCount: number | null; closed?: boolean; voterIds?: string[] }
  | { type: 'poll.update_due'; now: string }
  | { type: 'poll.delete' };

export type PollEmitted =
  | { type: 'poll.close_scheduled'; pollId: string; runAt: string }
  | { type: 'poll.voted'; pollId: string; voterId: string; choices: number[]; local: boolean; pollLocal: boolean }
  | { type: 'poll.update_scheduled'; pollId: string; runAt: string }
  | { type: 'poll.updated'; pollId: string }
  | { type: 'poll.closed'; pollId: string; voterIds: string[]; authorId: string | null }
  | { type: 'poll.deleted'; pollId: string };

export type PollState = 'open' | 'closed' | 'deleted';

export type PollSnapshot = PersistedSnapshot<PollContext>;

export type PollVoteRefusalReason =
  | 'closed'
  | 'expired'
  | 'already_voted'
  | 'self_vote'
  | 'no_choice'
  | 'invalid_choice'
  | 'duplicate_choice'
  | 'single_choice'
  | 'remote_poll'
  | 'invalid_time';

export interface PollVoteRefusal {
  reason: PollVoteRefusalReason;
  /** Mastodon's 422 body text. */
  error: string;
}

const REFUSAL_ERRORS: Record<PollVoteRefusalReason, string> = {
  closed: 'Validation failed: The poll has already ended',
  expired: 'Validation failed: The poll has already ended',
  already_voted: 'Validation failed: You have already voted on this poll',
  self_vote: 'Validation failed: You cannot vote in your own polls',
  no_choice: 'Validation failed: Choices can\'t be blank',
  invalid_choice: 'Validation failed: The chosen vote option does not exist',
  duplicate_choice: 'Validation failed: You have already voted on this poll',
  single_choice: 'Validation failed: You have already voted on this poll',
  remote_poll: 'Validation failed: Votes on a remote poll come from its server',
  invalid_time: 'Validation failed: invalid time',
};

function ms(iso: string | null): number {
  return iso === null ? Number.NaN : Date.parse(iso);
}

/** Whether the poll is past its end at `now` (closed or not). */
export function pollExpiredAt(context: PollContext, now: string): boolean {
  return context.expiresAt !== null && ms(now) >= ms(context.expiresAt);
}

/**
 * Why `poll.vote` would be refused in `state`, or null when it would be accepted. The machine's
 * guard is this function; a service calls it after a rejected step for the 422 message.
 */
export function pollVoteRefusal(
  state: PollState,
  context: PollContext,
  vote: { voterId: string; choices: number[]; now: string; local: boolean; previous?: number[] | null },
): PollVoteRefusal | null {
  const refuse = (reason: PollVoteRefusalReason): PollVoteRefusal => ({ reason, error: REFUSAL_ERRORS[reason] });
  if (state !== 'open') return refuse('closed');
  if (!Number.isFinite(ms(vote.now))) return refuse('invalid_time');
  if (pollExpiredAt(context, vote.now)) return refuse('expired');
  if (!context.local && !vote.local) return refuse('remote_poll');
  if (context.authorId !== null && vote.voterId === context.authorId) return refuse('self_vote');
  const previous = vote.previous ?? null;
  // On a multiple-choice poll a voter may add choices it has not made (a remote one sends one Note
  // per choice); on a single-choice poll everyone votes once.
  const adding = previous !== null && context.multiple;
  if (previous !== null && !adding) return refuse('already_voted');
  if (!Array.isArray(vote.choices) || vote.choices.length === 0) return refuse('no_choice');
  if (vote.choices.some((c) => !Number.isInteger(c) || c < 0 || c >= context.options.length)) return refuse('invalid_choice');
  if (new Set(vote.choices).size !== vote.choices.length) return refuse('duplicate_choice');
  if (!context.multiple && vote.choices.length > 1) return refuse('single_choice');
  if (adding && vote.choices.some((c) => previous.includes(c))) return refuse('already_voted');
  return null;
}

function validTally(context: PollContext, event: PollEvent): boolean {
  if (event.type !== 'poll.tally' || context.local) return false;
  const countOk = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  return (
    Array.isArray(event.counts) &&
    event.counts.length === context.options.length &&
    event.counts.every(countOk) &&
    (event.votersCount === null || countOk(event.votersCount))
  );
}

function validNow(event: PollEvent): boolean {
  return 'now' in event && typeof event.now === 'string' && Number.isFinite(ms(event.now));
}

export const pollMachine = setup({
  types: {
    context: {} as PollContext,
    events: {} as PollEvent,
    input: {} as PollInput,
    emitted: {} as PollEmitted,
  },
  guards: {
    voteAcceptable: ({ context, event }) => event.type === 'poll.vote' && pollVoteRefusal('open', context, event) === null,
    validTally: ({ context, event }) => validTally(context, event),
    closingTally: ({ context, event }) => validTally(context, event) && event.type === 'poll.tally' && event.closed === true,
    validNow: ({ event }) => validNow(event),
    updatePending: ({ context, event }) => context.updatePending && validNow(event),
  },
  actions: {
    scheduleClose: enqueueActions(({ context, enqueue }) => {
      if (context.expiresAt !== null) enqueue.emit({ type: 'poll.close_scheduled', pollId: context.pollId, runAt: context.expiresAt });
    }),
    recordVote: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'poll.vote') return;
      const choices = [...event.choices].sort((a, b) => a - b);
      const votes = context.votes.map((n, i) => (choices.includes(i) ? n + 1 : n));
      const scheduleUpdate = context.local && !context.updatePending;
      const newVoter = event.previous === undefined || event.previous === null;
      enqueue.assign({
        votes,
        votersCount: context.votersCount === null ? null : context.votersCount + (newVoter ? 1 : 0),
        updatePending: context.updatePending || context.local,
      });
      enqueue.emit({ type: 'poll.voted', pollId: context.pollId, voterId: event.voterId, choices, local: event.local, pollLocal: context.local });
      if (scheduleUpdate) {
        // Never sooner than 3 minutes after the vote that asks for it (Mastodon's VoteService
        // queues the Update 3 minutes out): an Update at once would tell the followers this one
        // voter's choice by its timing. And at most one per 3 minutes.
        const afterVote = ms(event.now) + POLL_UPDATE_INTERVAL_MS;
        const afterLast = context.lastUpdateSentAt === null ? afterVote : ms(context.lastUpdateSentAt) + POLL_UPDATE_INTERVAL_MS;
        const runAt = new Date(Math.max(afterVote, afterLast)).toISOString();
        enqueue.emit({ type: 'poll.update_scheduled', pollId: context.pollId, runAt });
      }
    }),
    sendUpdate: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'poll.update_due') return;
      enqueue.assign({ updatePending: false, lastUpdateSentAt: event.now });
      enqueue.emit({ type: 'poll.updated', pollId: context.pollId });
    }),
    applyTally: assign(({ context, event }) => {
      if (event.type !== 'poll.tally') return {};
      const votersCount =
        event.votersCount ?? (context.multiple ? context.votersCount : event.counts.reduce((sum, n) => sum + n, 0));
      return { votes: [...event.counts], votersCount };
    }),
    /** Closing: closedAt, the final Update of a local poll, the notification fact. */
    close: enqueueActions(({ context, event, enqueue }) => {
      const now = event.type === 'poll.close' ? event.now : (context.expiresAt ?? null);
      enqueue.assign({ closedAt: now, updatePending: false });
      if (context.local && event.type === 'poll.close') {
        enqueue.assign({ lastUpdateSentAt: event.now });
        enqueue.emit({ type: 'poll.updated', pollId: context.pollId });
      }
      const voterIds = (event.type === 'poll.close' || event.type === 'poll.tally') && Array.isArray(event.voterIds) ? [...event.voterIds].sort() : [];
      enqueue.emit({ type: 'poll.closed', pollId: context.pollId, voterIds, authorId: context.authorId });
    }),
    announceDeleted: emit(({ context }) => ({ type: 'poll.deleted' as const, pollId: context.pollId })),
  },
}).createMachine({
  id: 'poll',
  context: ({ input }) => {
    if (typeof input?.pollId !== 'string' || input.pollId === '') throw new TypeError('poll: input.pollId must be a non-empty string');
    if (!Array.isArray(input.options) || input.options.length < 1 || input.options.some((o) => typeof o !== 'string')) {
      throw new TypeError('poll: input.options must be a non-empty list of titles');
    }
    if (input.expiresAt !== null && !Number.isFinite(ms(input.expiresAt))) throw new TypeError('poll: input.expiresAt must be an ISO instant or null');
    const votes = input.votes ?? input.options.map(() => 0);
    if (votes.length !== input.options.length) throw new TypeError('poll: input.votes must have one count per option');
    return {
      pollId: input.pollId,
      local: input.local,
      options: [...input.options],
      multiple: input.multiple,
      hideTotals: input.hideTotals,
      expiresAt: input.expiresAt === null ? null : new Date(input.expiresAt).toISOString(),
      authorId: input.authorId ?? null,
      votes: [...votes],
      votersCount: input.votersCount === undefined ? 0 : input.votersCount,
      closedAt: null,
      lastUpdateSentAt: null,
      updatePending: false,
    };
  },
  initial: 'open',
  states: {
    open: {
      entry: 'scheduleClose',
      on: {
        'poll.vote': { guard: 'voteAcceptable', actions: 'recordVote' },
        'poll.close': { guard: 'validNow', target: 'closed', actions: 'close' },
        'poll.tally': [
          { guard: 'closingTally', target: 'closed', actions: ['applyTally', 'close'] },
          { guard: 'validTally', actions: 'applyTally' },
        ],
        'poll.update_due': { guard: 'updatePending', actions: 'sendUpdate' },
        'poll.delete': { target: 'deleted', actions: 'announceDeleted' },
      },
    },
    closed: {
      on: {
        // A remote server's late Update still corrects the counts; it never closes twice.
        'poll.tally': { guard: 'validTally', actions: 'applyTally' },
        'poll.delete': { target: 'deleted', actions: 'announceDeleted' },
      },
    },
    deleted: {},
  },
});

/** The state of a persisted poll snapshot. */
export function pollState(snapshot: PollSnapshot): PollState {
  return snapshot.value as PollState;
}

/** Closed or deleted: no more votes. */
export function pollClosed(snapshot: PollSnapshot): boolean {
  return snapshot.value !== 'open';
}

/** Definition 1. Nothing was stored before it, so there is nothing to migrate from yet. */
export const pollDefinition = defineMachine(pollMachine, {
  version: 1,
  migrate: (_stored, from) => {
    throw new InvalidSnapshotError(`poll: no migration from definition ${from} to 1`);
  },
});
export type PollMachine = typeof pollMachine;
