/**
 * The profile directory (GET /api/v1/directory, Mastodon's Api::V1::DirectoriesController): the
 * accounts that opted into discovery (`discoverable` true; unset is not consent), not suspended,
 * silenced, moved or pending approval; `active` orders by latest status (never-posting accounts
 * last), `new` by newest account; `local` keeps local ones. A signed-in viewer does not see the
 * accounts it blocks, mutes or is blocked by, nor (unless `local`) those of domains it blocks.
 * One statement for the page of ids.
 */
import type { Services } from '../../context.ts';
import { hiddenFromSql } from '../../db/audience.ts';

export interface DirectoryQuery {
  viewerId: string | null;
  order: 'active' | 'new';
  local: boolean;
  offset: number;
  limit: number;
}

export async function directoryPage(services: Services, d: DirectoryQuery): Promise<string[]> {
  const rows = await services.db.sql.query<{ id: string }>(
    `select a.id::text from accounts a left join account_stats st on st.account_id = a.id
      where a.discoverable is true and a.suspended_at is null and a.silenced_at is null and a.moved_to_account_id is null
        and not exists (select 1 from users u where u.account_id = a.id and (not u.approved or u.disabled))
        and (not $2::boolean or a.domain is null)
        and ($1::bigint is null or a.id = $1 or not ${hiddenFromSql('$1::bigint', 'a.id', '$3::timestamptz')})
      order by ${d.order === 'new' ? 'a.id desc' : 'st.last_status_at desc nulls last, a.id desc'}
      limit $4 offset $5`,
    [d.viewerId, d.local, services.clock.now(), d.limit, d.offset],
  );
  return rows.map((r) => r.id);
}
