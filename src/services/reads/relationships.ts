/**
 * The Relationship facts of a page of accounts as the viewer sees them: one statement for the
 * whole page (a row per known account, each fact a lateral or an exists over an index), whatever
 * the page size. The pure serializer (serializers/relationship.ts) renders them.
 */
import type { Services } from '../../context.ts';
import type { RelationshipFacts } from '../../serializers/relationship.ts';
import { isId } from './page.ts';
import { blocksSql, domainBlockedBySql, muteInForceSql } from '../../db/audience.ts';

interface FactsRow {
  id: string;
  out_state: string | null;
  out_reblogs: boolean | null;
  out_notify: boolean | null;
  out_languages: string[] | null;
  in_state: string | null;
  blocking: boolean;
  blocked_by: boolean;
  mute_hide: boolean | null;
  domain_blocking: boolean;
  endorsed: boolean;
  note: string | null;
}

export async function relationshipFacts(services: Services, viewerId: string, ids: readonly string[]): Promise<Map<string, RelationshipFacts>> {
  const out = new Map<string, RelationshipFacts>();
  const wanted = ids.filter(isId);
  if (wanted.length === 0) return out;
  const rows = await services.db.sql.query<FactsRow>(
    `select a.id::text as id,
            o.state as out_state, o.show_reblogs as out_reblogs, o.notify as out_notify, o.languages as out_languages,
            i.state as in_state,
            ${blocksSql('$1', 'a.id')} as blocking,
            ${blocksSql('a.id', '$1')} as blocked_by,
            m.hide_notifications as mute_hide,
            (a.domain is not null and ${domainBlockedBySql('$1', 'a.domain')}) as domain_blocking,
            exists (select 1 from account_pins p where p.account_id = $1 and p.target_account_id = a.id) as endorsed,
            n.comment as note
       from accounts a
       left join follows o on o.account_id = $1 and o.target_account_id = a.id
       left join follows i on i.account_id = a.id and i.target_account_id = $1
       left join mutes m on m.account_id = $1 and m.target_account_id = a.id and ${muteInForceSql('m', '$3')}
       left join account_notes n on n.account_id = $1 and n.target_account_id = a.id
      where a.id = any($2::bigint[])`,
    [viewerId, wanted, services.clock.now()],
  );
  for (const r of rows) {
    out.set(r.id, {
      outgoing: r.out_state ? { state: r.out_state, showReblogs: !!r.out_reblogs, notify: !!r.out_notify, languages: r.out_languages ?? null } : null,
      incomingState: r.in_state,
      blocking: r.blocking,
      blockedBy: r.blocked_by,
      mute: r.mute_hide === null ? null : { hideNotifications: r.mute_hide },
      domainBlocking: r.domain_blocking,
      endorsed: r.endorsed,
      note: r.note ?? '',
    });
  }
  return out;
}
