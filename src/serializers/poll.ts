/**
 * Mastodon's Poll entity (entities/Poll.md), pure: a poll's row (its projected columns: state,
 * options, end, hidden totals, tallies; reads/poll-rows.ts) and the viewer's own vote in, JSON out.
 * `voted` and `own_votes` only for a signed-in viewer; `emojis` as the status view found them.
 */

export interface PollRow {
  id: string;
  statusId: string;
  /** The author of the poll's status. */
  accountId: string;
  /** The actor's state: open, closed (ended) or deleted. */
  state: string;
  /** Option titles, in order. */
  options: string[];
  multiple: boolean;
  hideTotals: boolean;
  /** ISO instant, or null for a (remote) poll without an end. */
  expiresAt: string | null;
  /** Votes per option, same order as options. */
  votes: number[];
  /** Distinct voters (for a remote poll: what its server says; null when it does not say). */
  votersCount: number | null;
  /** The viewer's choices (null: not voted, or nobody signed in). */
  ownVotes: number[] | null;
}

export interface MastodonPoll {
  id: string;
  expires_at: string | null;
  expired: boolean;
  multiple: boolean;
  votes_count: number;
  voters_count: number | null;
  options: { title: string; votes_count: number | null }[];
  emojis: unknown[];
  voted?: boolean;
  own_votes?: number[];
}

/**
 * The poll at `now`. Option counts are null while totals are hidden and the poll is not expired
 * (ended, or past its end before the close timer ran), except for the author (mission spec:
 * results shown at once to the author). `voters_count` is given for single-choice polls too, as
 * Mastodon answers (its docs say null; its API and clients rely on the number). `voted` and
 * `own_votes` only for a viewer; the author counts as having voted (Mastodon's `voted?`).
 * `emojis`: the custom emojis its options use, rendered (none by default).
 */
export function serializePoll(poll: PollRow, viewerId: string | null, now: Date, emojis: unknown[] = []): MastodonPoll {
  const isAuthor = viewerId !== null && viewerId === poll.accountId;
  const expired = poll.state !== 'open' || (poll.expiresAt !== null && now.getTime() >= Date.parse(poll.expiresAt));
  const showCounts = !poll.hideTotals || expired || isAuthor;
  const json: MastodonPoll = {
    id: poll.id,
    expires_at: poll.expiresAt,
    expired,
    multiple: poll.multiple,
    votes_count: poll.votes.reduce((sum, n) => sum + n, 0),
    voters_count: poll.votersCount,
    options: poll.options.map((title, i) => ({ title, votes_count: showCounts ? (poll.votes[i] ?? 0) : null })),
    emojis,
  };
  if (viewerId !== null) {
    const own = poll.ownVotes;
    json.voted = isAuthor || (own !== null && own.length > 0);
    json.own_votes = own ? [...own].sort((a, b) => a - b) : [];
  }
  return json;
}
