/**
 * Follow suggestions, honestly simple: accounts followed by the accounts the viewer follows
 * (friends of friends, most shared first), then recently active local accounts; never the viewer,
 * accounts it already follows or requested, blocks either way, mutes, or dismissed suggestions;
 * and, as Mastodon, only accounts that opted into discovery (discoverable true; unset is not
 * consent) and have not moved elsewhere.
 */
import type { Services } from '../context.ts';

export interface Suggestion {
  id: string;
  source: 'past_interactions' | 'global';
  reason: 'friends_of_friends' | 'most_interactions' | 'featured';
}

const EXCLUDED = `
  a.id <> $1 and a.suspended_at is null and a.silenced_at is null
  and a.discoverable is true and a.moved_to_account_id is null
  and not exists (select 1 from follows f where f.account_id = $1 and f.target_account_id = a.id and f.state in ('accepted', 'requested'))
  and not exists (select 1 from blocks b where (b.account_id = $1 and b.target_account_id = a.id) or (b.account_id = a.id and b.target_account_id = $1))
  and not exists (select 1 from mutes m where m.account_id = $1 and m.target_account_id = a.id)
  and not exists (select 1 from follow_recommendation_mutes d where d.account_id = $1 and d.target_account_id = a.id)`;

export async function suggestAccounts(services: Services, viewerId: string, limit: number): Promise<Suggestion[]> {
  const friends = await services.db.sql.query<{ id: string }>(
    `select a.id::text from follows mine
       join follows theirs on theirs.account_id = mine.target_account_id and theirs.state = 'accepted'
       join accounts a on a.id = theirs.target_account_id
      where mine.account_id = $1 and mine.state = 'accepted' and ${EXCLUDED}
      group by a.id order by count(*) desc, a.id desc limit $2`,
    [viewerId, limit],
  );
  const out: Suggestion[] = friends.map((r) => ({ id: r.id, source: 'past_interactions', reason: 'friends_of_friends' }));
  if (out.length < limit) {
    const local = await services.db.sql.query<{ id: string }>(
      `select a.id::text from accounts a join users u on u.account_id = a.id
        where a.domain is null and u.approved and not u.disabled and ${EXCLUDED}
          and a.id <> all($3::bigint[])
        order by u.current_sign_in_at desc nulls last, a.id desc limit $2`,
      [viewerId, limit - out.length, out.map((s) => s.id)],
    );
    out.push(...local.map((r) => ({ id: r.id, source: 'global' as const, reason: 'featured' as const })));
  }
  return out;
}

export async function dismissSuggestion(services: Services, viewerId: string, targetId: string): Promise<void> {
  if (!/^\d{1,20}$/.test(targetId)) return;
  await services.db.sql.query(
    `insert into follow_recommendation_mutes (account_id, target_account_id, created_at)
     select $1, id, $3 from accounts where id = $2 on conflict do nothing`,
    [viewerId, targetId, services.clock.now()],
  );
}
