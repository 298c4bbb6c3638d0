import { Migration } from '@mikro-orm/migrations';

/**
 * Severed relationships (issue 12 part 3, Mastodon 4.3's RelationshipSeveranceEvent).
 *
 * `relationship_severance_events`: one row per moderation or block event that ended follows
 * between local accounts and others — `type` domain_block (an admin suspended a domain),
 * user_domain_block (a user blocked a domain), account_suspension (a moderator suspended an
 * account); `target_name` the domain or the account's handle; `purged` whether the list of severed
 * relationships is gone. Snowflake ids.
 *
 * `account_relationship_severance_events`: per local account that lost follows through the event,
 * how many followers it lost and how many accounts it stopped following (both counted from the
 * accepted follows the event ended; only rows with a count > 0 are written). Written in the
 * transaction that ends the follows, with the outbox fact `relationships.severed` that
 * effects/notifications.ts turns into one `severed_relationships` notification per row.
 *
 * `notifications.relationship_severance_event_id`: the event a severed_relationships
 * notification is about (rendered as its `event`).
 */
export class Migration20261127004000_severed_relationships extends Migration {
  override name = 'Migration20261127004000_severed_relationships';

  override up(): void {
    this.addSql(`create table relationship_severance_events (
      id bigint primary key,
      type text not null check (type in ('domain_block', 'user_domain_block', 'account_suspension')),
      target_name text not null,
      purged boolean not null default false,
      created_at timestamptz not null
    )`);
    this.addSql(`create table account_relationship_severance_events (
      relationship_severance_event_id bigint not null references relationship_severance_events (id) on delete cascade,
      account_id bigint not null references accounts (id) on delete cascade,
      followers_count integer not null default 0,
      following_count integer not null default 0,
      created_at timestamptz not null,
      primary key (relationship_severance_event_id, account_id)
    )`);
    this.addSql(`create index account_relationship_severance_events_account_idx on account_relationship_severance_events (account_id)`);
    this.addSql(`alter table notifications add column relationship_severance_event_id bigint references relationship_severance_events (id) on delete cascade`);
  }

  override down(): void {
    this.addSql(`alter table notifications drop column if exists relationship_severance_event_id`);
    this.addSql('drop table if exists account_relationship_severance_events, relationship_severance_events cascade');
  }
}
