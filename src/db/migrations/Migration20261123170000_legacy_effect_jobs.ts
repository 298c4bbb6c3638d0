import { Migration } from '@mikro-orm/migrations';
import { DEFAULT_QUEUE } from '../../jobs/queue.ts';
import { JOBS_NOTIFY_CHANNEL } from '../../jobs/schema.ts';

/**
 * Upgrade path for the job kind `effect`, which commit "One actor store…" replaced by the outbox
 * (`event` jobs carrying an OutboxRecord, src/effects/outbox.ts) and `timer` jobs
 * (src/effects/events.ts). A database upgraded while `effect` jobs were still waiting would
 * dead-letter them ("no handler"): a Follow, an Accept, an Update(Person), a Block never sent, a
 * mute that never expires.
 *
 * Why a migration rather than a handler for `effect`: it runs once, before any worker starts, in
 * the upgrade's transaction, and leaves no second code path in the dispatcher for ever. It also
 * turns each legacy job into what the current code writes: the fact becomes a row of
 * outbox_events (so later readers of the outbox see it) and the job keeps its id, run_at,
 * attempts, max_attempts and lease, changing only kind and payload. Legacy payloads:
 *
 *   follow.requested|accepted|rejected|undone {followId} → actor `follow` followId, payload
 *       completed with followerId/targetId from the follows row (gone: nothing left to do);
 *   account.updated {accountId}, account.moved {accountId, targetAccountId} → actor `account`;
 *   block.created {blockId} → actor `account` (the blocker), payload completed with accountId
 *       and targetId from the blocks row (gone: the block was lifted, nothing to send);
 *   block.removed {accountId, targetId, blockUri, blockId} → actor `account`, as is;
 *   mute.expired {accountId, targetId} → a `timer` job {type: 'mute.expire', …} at the same run_at.
 *
 * The legacy jobs did not record who caused them; their origin is written as 'client' (each
 * existed to federate a local user's action; an automatic Accept of an inbound Follow was really
 * 'federation'). actor_version is null: they were not recorded as actor steps. Dead `effect`
 * jobs are left alone (the operator's dead letters); a pending one of a type the old code never
 * wrote becomes one. Exported for the upgrade test.
 */
export const LEGACY_EFFECT_JOBS_SQL: readonly string[] = [
  `update jobs set kind = 'timer',
          payload = json_build_object('type', 'mute.expire', 'accountId', payload->>'accountId', 'targetId', payload->>'targetId'),
          updated_at = now()
    where kind = 'effect' and state in ('pending', 'running') and payload->>'type' = 'mute.expired'`,
  `with legacy as materialized (
     select j.id as job_id, j.created_at, j.payload::jsonb as p, j.payload->>'type' as type
       from jobs j
      where j.kind = 'effect' and j.state in ('pending', 'running')
   ), facts as materialized (
     select l.job_id, l.created_at, l.type, 'follow' as actor_kind, f.id as actor_id,
            l.p || jsonb_build_object('followerId', f.account_id::text, 'targetId', f.target_account_id::text) as payload
       from legacy l join follows f on f.id = (l.p->>'followId')::bigint
      where l.type in ('follow.requested', 'follow.accepted', 'follow.rejected', 'follow.undone')
     union all
     select l.job_id, l.created_at, l.type, 'account', (l.p->>'accountId')::bigint, l.p
       from legacy l
      where l.type in ('account.updated', 'account.moved', 'block.removed')
     union all
     select l.job_id, l.created_at, l.type, 'account', b.account_id,
            l.p || jsonb_build_object('accountId', b.account_id::text, 'targetId', b.target_account_id::text)
       from legacy l join blocks b on b.id = (l.p->>'blockId')::bigint
      where l.type = 'block.created'
   ), numbered as materialized (
     select facts.*, nextval(pg_get_serial_sequence('outbox_events', 'id')) as event_id from facts
   ), ev as (
     insert into outbox_events (id, actor_kind, actor_id, actor_version, seq, origin, type, payload, created_at)
     select event_id, actor_kind, actor_id, null, 0, 'client', type, payload::json, created_at from numbered
     returning id
   )
   update jobs j
      set kind = 'event',
          payload = json_build_object('id', n.event_id::text, 'actorKind', n.actor_kind, 'actorId', n.actor_id::text,
                                      'actorVersion', null, 'origin', 'client', 'event', n.payload::json),
          updated_at = now()
     from numbered n
    where j.id = n.job_id`,
  // Known facts left over have nothing to carry out: their follow or block row is gone.
  `delete from jobs where kind = 'effect' and state in ('pending', 'running')
      and payload->>'type' in ('follow.requested', 'follow.accepted', 'follow.rejected', 'follow.undone', 'block.created')`,
  // Anything else is not a payload the old code wrote: a dead letter the operator can read.
  `update jobs set state = 'dead', last_error = 'legacy effect job of an unknown type: not carried over', updated_at = now()
    where kind = 'effect' and state in ('pending', 'running')`,
  `select pg_notify('${JOBS_NOTIFY_CHANNEL}', '${DEFAULT_QUEUE}')`,
];

export class Migration20261123170000_legacy_effect_jobs extends Migration {
  override name = 'Migration20261123170000_legacy_effect_jobs';

  override up(): void {
    for (const sql of LEGACY_EFFECT_JOBS_SQL) this.addSql(sql);
  }

  override down(): void {
    // Nothing to undo: the rewritten jobs are valid jobs of the current kinds.
  }
}
