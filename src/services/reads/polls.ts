/**
 * Polls on the read side: a poll is seen by whoever may see its status (reads/statuses.ts
 * visibleSql), and a page of statuses loads its polls with the viewer's own votes in ONE
 * statement whatever the page's size (loadStatusPage). Both read the poll's projected columns
 * (reads/poll-rows.ts), never its snapshot.
 */
import type { Services } from '../../context.ts';
import type { PollRow } from '../../serializers/poll.ts';
import { isId } from './page.ts';
import { pollFromJson, pollJsonSql } from './poll-rows.ts';
import { visibleSql } from './statuses.ts';

/** The poll `id` if the viewer may see its status, with the viewer's votes; else null. */
export async function findVisiblePoll(services: Services, id: string, viewerId: string | null): Promise<PollRow | null> {
  if (!isId(id)) return null;
  const [row] = await services.db.sql.query<{ poll: unknown }>(
    `select ${pollJsonSql('p', 'v')} as poll
       from polls p left join poll_votes v on v.poll_id = p.id and v.voter = $2::text
       join statuses s on s.id = p.status_id
      where p.id = $1 and p.state <> 'deleted' and ${visibleSql('s', '$3::bigint')}`,
    [id, viewerId, viewerId],
  );
  return row ? pollFromJson(row.poll) : null;
}
