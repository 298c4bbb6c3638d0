/**
 * Polls on the read side: a poll is seen by whoever may see its status (reads/statuses.ts
 * visibleSql), and a page of statuses loads its polls with the viewer's own votes in ONE
 * statement whatever the page's size (loadStatusPage).
 */
import type { Services } from '../../context.ts';
import type { PollSnapshot } from '../../../actors/poll/poll.machine.ts';
import type { PollRow } from '../../serializers/poll.ts';
import { isId } from './page.ts';
import { visibleSql } from './statuses.ts';

interface RawPoll {
  id: string;
  status_id: string;
  account_id: string;
  machine: PollSnapshot;
  own_votes: number[] | null;
}

function toRow(r: RawPoll): PollRow {
  return { id: r.id, statusId: r.status_id, accountId: r.account_id, snapshot: r.machine, ownVotes: r.own_votes ? r.own_votes.map(Number) : null };
}

const SELECT = `select p.id::text, p.status_id::text, p.account_id::text, p.machine, v.choices as own_votes
   from polls p left join poll_votes v on v.poll_id = p.id and v.voter = $2::text`;

/** The poll `id` if the viewer may see its status, with the viewer's votes; else null. */
export async function findVisiblePoll(services: Services, id: string, viewerId: string | null): Promise<PollRow | null> {
  if (!isId(id)) return null;
  const [row] = await services.db.sql.query<RawPoll>(
    `${SELECT} join statuses s on s.id = p.status_id
      where p.id = $1 and p.state <> 'deleted' and ${visibleSql('s', '$3::bigint')}`,
    [id, viewerId, viewerId],
  );
  return row ? toRow(row) : null;
}
