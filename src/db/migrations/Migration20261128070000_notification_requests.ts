import { Migration } from '@mikro-orm/migrations';

/**
 * Mastodon 4.3's notification policy and requests.
 *
 * - `notification_policies`: one row per account that changed its policy (none: Mastodon's
 *   defaults, `filter` for private mentions and limited accounts, `accept` for the rest). Each
 *   value is accept, filter or drop.
 * - `notifications.filtered`: a notification the policy held back; it stays out of the list, the
 *   unread count and streaming until its request is accepted.
 * - `notification_requests`: one per (recipient, sender) with filtered notifications, the sender's
 *   last mentioning status; the count is read from the filtered rows.
 * - `notification_permissions`: senders whose request the recipient accepted: never filtered again.
 */
export class Migration20261128070000_notification_requests extends Migration {
  override name = 'Migration20261128070000_notification_requests';

  override up(): void {
    const value = (col: string, dflt: string) => `${col} text not null default '${dflt}' check (${col} in ('accept', 'filter', 'drop'))`;
    this.addSql(`create table notification_policies (
      account_id bigint primary key references accounts (id) on delete cascade,
      ${value('for_not_following', 'accept')},
      ${value('for_not_followers', 'accept')},
      ${value('for_new_accounts', 'accept')},
      ${value('for_private_mentions', 'filter')},
      ${value('for_limited_accounts', 'filter')},
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`alter table notifications add column filtered boolean not null default false`);
    this.addSql(`create index notifications_filtered_idx on notifications (account_id, from_account_id) where filtered`);
    this.addSql(`create table notification_requests (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      from_account_id bigint not null references accounts (id) on delete cascade,
      last_status_id bigint references statuses (id) on delete set null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create unique index notification_requests_pair on notification_requests (account_id, from_account_id)`);
    this.addSql(`create index notification_requests_account_idx on notification_requests (account_id, id desc)`);
    this.addSql(`create table notification_permissions (
      account_id bigint not null references accounts (id) on delete cascade,
      from_account_id bigint not null references accounts (id) on delete cascade,
      created_at timestamptz not null,
      primary key (account_id, from_account_id)
    )`);
  }

  override down(): void {
    this.addSql(`drop table if exists notification_permissions, notification_requests, notification_policies`);
    this.addSql(`alter table notifications drop column if exists filtered`);
  }
}
