/**
 * Direct-message conversations (GET /api/v1/conversations), kept from the committed outbox like
 * the home feeds (./home-feeds.ts), for local statuses and remote ones alike (both record
 * `status.created`; services/remote-statuses.ts puts a remote status in its thread as a local one).
 *
 * As Mastodon's AccountConversation.add_status / remove_status: a direct status (not limited) goes
 * into one row per local participant — its author and every account it mentions (not silently,
 * not suspended) — keyed by that account, the thread, and the other participants (sorted). The row
 * turns unread unless the account wrote the status. A recipient who blocks or mutes the author,
 * is blocked by it, or blocks its domain gets nothing (Mastodon drops the mention's notification,
 * and with it the conversation). A deleted status leaves every row that holds it: the row's last
 * status moves back to the one before, or the row goes when none is left.
 *
 * A fixed number of statements per event whatever the participant count (one for a new status,
 * two for a deletion); both are idempotent (an event job that runs twice changes nothing more).
 */
import type { Services } from '../context.ts';
import type { ConsumerHandler } from './registry.ts';
import { hiddenFromSql } from '../db/audience.ts';

/** SQL: the local account `a` takes `s`'s direct status into its conversations. */
const receivesSql = (a: string, s: string) => `(${a}.id = ${s}.account_id or not ${hiddenFromSql(`${a}.id`, `${s}.account_id`, '$2')})`;

export function conversationsConsumer(services: Services): ConsumerHandler<'conversations'> {
  const log = services.log.child({ module: 'conversations' });
  return async function maintain(record): Promise<void> {
    const event = record.event;
    switch (event.type) {
      case 'status.created': {
        if (event.visibility !== 'direct') return;
        const rows = await services.db.sql.query<{ account_id: string }>(
          `with s as (
             select id, account_id, conversation_id from statuses
              where id = $1 and visibility = 'direct' and reblog_of_id is null and deleted_at is null and conversation_id is not null
           ), p as (
             select s.account_id from s
             union
             select m.account_id from mentions m join accounts ma on ma.id = m.account_id
              where m.status_id = $1 and not m.silent and ma.suspended_at is null
           ), r as (
             select a.id from p join accounts a on a.id = p.account_id cross join s
              where a.domain is null and a.suspended_at is null and ${receivesSql('a', 's')}
           )
           insert into account_conversations as ac (account_id, conversation_id, participant_account_ids, status_ids, last_status_id, unread)
           select r.id, s.conversation_id, array(select p.account_id from p where p.account_id <> r.id order by 1), array[s.id], s.id, r.id <> s.account_id
             from r cross join s
           on conflict (account_id, conversation_id, participant_account_ids) do update set
             status_ids = case when excluded.last_status_id = any(ac.status_ids) then ac.status_ids
                               else array(select x from unnest(ac.status_ids || excluded.last_status_id) as u(x) order by x) end,
             last_status_id = greatest(ac.last_status_id, excluded.last_status_id),
             unread = case when excluded.last_status_id = any(ac.status_ids) then ac.unread else excluded.unread end
           returning ac.account_id::text`,
          [event.statusId, services.clock.now()],
        );
        log.debug({ statusId: event.statusId, accounts: rows.length }, 'direct status added to conversations');
        return;
      }
      case 'status.deleted': {
        const params = [event.statusId];
        const thread = `(select conversation_id from statuses where id = $1)`;
        await services.db.sql.query(
          `update account_conversations set status_ids = array_remove(status_ids, $1::bigint),
                  last_status_id = (select max(x) from unnest(array_remove(status_ids, $1::bigint)) as u(x))
            where conversation_id = ${thread} and $1::bigint = any(status_ids)`,
          params,
        );
        await services.db.sql.query(`delete from account_conversations where conversation_id = ${thread} and cardinality(status_ids) = 0`, params);
        return;
      }
      default:
        event satisfies never;
    }
  };
}
