import { Migration } from '@mikro-orm/migrations';

/**
 * Admin webhooks (Mastodon's `webhooks` table: url, events, secret, enabled) with one row per
 * (outbox fact, webhook) delivery: the dedupe record that makes each delivery happen once, and
 * what the API and `roost webhooks failures` show (attempts, last error).
 *
 * Blocklist subscriptions (a Roost extension, GoToSocial's domain permission subscriptions): a
 * list fetched by URL on a schedule, its entries (a review queue of drafts, or applied at once),
 * and the block each entry made, so an entry gone upstream retracts only that block.
 */
export class Migration20261128180000_webhooks_blocklists extends Migration {
  override name = 'Migration20261128180000_webhooks_blocklists';

  override up(): void {
    this.addSql(`create table webhooks (
      id bigint primary key,
      url text not null,
      events text[] not null,
      secret text not null,
      enabled boolean not null default true,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create table webhook_deliveries (
      event_id bigint not null,
      webhook_id bigint not null references webhooks (id) on delete cascade,
      event text not null,
      state text not null default 'pending',
      attempts integer not null default 0,
      last_status integer,
      last_error text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      delivered_at timestamptz,
      primary key (webhook_id, event_id)
    )`);
    this.addSql(`create index webhook_deliveries_failing on webhook_deliveries (webhook_id, updated_at desc) where state <> 'delivered'`);

    this.addSql(`create table blocklist_subscriptions (
      id bigint primary key,
      url text not null,
      auto_apply boolean not null default false,
      last_fetched_at timestamptz,
      last_success_at timestamptz,
      last_error text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create unique index blocklist_subscriptions_url on blocklist_subscriptions (url)`);
    this.addSql(`create table blocklist_entries (
      id bigint primary key,
      subscription_id bigint not null references blocklist_subscriptions (id) on delete cascade,
      domain text not null,
      severity text not null,
      reject_media boolean not null default false,
      reject_reports boolean not null default false,
      public_comment text,
      obfuscate boolean not null default false,
      state text not null,
      domain_block_id bigint,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      unique (subscription_id, domain)
    )`);
    this.addSql(`create index blocklist_entries_state on blocklist_entries (state, id)`);
    this.addSql(`create index blocklist_entries_block on blocklist_entries (domain_block_id) where domain_block_id is not null`);
  }

  override down(): void {
    this.addSql(`drop table if exists blocklist_entries, blocklist_subscriptions, webhook_deliveries, webhooks`);
  }
}
