/**
 * Polls, each stepped through its poll actor (actors/poll) by the actor store
 * (services/actor-store.ts). The votes themselves are rows of poll_votes (one per voter: a local
 * account id or a remote actor URI), written in the transaction of the step that counts them; the
 * snapshot holds the tallies only, so a vote costs the same on the 10,000th voter as on the first.
 *
 *   createPoll          with its status, in the status' transaction (status-writer.ts insertStatus)
 *   votePoll            a local account votes (POST /api/v1/polls/:id/votes)
 *   recordRemoteVote    a remote actor's vote on a local poll (inbound Create(Note) with `name`)
 *   applyRemoteTally    a remote poll's counts from its server (inbound Update(Question))
 *   closePoll           the close timer at expires_at (timers.ts)
 *   sendPollUpdate      the throttled Update timer (timers.ts): `poll.updated` in the outbox
 *   deletePollOfStatus  its status was deleted, in that transaction (statuses.ts deleteStatus)
 *   replaceRemotePoll   a remote edit changed the poll (inbound Update(Question))
 *
 * Every event the actor emits is written to the outbox by the store, and the timers it asks for
 * (`poll.close_scheduled`, `poll.update_scheduled`) are scheduled by the store as POLL_TABLE
 * declares them, each with a dedupe key, and dropped when the poll is deleted (`poll.deleted`).
 */
import type { EntityManager } from '@mikro-orm/core';
import type { PersistedSnapshotOf } from '../../actors/runtime/step.ts';
import {
  pollDefinition,
  pollState,
  pollVoteRefusal,
  type PollEvent,
  type PollMachine,
  type PollSnapshot,
  type PollState,
} from '../../actors/poll/poll.machine.ts';
import type { Services } from '../context.ts';
import { PollSchema, type Poll } from '../db/entities/index.ts';
import { sqlFromEm, type Sql } from '../db/sql.ts';
import { RoostError, Validation, notFound } from '../lib/errors.ts';
import { createActor, stepActor, type ActorTable, type Origin, type StepActorResult } from './actor-store.ts';

const closeKey = (pollId: string) => `poll.close:${pollId}`;
const updateKey = (pollId: string) => `poll.update:${pollId}`;

/**
 * The poll lifecycle's table: one row per poll, created with its status (`createPoll`), its state
 * columns projected from the snapshot, its timers declared. Steps never create the row (no
 * `insert`: a missing poll is a 404).
 */
export const POLL_TABLE: ActorTable<PollMachine, string, Poll> = {
  kind: 'poll',
  table: 'polls',
  entity: PollSchema,
  definition: pollDefinition,
  locate: (id) => ({ where: 'id = $1', params: [id] }),
  // Only read when a row has no snapshot, which createPoll never leaves behind.
  input: (id) => ({ pollId: id }) as never,
  casts: { cached_tallies: 'integer[]', options: 'text[]' },
  project: (snapshot, { now }) => pollColumns(snapshot, now),
  timers: {
    'poll.close_scheduled': (e) => [{ schedule: { type: 'poll.close', pollId: e.pollId }, runAt: new Date(e.runAt), key: closeKey(e.pollId) }],
    // One Update pending per poll (the machine's rule); the key keeps the queue to one as well.
    'poll.update_scheduled': (e) => [{ schedule: { type: 'poll.update_due', pollId: e.pollId }, runAt: new Date(e.runAt), key: updateKey(e.pollId) }],
    'poll.deleted': (e) => [{ cancel: [closeKey(e.pollId), updateKey(e.pollId)] }],
  },
};

function pollColumns(snapshot: PersistedSnapshotOf<PollMachine>, now: Date): Record<string, unknown> {
  const c = snapshot.context;
  return {
    state: pollState(snapshot as PollSnapshot),
    cached_tallies: c.votes,
    votes_count: c.votes.reduce((sum, n) => sum + n, 0),
    voters_count: c.votersCount,
    closed_at: c.closedAt,
    updated_at: now,
  };
}

// ── Creation ─────────────────────────────────────────────────────────────────────────────

export interface PollParams {
  /** Option titles, in order. */
  options: string[];
  /** Seconds from now. */
  expiresIn: number;
  multiple?: boolean;
  hideTotals?: boolean;
}

/**
 * Checks a new poll against config.limits.polls as Mastodon's PollValidator does (4.3 limits:
 * 2–4 options of at most 50 characters, no duplicates, 5 minutes to a month), adding its errors
 * to `v` under Mastodon's attribute names ("Poll options …", "Poll expires at …"). Options are
 * trimmed and blank ones dropped first, as Mastodon's prepare_options.
 */
export function validatePoll(services: Services, poll: PollParams, v: Validation): string[] {
  const limits = services.config.limits.polls;
  const options = poll.options.map((o) => o.trim()).filter((o) => o !== '');
  if (options.length < 2) v.add('poll.options', 'ERR_TOO_SHORT', 'must have more than one item');
  if (options.length > limits.maxOptions) v.add('poll.options', 'ERR_TOO_LONG', `can't contain more than ${limits.maxOptions} items`);
  const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  if (options.some((o) => [...graphemes.segment(o)].length > limits.maxCharactersPerOption)) {
    v.add('poll.options', 'ERR_TOO_LONG', `cannot be longer than ${limits.maxCharactersPerOption} characters each`);
  }
  if (new Set(options).size !== options.length) v.add('poll.options', 'ERR_TAKEN', 'contain duplicate items');
  if (!Number.isFinite(poll.expiresIn) || poll.expiresIn > limits.maxExpiration) v.add('poll.expires_at', 'ERR_INVALID', 'is too far into the future');
  else if (poll.expiresIn < limits.minExpiration) v.add('poll.expires_at', 'ERR_INVALID', 'is too soon');
  return options;
}

export interface NewPoll {
  statusId: string;
  /** The status' author. */
  accountId: string;
  local: boolean;
  /** A remote Question's id; null for a local poll. */
  uri?: string | null;
  options: string[];
  multiple: boolean;
  hideTotals: boolean;
  expiresAt: Date | null;
  /** A remote poll's tallies when first seen. */
  votes?: number[];
  /** A remote poll's voters when first seen (null: its server does not say). */
  votersCount?: number | null;
}

/**
 * Creates the poll row and its actor in the caller's transaction (pass its Sql), through the actor
 * store: the version-0 snapshot, the events of creation (`poll.close_scheduled`) in the outbox, the
 * close timer. Returns the poll id.
 */
export async function createPoll(services: Services, sql: Sql, poll: NewPoll, origin: Origin): Promise<string> {
  const id = services.ids.next();
  await createActor(services, sql, POLL_TABLE, id, {
    origin,
    input: {
      pollId: id,
      local: poll.local,
      options: poll.options,
      multiple: poll.multiple,
      hideTotals: poll.hideTotals,
      expiresAt: poll.expiresAt ? poll.expiresAt.toISOString() : null,
      authorId: poll.accountId,
      votes: poll.votes,
      votersCount: poll.votersCount,
    },
    columns: {
      status_id: poll.statusId,
      account_id: poll.accountId,
      local: poll.local,
      uri: poll.uri ?? null,
      options: poll.options,
      multiple: poll.multiple,
      hide_totals: poll.hideTotals,
      expires_at: poll.expiresAt,
    },
  });
  return id;
}

// ── Votes ────────────────────────────────────────────────────────────────────────────────

function refusal(r: Pick<StepActorResult<PollMachine, Poll>, 'accepted' | 'snapshot'>, vote: Extract<PollEvent, { type: 'poll.vote' }>): RoostError {
  if (r.accepted) throw new Error('refusal of an accepted step');
  const why = pollVoteRefusal(pollState(r.snapshot as PollSnapshot) as PollState, r.snapshot.context, vote);
  return new RoostError(422, why?.error ?? 'Validation failed: The chosen vote option does not exist');
}

/** Whether an error is PostgreSQL's foreign-key violation (the poll went away meanwhile). */
function isForeignKeyViolation(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '23503';
}

/**
 * A local account votes (Mastodon's VoteService): the vote row and the step in one transaction.
 * The unique (poll, voter) key is the double-vote check: a second vote finds the row taken and the
 * machine gives the reason (already voted, or ended first). Refusals are 422s with Mastodon's text.
 */
export async function votePoll(services: Services, accountId: string, pollId: string, choices: number[]): Promise<void> {
  const now = services.clock.now();
  const vote = (previous: number[] | null) => ({ type: 'poll.vote' as const, voterId: accountId, choices, now: now.toISOString(), local: true, previous });
  let asked: Extract<PollEvent, { type: 'poll.vote' }> | undefined;
  try {
    const r = await stepActor(
      services,
      POLL_TABLE,
      pollId,
      // The locking path: the vote row first (a voter who has voted finds it taken, and its earlier
      // choices, which this vote's join on a multiple-choice poll), then the step; a refused step
      // rolls the row's change back.
      async (sql) => {
        const inserted = await sql.query(
          `insert into poll_votes (id, poll_id, voter, account_id, choices, created_at, updated_at)
           values ($1, $2, $3::text, $3::text::bigint, $4::integer[], $5, $5) on conflict (poll_id, voter) do nothing returning id`,
          [services.ids.next(), pollId, accountId, choices, now],
        );
        if (inserted.length) return (asked = vote(null));
        const [earlier] = await sql.query<{ choices: number[] }>(
          `update poll_votes v set choices = (select array_agg(distinct c order by c) from unnest(v.choices || $3::integer[]) c), updated_at = $4
             from poll_votes old where old.id = v.id and v.poll_id = $1 and v.voter = $2::text returning old.choices`,
          [pollId, accountId, choices, now],
        );
        return (asked = vote(earlier ? earlier.choices.map(Number) : []));
      },
      {
        origin: 'client',
        // The fast path, for the thousands of votes in a throttle window: the vote row, the poll's
        // row and snapshot and the outbox events in one statement guarded by the poll's version,
        // after one read — or none, when the poll's last write by this process still holds. A vote
        // that asks for a timer (the first after an Update, or one that closes) takes the locking
        // path, as does a missing poll.
        oneStatement: {
          event: (row) => (asked = vote(row.voted ? [] : null)),
          // A voter who has voted may add choices on a multiple-choice poll: its row is updated,
          // on the locking path. Anyone else who has voted is refused here, from the row read.
          applies: (row) => !(row.voted && row.multiple),
          read: { columns: 'exists (select 1 from poll_votes where poll_id = $1 and voter = $2::text) as voted', params: [pollId, accountId] },
          alsoWrite: {
            sql: `insert into poll_votes (id, poll_id, voter, account_id, choices, created_at, updated_at)
                  select $1, written.id, $2::text, $2::text::bigint, $3::integer[], $4, $4 from written`,
            params: [services.ids.next(), accountId, choices, now],
          },
          // The poll as this process last wrote it, the voter taken as not having voted: one
          // statement per vote while the guess holds (poll_votes' unique key refuses a second vote).
          optimistic: { assume: { voted: false } },
        },
      },
    );
    if (!r.accepted) throw refusal(r, asked!);
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound();
    throw e;
  }
}

export type RemoteVoteResult = { accepted: true } | { accepted: false; reason: string };

/**
 * A remote actor's vote on a local poll, as Mastodon sends it: a Create(Note) whose `name` is an
 * option's title and whose inReplyTo is the Question, one Note per choice. Counted once per
 * voter: a single-choice poll takes one vote, a multiple-choice one each option once (the voter
 * counts once in voters_count). `choiceNames` are the Notes' names (unknown names refuse the
 * vote). `uri` is the Note's id, kept on the vote row. Refusals are values, never thrown (the
 * inbox has nobody to answer).
 */
export async function recordRemoteVote(
  services: Services,
  pollId: string,
  voterUri: string,
  choiceNames: string[],
  opts: { uri?: string | null } = {},
): Promise<RemoteVoteResult> {
  const now = services.clock.now();
  return services.db.em().transactional(async (em) => {
    const sql = sqlFromEm(em);
    // The poll's row first: a voter's earlier choices are read under its lock, so two Notes of one
    // voter arriving at once are counted one after the other.
    const [poll] = await sql.query<{ options: string[] }>(`select options from polls where id = $1 for no key update`, [pollId]);
    if (!poll) return { accepted: false, reason: 'not_found' };
    const choices = [...new Set(choiceNames)].map((name) => poll.options.indexOf(name));
    if (choices.length === 0 || choices.some((c) => c < 0)) return { accepted: false, reason: 'invalid_choice' };
    const [earlier] = await sql.query<{ choices: number[] }>(`select choices from poll_votes where poll_id = $1 and voter = $2`, [pollId, voterUri]);
    const previous = earlier ? earlier.choices.map(Number) : null;
    const vote = { type: 'poll.vote' as const, voterId: voterUri, choices, now: now.toISOString(), local: false, previous };
    const r = await stepActor(services, POLL_TABLE, pollId, vote, { origin: 'federation', em });
    if (!r.accepted) {
      const why = pollVoteRefusal(pollState(r.snapshot as PollSnapshot), r.snapshot.context, vote);
      return { accepted: false, reason: why?.reason ?? r.rejection.reason };
    }
    const merged = [...new Set([...(previous ?? []), ...choices])].sort((a, b) => a - b);
    await sql.query(
      `insert into poll_votes (id, poll_id, voter, account_id, choices, uri, created_at, updated_at)
       values ($1, $2, $3, (select id from accounts where uri = $3 limit 1), $4::integer[], $5, $6, $6)
       on conflict (poll_id, voter) do update set choices = excluded.choices, updated_at = excluded.updated_at`,
      [services.ids.next(), pollId, voterUri, merged, opts.uri ?? null, now],
    );
    return { accepted: true };
  });
}

/**
 * A remote poll's tallies from its server (an Update of the Question): the counts per option in
 * order, the voters (null when the server does not say), and whether it has closed (the first
 * closing tally emits `poll.closed` with the local voters). Refused (false) for a local poll,
 * counts that do not fit the options, or a deleted poll.
 */
export async function applyRemoteTally(
  services: Services,
  pollId: string,
  counts: number[],
  votersCount: number | null,
  closed: boolean,
): Promise<boolean> {
  return services.db.em().transactional(async (em) => {
    const sql = sqlFromEm(em);
    const [poll] = await sql.query<{ id: string }>(`select id::text from polls where id = $1 for no key update`, [pollId]);
    if (!poll) return false;
    const voterIds = closed ? (await sql.query<{ voter: string }>(`select voter from poll_votes where poll_id = $1`, [pollId])).map((v) => v.voter) : undefined;
    const r = await stepActor(services, POLL_TABLE, pollId, { type: 'poll.tally', counts, votersCount, closed, ...(voterIds ? { voterIds } : {}) }, { origin: 'federation', em });
    return r.accepted;
  });
}

// ── Timers and deletion ──────────────────────────────────────────────────────────────────

/**
 * The close timer (at expires_at): `poll.close` with the voters read under the poll's lock, so
 * `poll.closed` names every counted voter. A poll already closed or deleted refuses it: nothing
 * written. Returns whether it closed now.
 */
export async function closePoll(services: Services, pollId: string, origin: Origin = 'timer'): Promise<boolean> {
  return services.db.em().transactional(async (em) => {
    const sql = sqlFromEm(em);
    const [poll] = await sql.query<{ id: string }>(`select id::text from polls where id = $1 for no key update`, [pollId]);
    if (!poll) return false;
    const voters = await sql.query<{ voter: string }>(`select voter from poll_votes where poll_id = $1`, [pollId]);
    const r = await stepActor(services, POLL_TABLE, pollId, { type: 'poll.close', now: services.clock.now().toISOString(), voterIds: voters.map((v) => v.voter) }, { origin, em });
    return r.accepted;
  });
}

/** The throttled Update's timer: `poll.update_due` → `poll.updated` in the outbox (if one is pending). */
export async function sendPollUpdate(services: Services, pollId: string): Promise<boolean> {
  try {
    const r = await stepActor(services, POLL_TABLE, pollId, { type: 'poll.update_due', now: services.clock.now().toISOString() }, { origin: 'timer' });
    return r.accepted;
  } catch (e) {
    if (e instanceof RoostError && e.status === 404) return false;
    throw e;
  }
}

/** The poll of a deleted status goes with it (`poll.deleted`, timers dropped), in the deletion's transaction. */
export async function deletePollOfStatus(services: Services, em: EntityManager, statusId: string, origin: Origin): Promise<void> {
  const [poll] = await sqlFromEm(em).query<{ id: string }>(`select id::text from polls where status_id = $1`, [statusId]);
  if (poll) await stepActor(services, POLL_TABLE, poll.id, { type: 'poll.delete' }, { origin, em });
}

/**
 * A remote status' poll after an edit that changed it (Mastodon's UpdateStatusService with
 * significant changes: other options or kind, or a poll where there was none): the old poll goes
 * (`poll.deleted`, its votes and timers with it) and the new one is created with the stated
 * tallies, in one transaction. Returns the new poll's id, or null when the status is not a live
 * remote status of `accountId`.
 */
export async function replaceRemotePoll(
  services: Services,
  statusId: string,
  accountId: string,
  poll: { uri: string; options: string[]; counts: number[]; multiple: boolean; expiresAt: Date | null; votersCount: number | null },
): Promise<string | null> {
  return services.db.em().transactional(async (em) => {
    const sql = sqlFromEm(em);
    const [status] = await sql.query<{ id: string }>(
      `select id::text from statuses where id = $1 and account_id = $2 and not local and deleted_at is null for update`,
      [statusId, accountId],
    );
    if (!status) return null;
    await deletePollOfStatus(services, em, statusId, 'federation');
    // One poll per status: the old row goes once its actor has ended (its votes with it).
    await sql.query(`delete from polls where status_id = $1 and state = 'deleted'`, [statusId]);
    return createPoll(services, sql, {
      statusId,
      accountId,
      local: false,
      uri: poll.uri,
      options: poll.options,
      multiple: poll.multiple,
      hideTotals: false,
      expiresAt: poll.expiresAt,
      votes: poll.counts,
      votersCount: poll.votersCount ?? (poll.multiple ? null : poll.counts.reduce((sum, n) => sum + n, 0)),
    }, 'federation');
  });
}
