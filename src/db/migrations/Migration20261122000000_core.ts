import { Migration } from '@mikro-orm/migrations';

/** Accounts, users, roles, keys, the minimal statuses table and sign-in activity. */
export class Migration20261122000000_core extends Migration {
  override name = 'Migration20261122000000_core';

  override up(): void {
    this.addSql(`create table user_roles (
      id bigint primary key,
      name text not null,
      color text not null default '',
      permissions bigint not null default 0,
      position integer not null default 0,
      highlighted boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
    this.addSql(`create unique index user_roles_name_key on user_roles (lower(name))`);
    // Mastodon's defaults: Owner bypasses everything; Admin and Moderator as Mastodon seeds them.
    this.addSql(`insert into user_roles (id, name, color, permissions, position, highlighted) values
      (1, 'Owner', '', 1, 1000, true),
      (2, 'Admin', '', ${(1 << 21) - 1 - 1 - 2}, 100, true),
      (3, 'Moderator', '', ${0x4 | 0x8 | 0x10 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000}, 10, true)`);

    this.addSql(`create table accounts (
      id bigint primary key,
      username text not null,
      domain text,
      display_name text not null default '',
      note text not null default '',
      uri text not null,
      url text,
      inbox_url text,
      shared_inbox_url text,
      outbox_url text,
      followers_url text,
      following_url text,
      featured_url text,
      actor_type text not null default 'Person',
      locked boolean not null default false,
      discoverable boolean,
      indexable boolean not null default false,
      avatar_url text,
      header_url text,
      fields jsonb not null default '[]',
      public_key_pem text,
      moved_to_account_id bigint references accounts (id) on delete set null,
      silenced_at timestamptz,
      suspended_at timestamptz,
      machine jsonb,
      machine_version integer not null default 0,
      fetched_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create unique index accounts_username_domain_key on accounts (lower(username), coalesce(lower(domain), ''))`);
    this.addSql(`create unique index accounts_uri_key on accounts (uri)`);
    this.addSql(`create index accounts_domain_idx on accounts (domain) where domain is not null`);

    this.addSql(`create table account_keys (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      algorithm text not null,
      public_jwk jsonb not null,
      private_jwk jsonb not null,
      created_at timestamptz not null,
      unique (account_id, algorithm)
    )`);

    this.addSql(`create table users (
      id bigint primary key,
      account_id bigint not null unique references accounts (id) on delete cascade,
      email text not null,
      encrypted_password text not null,
      role_id bigint references user_roles (id) on delete set null,
      confirmed_at timestamptz,
      approved boolean not null default true,
      disabled boolean not null default false,
      locale text,
      sign_up_reason text,
      current_sign_in_at timestamptz,
      last_sign_in_at timestamptz,
      settings jsonb not null default '{}',
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create unique index users_email_key on users (lower(email))`);

    // One row per user per day they were active: NodeInfo's activeMonth/activeHalfyear and the
    // weekly logins of /api/v1/instance/activity are distinct counts over it.
    this.addSql(`create table user_activity_days (
      user_id bigint not null references users (id) on delete cascade,
      day date not null,
      primary key (user_id, day)
    )`);
    this.addSql(`create index user_activity_days_day_idx on user_activity_days (day)`);

    // One row per (follower, target) relationship: requested or accepted. The follow actor's
    // persisted snapshot lives beside it.
    this.addSql(`create table follows (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      target_account_id bigint not null references accounts (id) on delete cascade,
      uri text,
      state text not null,
      show_reblogs boolean not null default true,
      notify boolean not null default false,
      languages text[],
      machine jsonb,
      machine_version integer not null default 0,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      unique (account_id, target_account_id)
    )`);
    this.addSql(`create index follows_target_idx on follows (target_account_id, state)`);
    this.addSql(`create unique index follows_uri_key on follows (uri) where uri is not null`);

    this.addSql(`create table statuses (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      uri text not null unique,
      url text,
      text text not null default '',
      content text not null default '',
      spoiler_text text not null default '',
      visibility text not null default 'public',
      sensitive boolean not null default false,
      language text,
      local boolean not null,
      in_reply_to_id bigint,
      reblog_of_id bigint,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz
    )`);
    this.addSql(`create index statuses_account_id_idx on statuses (account_id, id desc)`);
    this.addSql(`create index statuses_local_idx on statuses (id desc) where local and deleted_at is null`);
  }

  override down(): void {
    this.addSql('drop table if exists statuses, follows, user_activity_days, users, account_keys, accounts, user_roles cascade');
  }
}
