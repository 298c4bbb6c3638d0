import { Migration } from '@mikro-orm/migrations';

/**
 * The admin accounts API (Mastodon's Admin::Account and account actions):
 * - `accounts.sensitized_at`: the account's media is forced sensitive (projected from the account
 *   actor's `sensitizing` region, as silenced_at and suspended_at).
 * - `users.sign_up_ip`, `users.invited_by_account_id`: what Admin::Account reports of a sign-up.
 * - `user_ips`: every address a user signed up or signed in from, with its last use (Mastodon's
 *   user_ips view): Admin::Account's `ip` and `ips`, and the `ip` filter (`<<=`, a CIDR matches).
 * - `account_warnings`: one row per moderation action taken against an account (Mastodon's
 *   AccountWarning: the strike), with the moderator, the report and the statuses it concerns.
 * - Partial indexes so the admin list filtered by a status pages by id without a scan.
 */
export class Migration20261128150000_admin_accounts extends Migration {
  override name = 'Migration20261128150000_admin_accounts';

  override up(): void {
    this.addSql(`alter table accounts add column sensitized_at timestamptz`);
    this.addSql(`alter table users add column sign_up_ip inet`);
    this.addSql(`alter table users add column invited_by_account_id bigint references accounts (id) on delete set null`);
    this.addSql(`create table user_ips (
      user_id bigint not null references users (id) on delete cascade,
      ip inet not null,
      used_at timestamptz not null,
      primary key (user_id, ip)
    )`);
    this.addSql(`create index user_ips_ip_idx on user_ips using gist (ip inet_ops)`);
    this.addSql(`create table account_warnings (
      id bigint primary key,
      account_id bigint references accounts (id) on delete set null,
      target_account_id bigint not null references accounts (id) on delete cascade,
      action text not null,
      text text not null default '',
      report_id bigint references reports (id) on delete set null,
      status_ids bigint[] not null default '{}',
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index account_warnings_target_idx on account_warnings (target_account_id, id desc)`);
    this.addSql(`create index accounts_domain_id_idx on accounts (domain, id desc)`);
    this.addSql(`create index accounts_suspended_id_idx on accounts (id desc) where suspended_at is not null`);
    this.addSql(`create index accounts_silenced_id_idx on accounts (id desc) where silenced_at is not null`);
    this.addSql(`create index accounts_sensitized_id_idx on accounts (id desc) where sensitized_at is not null`);
    this.addSql(`create index users_pending_idx on users (account_id desc) where not approved`);
    this.addSql(`create index users_disabled_idx on users (account_id desc) where disabled`);
    this.addSql(`create index users_role_idx on users (role_id, account_id desc) where role_id is not null`);
  }

  override down(): void {
    this.addSql(`drop index if exists users_role_idx`);
    this.addSql(`drop index if exists users_disabled_idx`);
    this.addSql(`drop index if exists users_pending_idx`);
    this.addSql(`drop index if exists accounts_sensitized_id_idx`);
    this.addSql(`drop index if exists accounts_silenced_id_idx`);
    this.addSql(`drop index if exists accounts_suspended_id_idx`);
    this.addSql(`drop index if exists accounts_domain_id_idx`);
    this.addSql(`drop table if exists account_warnings`);
    this.addSql(`drop table if exists user_ips`);
    this.addSql(`alter table users drop column if exists invited_by_account_id`);
    this.addSql(`alter table users drop column if exists sign_up_ip`);
    this.addSql(`alter table accounts drop column if exists sensitized_at`);
  }
}
