import { Migration } from '@mikro-orm/migrations';

/**
 * E-mail and the sign-up blocks (issue 27 items 4 and 5):
 * - `users.confirmation_token_hash`, `confirmation_sent_at`: the confirmation link of the last mail
 *   sent (SHA-256 of the token, as access tokens; Devise's confirmation_token);
 *   `reset_password_token_hash`, `reset_password_sent_at`: the password-reset link's (Devise's).
 * - `mail_deliveries`: one row per mail sent, keyed by the fact and what it sent (the mail
 *   consumer sends nothing twice for one fact).
 * - `email_domain_blocks` (Mastodon's EmailDomainBlock: the domain and its subdomains, and the
 *   domains of its MX hosts), with `email_domain_block_attempts` for its `history` (sign-ups it
 *   stopped, per day and address).
 * - `canonical_email_blocks` (Mastodon's CanonicalEmailBlock: the SHA-256 of the normalised address).
 * - `ip_blocks` (Mastodon's IpBlock: a CIDR range, a severity, an expiry).
 * - `account_warnings`: the moderation strikes the warning e-mail reads. The admin accounts work
 *   creates the same table (Migration20261128150000_admin_accounts, the same columns); `if not
 *   exists` lets both be merged in either order.
 */
export class Migration20261128170000_mail_and_sign_up_blocks extends Migration {
  override name = 'Migration20261128170000_mail_and_sign_up_blocks';

  override up(): void {
    this.addSql(`alter table users add column confirmation_token_hash text`);
    this.addSql(`alter table users add column confirmation_sent_at timestamptz`);
    this.addSql(`alter table users add column reset_password_token_hash text`);
    this.addSql(`alter table users add column reset_password_sent_at timestamptz`);
    this.addSql(`create unique index users_confirmation_token_idx on users (confirmation_token_hash) where confirmation_token_hash is not null`);
    this.addSql(`create unique index users_reset_password_token_idx on users (reset_password_token_hash) where reset_password_token_hash is not null`);
    this.addSql(`create table mail_deliveries (
      source_key text primary key,
      recipient text not null,
      sent_at timestamptz not null
    )`);
    this.addSql(`create table email_domain_blocks (
      id bigint primary key,
      domain text not null unique,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create table email_domain_block_attempts (
      block_id bigint not null references email_domain_blocks (id) on delete cascade,
      day date not null,
      ip text not null,
      uses integer not null default 1,
      primary key (block_id, day, ip)
    )`);
    this.addSql(`create table canonical_email_blocks (
      id bigint primary key,
      canonical_email_hash text not null unique,
      reference_account_id bigint references accounts (id) on delete set null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create table ip_blocks (
      id bigint primary key,
      ip cidr not null unique,
      severity text not null check (severity in ('sign_up_requires_approval', 'sign_up_block', 'no_access')),
      comment text not null default '',
      expires_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create table if not exists account_warnings (
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
  }

  override down(): void {
    this.addSql(`drop table if exists ip_blocks`);
    this.addSql(`drop table if exists canonical_email_blocks`);
    this.addSql(`drop table if exists email_domain_block_attempts`);
    this.addSql(`drop table if exists email_domain_blocks`);
    this.addSql(`drop table if exists mail_deliveries`);
    this.addSql(`drop index if exists users_reset_password_token_idx`);
    this.addSql(`drop index if exists users_confirmation_token_idx`);
    this.addSql(`alter table users drop column if exists reset_password_sent_at`);
    this.addSql(`alter table users drop column if exists reset_password_token_hash`);
    this.addSql(`alter table users drop column if exists confirmation_sent_at`);
    this.addSql(`alter table users drop column if exists confirmation_token_hash`);
  }
}
