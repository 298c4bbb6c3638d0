/**
 * Severed relationships (Mastodon 4.3's RelationshipSeveranceEvent): when a moderation or block
 * event ends follows between local accounts and others, the event is recorded with, per local
 * account that lost some, how many followers it lost and how many accounts it stopped following.
 * Written in the transaction that ends the follows, with the outbox fact `relationships.severed`
 * ({ eventId }) that effects/notifications.ts turns into one `severed_relationships` notification
 * per affected local account.
 *
 * Who records one: an admin domain block that suspends a domain (services/domain-blocks.ts, type
 * `domain_block`) and a user's domain block (services/relationships.ts blockDomain, type
 * `user_domain_block`). `account_suspension` is a valid type for a moderator's suspension of a
 * single account (no such route yet).
 */
import type { Account } from '../db/entities/index.ts';
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import { recordEvent, type Origin } from './actor-store.ts';

export type SeveranceType = 'domain_block' | 'user_domain_block' | 'account_suspension';

type Side = Pick<Account, 'id' | 'domain'>;

/** The accepted follows an event ended, counted per local account. */
export class SeveranceTally {
  readonly counts = new Map<string, { followers: number; following: number }>();

  private of(id: string) {
    let c = this.counts.get(id);
    if (!c) this.counts.set(id, (c = { followers: 0, following: 0 }));
    return c;
  }

  /** An accepted follow of `target` by `follower` ended. */
  ended(follower: Side, target: Side): void {
    if (follower.id === target.id) return;
    if (follower.domain == null) this.of(follower.id).following++;
    if (target.domain == null) this.of(target.id).followers++;
  }

  get empty(): boolean {
    return this.counts.size === 0;
  }
}

/**
 * Records the event and its per-account counts (in `sql`'s transaction), with the outbox fact.
 * Nothing (no statement) when the tally is empty. Returns the event's id, or null.
 */
export async function recordSeverance(
  services: Services,
  sql: Sql,
  fact: { type: SeveranceType; targetName: string; tally: SeveranceTally; origin: Origin },
): Promise<string | null> {
  const rows = [...fact.tally.counts].filter(([, c]) => c.followers > 0 || c.following > 0);
  if (rows.length === 0) return null;
  const id = services.ids.next();
  const now = services.clock.now();
  await sql.query(
    `with e as (
       insert into relationship_severance_events (id, type, target_name, purged, created_at) values ($1, $2, $3, false, $4) returning id
     )
     insert into account_relationship_severance_events (relationship_severance_event_id, account_id, followers_count, following_count, created_at)
     select e.id, t.account_id, t.followers, t.following, $4 from e cross join unnest($5::bigint[], $6::int[], $7::int[]) as t(account_id, followers, following)`,
    [id, fact.type, fact.targetName, now, rows.map(([a]) => a), rows.map(([, c]) => c.followers), rows.map(([, c]) => c.following)],
  );
  await recordEvent(services, sql, {
    actorKind: 'relationship_severance_event',
    actorId: id,
    origin: fact.origin,
    event: { type: 'relationships.severed', eventId: id },
  });
  return id;
}
