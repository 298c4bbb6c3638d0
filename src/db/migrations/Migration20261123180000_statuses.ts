import { Migration } from '@mikro-orm/migrations';

/**
 * Statuses as a client writes and reads them: the statuses table grows the columns of Mastodon's
 * Status (reply target account, application, edit time), and gets its counters row
 * (status_stats), favourites, bookmarks, pins, mentions, hashtags and the Idempotency-Key record
 * of POST /api/v1/statuses. Visibility is public, unlisted, private, direct, or the internal
 * limited (shown as private in the API).
 */
export class Migration20261123180000_statuses extends Migration {
  override name = 'Migration20261123180000_statuses';

  override up(): void {
    this.addSql(`alter table statuses
      add column in_reply_to_account_id bigint,
      add column application_id bigint references oauth_applications (id) on delete set null,
      add column edited_at timestamptz`);
    this.addSql(`alter table statuses add constraint statuses_visibility_check
      check (visibility in ('public', 'unlisted', 'private', 'direct', 'limited'))`);
    this.addSql(`create index statuses_in_reply_to_idx on statuses (in_reply_to_id) where in_reply_to_id is not null`);
    this.addSql(`create index statuses_reblog_of_idx on statuses (reblog_of_id, account_id) where reblog_of_id is not null`);
    this.addSql(`create table status_stats (
      status_id bigint primary key references statuses (id) on delete cascade,
      replies_count integer not null default 0,
      reblogs_count integer not null default 0,
      favourites_count integer not null default 0
    )`);
    this.addSql(`create table favourites (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      status_id bigint not null references statuses (id) on delete cascade,
      uri text,
      created_at timestamptz not null,
      unique (account_id, status_id)
    )`);
    this.addSql(`create index favourites_status_idx on favourites (status_id, id desc)`);
    this.addSql(`create table bookmarks (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      status_id bigint not null references statuses (id) on delete cascade,
      created_at timestamptz not null,
      unique (account_id, status_id)
    )`);
    this.addSql(`create table status_pins (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      status_id bigint not null references statuses (id) on delete cascade,
      created_at timestamptz not null,
      unique (account_id, status_id)
    )`);
    this.addSql(`create table mentions (
      id bigint primary key,
      status_id bigint not null references statuses (id) on delete cascade,
      account_id bigint not null references accounts (id) on delete cascade,
      silent boolean not null default false,
      created_at timestamptz not null,
      unique (status_id, account_id)
    )`);
    this.addSql(`create index mentions_account_idx on mentions (account_id, status_id)`);
    this.addSql(`create table tags (
      id bigint primary key,
      name text not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create unique index tags_name_key on tags (lower(name))`);
    this.addSql(`create table statuses_tags (
      status_id bigint not null references statuses (id) on delete cascade,
      tag_id bigint not null references tags (id) on delete cascade,
      primary key (status_id, tag_id)
    )`);
    this.addSql(`create index statuses_tags_tag_idx on statuses_tags (tag_id, status_id desc)`);
    this.addSql(`create table status_idempotency_keys (
      account_id bigint not null references accounts (id) on delete cascade,
      key text not null,
      -- Deferred: the key is claimed first in the creating transaction, the status inserted after.
      status_id bigint not null references statuses (id) on delete cascade deferrable initially deferred,
      created_at timestamptz not null,
      primary key (account_id, key)
    )`);
  }

  override down(): void {
    this.addSql('drop table if exists status_idempotency_keys, statuses_tags, tags, mentions, status_pins, bookmarks, favourites, status_stats cascade');
    this.addSql('alter table statuses drop constraint if exists statuses_visibility_check');
    this.addSql('alter table statuses drop column if exists in_reply_to_account_id, drop column if exists application_id, drop column if exists edited_at');
  }
}
