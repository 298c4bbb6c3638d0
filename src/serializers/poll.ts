/**
 * Mastodon's Poll entity (entities/Poll.md), pure: a poll's snapshot (actors/poll renderPoll
 * reads the counts, the end and the hidden totals) and the viewer's own vote row in, JSON out.
 * `voted` and `own_votes` only for a signed-in viewer; `emojis` as the status view found them.
 */
import { renderPoll, type PollSnapshot } from '../../actors/poll/poll.machine.ts';

export interface PollRow {
  id: string;
  statusId: string;
  /** The author of the poll's status. */
  accountId: string;
  snapshot: PollSnapshot;
  /** The viewer's choices (null: not voted, or nobody signed in). */
  ownVotes: number[] | null;
}

export interface MastodonPoll {
  id: string;
  expires_at: string | null;
  expired: boolean;
  multiple: boolean;
  votes_count: number;
  voters_count: number;
  options: { title: string; votes_count: number | null }[];
  emojis: unknown[];
  voted?: boolean;
  own_votes?: number[];
}

/** `emojis`: the custom emojis its options use, rendered (none by default). */
export function serializePoll(poll: PollRow, viewerId: string | null, now: Date, emojis: unknown[] = []): MastodonPoll {
  const viewer = viewerId === null ? null : { accountId: viewerId, isAuthor: viewerId === poll.accountId, ownVotes: poll.ownVotes };
  const f = renderPoll(poll.snapshot, viewer, now.toISOString());
  return {
    id: poll.id,
    expires_at: f.expires_at,
    expired: f.expired,
    multiple: f.multiple,
    votes_count: f.votes_count,
    voters_count: f.voters_count,
    options: f.options,
    emojis,
    ...(viewer ? { voted: f.voted, own_votes: f.own_votes } : {}),
  };
}
