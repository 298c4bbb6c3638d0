/**
 * Follow suggestions (Mastodon 4.3's AccountSuggestions), from four sources, in this order:
 *
 * - `friends_of_friends`: accounts followed by the accounts the viewer follows, most shared first;
 * - `featured`: accounts the server's staff (local users whose role holds any permission) endorse
 *   on their profiles (Mastodon's staff picks);
 * - `most_followed`: accounts with the most local followers who were active in the last 30 days
 *   (at least POPULAR of them);
 * - `most_interactions`: accounts whose statuses of the last 30 days local accounts favourited or
 *   reblogged most (at least POPULAR distinct accounts).
 *
 * An account several sources name is suggested once with all of them (`sources`), its deprecated
 * `source` from the first: staff for featured, past_interactions for friends of friends, global
 * for the popular ones. Never the viewer, accounts it already follows or requested, blocks either
 * way, mutes, or dismissed suggestions; and, as Mastodon, only accounts that opted into discovery
 * (discoverable true; unset is not consent), not suspended, silenced or moved. One statement.
 */
import type { Services } from '../context.ts';

export type SuggestionSource = 'friends_of_friends' | 'featured' | 'most_followed' | 'most_interactions';

export interface Suggestion {
  id: string;
  source: 'staff' | 'past_interactions' | 'global';
  sources: SuggestionSource[];
}

/** Local followers (or interacting accounts) an account needs to count as popular. */
export const POPULAR = 3;
const WINDOW_MS = 30 * 86_400_000;

const EXCLUDED = `
  a.id <> $1 and a.suspended_at is null and a.silenced_at is null
  and a.discoverable is true and a.moved_to_account_id is null
  and not exists (select 1 from follows f where f.account_id = $1 and f.target_account_id = a.id and f.state in ('accepted', 'requested'))
  and not exists (select 1 from blocks b where (b.account_id = $1 and b.target_account_id = a.id) or (b.account_id = a.id and b.target_account_id = $1))
  and not exists (select 1 from mutes m where m.account_id = $1 and m.target_account_id = a.id)
  and not exists (select 1 from follow_recommendation_mutes d where d.account_id = $1 and d.target_account_id = a.id)`;

export async function suggestAccounts(services: Services, viewerId: string, limit: number): Promise<Suggestion[]> {
  const now = services.clock.now();
  const rows = await services.db.sql.query<{ id: string; sources: SuggestionSource[] | string }>(
    `with cand as (
       (select theirs.target_account_id as id, 1 as prio, count(*)::float8 as score
          from follows mine join follows theirs on theirs.account_id = mine.target_account_id and theirs.state = 'accepted'
         where mine.account_id = $1 and mine.state = 'accepted'
         group by theirs.target_account_id order by count(*) desc limit $2 * 4)
       union all
       (select p.target_account_id, 2, count(*)::float8
          from account_pins p join users su on su.account_id = p.account_id join user_roles r on r.id = su.role_id and r.permissions <> 0
         where not su.disabled
         group by p.target_account_id order by count(*) desc limit $2 * 4)
       union all
       (select f.target_account_id, 3, count(*)::float8
          from follows f join users fu on fu.account_id = f.account_id and fu.current_sign_in_at >= $3
         where f.state = 'accepted'
         group by f.target_account_id having count(*) >= ${POPULAR} order by count(*) desc limit $2 * 4)
       union all
       (select x.account_id, 4, count(distinct x.by)::float8 from (
          select s.account_id, fv.account_id as by from favourites fv join statuses s on s.id = fv.status_id
           where fv.created_at >= $3 and s.created_at >= $3 and s.deleted_at is null
          union all
          select o.account_id, rb.account_id from statuses rb join statuses o on o.id = rb.reblog_of_id
           where rb.created_at >= $3 and o.created_at >= $3 and rb.deleted_at is null
        ) x join accounts xa on xa.id = x.by and xa.domain is null
         group by x.account_id having count(distinct x.by) >= ${POPULAR} order by count(distinct x.by) desc limit $2 * 4)
     )
     select a.id::text,
            array_agg(case c.prio when 1 then 'friends_of_friends' when 2 then 'featured' when 3 then 'most_followed' else 'most_interactions' end order by c.prio) as sources
       from cand c join accounts a on a.id = c.id
      where ${EXCLUDED}
      group by a.id
      order by min(c.prio), max(c.score) desc, a.id desc
      limit $2`,
    [viewerId, limit, new Date(now.getTime() - WINDOW_MS)],
  );
  return rows.map((r) => {
    const sources = (typeof r.sources === 'string' ? r.sources.replace(/^{|}$/g, '').split(',') : r.sources) as SuggestionSource[];
    const first = sources[0];
    return { id: r.id, sources, source: first === 'featured' ? 'staff' : first === 'friends_of_friends' ? 'past_interactions' : 'global' };
  });
}

export async function dismissSuggestion(services: Services, viewerId: string, targetId: string): Promise<void> {
  if (!/^\d{1,20}$/.test(targetId)) return;
  await services.db.sql.query(
    `insert into follow_recommendation_mutes (account_id, target_account_id, created_at)
     select $1, id, $3 from accounts where id = $2 on conflict do nothing`,
    [viewerId, targetId, services.clock.now()],
  );
}
