/**
 * A poll as the read side renders it, from the columns the actor store projects from its snapshot
 * (state, tallies, voters) and those written with the poll (options, end, `hide_totals`, which an
 * edit may change): the snapshot itself is never read here, so a reader needs no definition of the
 * machine to understand it. One JSON object per poll, the same in a status page
 * (reads/statuses.ts) and GET /api/v1/polls/:id (reads/polls.ts).
 */
import type { PollRow } from '../../serializers/poll.ts';

/**
 * SQL: the poll `p` as one JSON object, with the viewer's choices from the vote row `v` (a left
 * join on poll_votes, or null).
 */
export function pollJsonSql(p: string, v: string): string {
  return `json_build_object('id', ${p}.id::text, 'status_id', ${p}.status_id::text, 'account_id', ${p}.account_id::text,
     'state', ${p}.state, 'options', ${p}.options, 'multiple', ${p}.multiple, 'hide_totals', ${p}.hide_totals,
     'expires_at', ${p}.expires_at, 'tallies', ${p}.cached_tallies, 'voters_count', ${p}.voters_count, 'own_votes', ${v}.choices)`;
}

interface PollJson {
  id: string;
  status_id: string;
  account_id: string;
  state: string;
  options: string[];
  multiple: boolean;
  hide_totals: boolean;
  expires_at: string | null;
  tallies: number[];
  voters_count: number;
  own_votes: number[] | null;
}

/** The object `pollJsonSql` builds (parsed already, or text: the drivers differ), as a PollRow. */
export function pollFromJson(value: unknown): PollRow | null {
  if (value === null || value === undefined) return null;
  const p = (typeof value === 'string' ? JSON.parse(value) : value) as PollJson;
  return {
    id: p.id,
    statusId: p.status_id,
    accountId: p.account_id,
    state: p.state,
    options: p.options,
    multiple: p.multiple,
    hideTotals: p.hide_totals,
    // json_build_object writes a timestamptz with the session's offset; the entity has UTC ISO.
    expiresAt: p.expires_at === null ? null : new Date(p.expires_at).toISOString(),
    votes: p.tallies.map(Number),
    votersCount: p.voters_count === null ? null : Number(p.voters_count),
    ownVotes: p.own_votes ? p.own_votes.map(Number) : null,
  };
}
