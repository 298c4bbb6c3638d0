/**
 * Polls between servers, as Mastodon federates them:
 *
 *   inbound   a vote on a local poll is a Create(Note) whose `name` is an option's title and whose
 *             inReplyTo is the Question (one Note per choice): counted through recordRemoteVote,
 *             never stored as a status. An Update(Question) of a remote poll carries its latest
 *             tallies: applied through applyRemoteTally (and the edit itself, when it is one,
 *             through updateNote). Create(Question) and Delete go the way of every status
 *             (./remote-statuses.ts persistNote, services/remote-statuses.ts).
 *   outbound  the rows effects/dispatch.ts needs for a local account's vote on a remote poll (one
 *             Create(Note) per choice to the poll's author); the remote voters of a local poll get
 *             its throttled Update(Question) too (./audience.ts statusReach).
 */
import type { Context } from '@fedify/fedify';
import type { Note, Question } from '@fedify/vocab';
import type { Services } from '../context.ts';
import type { Account } from '../db/entities/index.ts';
import { applyRemoteTally, recordRemoteVote, replaceRemotePoll, type RemoteVoteResult } from '../services/polls.ts';
import { statusByUri } from '../services/remote-statuses.ts';
import { questionPoll } from './convert/from-as.ts';
import type { VoteFacts } from './convert/to-as.ts';
import { ownedBy, updateNote } from './remote-statuses.ts';
import type { RemoteRecipientRow } from './audience.ts';

/** Whether a Note is shaped as a vote: a `name`, a reply target, no content (Mastodon's poll_vote?). */
export function isVoteShaped(note: Note): boolean {
  return note.name != null && String(note.name).trim() !== '' && note.replyTargetId !== null;
}

/**
 * A remote actor's vote Note on a local poll. Returns null when the Note does not reply to a local
 * status with a poll (it is then an ordinary reply), else what recordRemoteVote answered. Only the
 * signer's own Notes count; a duplicate delivery or a second vote is refused there, as is a vote
 * on an ended poll.
 */
export async function receiveVote(services: Services, note: Note, by: Account): Promise<RemoteVoteResult | null> {
  const target = note.replyTargetId?.href;
  if (!target) return null;
  const [poll] = await services.db.sql.query<{ id: string }>(
    `select p.id::text from statuses s join polls p on p.status_id = s.id where s.uri = $1 and s.local and p.local`,
    [target],
  );
  if (!poll) return null;
  if (note.attributionIds[0]?.href !== by.uri) return { accepted: false, reason: 'not_owned' };
  const result = await recordRemoteVote(services, poll.id, by.uri, [String(note.name).trim()], { uri: note.id?.href ?? null });
  const log = services.log.child({ module: 'polls' });
  if (result.accepted) log.info({ pollId: poll.id, voter: by.uri }, 'remote vote counted');
  else log.info({ pollId: poll.id, voter: by.uri, reason: result.reason }, 'remote vote refused');
  return result;
}

/**
 * Update(Question) from its author: an edit (a newer `updated`) goes through updateNote like a
 * Note's, and when it changed the poll (other options or kind) the poll is replaced, votes reset,
 * as Mastodon's UpdateStatusService does; otherwise the tallies, votersCount and `closed` are
 * applied through applyRemoteTally. Returns whether the poll changed.
 */
export async function updateQuestion(services: Services, ctx: Context<void>, q: Question, author: Account, raw?: unknown): Promise<boolean> {
  if (!ownedBy(q, author)) return false;
  const status = await statusByUri(services, q.id!.href);
  if (!status || status.local || status.deleted || status.accountId !== author.id) return false;
  const edited = q.updated ? (await updateNote(services, ctx, q, author, raw)) !== null : false;
  const poll = await questionPoll(q);
  if (!poll) return false;
  const [row] = await services.db.sql.query<{ id: string; options: string[]; multiple: boolean }>(
    `select id::text, options, multiple from polls where status_id = $1 and state <> 'deleted'`,
    [status.id],
  );
  const changed = !row || row.multiple !== poll.multiple || row.options.length !== poll.options.length || row.options.some((o, i) => o !== poll.options[i]);
  if (changed) {
    // Only an edit may change a poll (a mere tally Update with other options is refused).
    if (!edited) return false;
    return (await replaceRemotePoll(services, status.id, author.id, { uri: q.id!.href, ...poll })) !== null;
  }
  return applyRemoteTally(services, row.id, poll.counts, poll.votersCount, poll.closed);
}

// ── Outbound ─────────────────────────────────────────────────────────────────────────────

/** A local account's vote on a remote poll, with what its Notes name (null when not that). */
export interface VoteAs {
  voterUsername: string;
  author: RemoteRecipientRow;
  /** One per choice of the vote event. */
  votes: VoteFacts[];
}

/**
 * The vote of local account `voterId` on poll `pollId`, for the `choices` of one `poll.voted`
 * event: null unless the poll is remote (and not deleted), its author a remote account not
 * suspended, and the vote row still there.
 */
export async function loadVoteAs(services: Services, pollId: string, voterId: string, choices: readonly number[]): Promise<VoteAs | null> {
  const [row] = await services.db.sql.query<{
    vote_id: string; options: string[]; question_uri: string; voter_uri: string; username: string;
    author_id: string; author_uri: string; inbox_url: string | null; shared_inbox_url: string | null;
  }>(
    `select v.id::text as vote_id, p.options, s.uri as question_uri, va.uri as voter_uri, va.username,
            aa.id::text as author_id, aa.uri as author_uri, aa.inbox_url, aa.shared_inbox_url
       from polls p
       join statuses s on s.id = p.status_id and s.deleted_at is null
       join poll_votes v on v.poll_id = p.id and v.voter = $2::text
       join accounts va on va.id = v.account_id and va.domain is null
       join accounts aa on aa.id = p.account_id and aa.domain is not null and aa.suspended_at is null
      where p.id = $1 and not p.local and p.state <> 'deleted'`,
    [pollId, voterId],
  );
  if (!row) return null;
  const votes = [...new Set(choices)]
    .filter((c) => Number.isInteger(c) && c >= 0 && c < row.options.length)
    .map((choice) => ({
      voteId: row.vote_id,
      choice,
      name: row.options[choice]!,
      voterUri: row.voter_uri,
      questionUri: row.question_uri,
      pollAuthorUri: row.author_uri,
    }));
  return {
    voterUsername: row.username,
    author: { id: row.author_id, uri: row.author_uri, inbox_url: row.inbox_url, shared_inbox_url: row.shared_inbox_url },
    votes,
  };
}

/** The local poll `pollId`'s status id (null when the poll is remote or gone). */
export async function localPollStatusId(services: Services, pollId: string): Promise<string | null> {
  const [row] = await services.db.sql.query<{ status_id: string }>(`select status_id::text from polls where id = $1 and local`, [pollId]);
  return row?.status_id ?? null;
}
