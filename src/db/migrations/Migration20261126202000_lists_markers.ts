import { Migration } from '@mikro-orm/migrations';

/**
 * Lists and timeline read markers (issue 11).
 *
 * `lists` belong to a local account: a title, Mastodon's `replies_policy` (followed / list / none)
 * and `exclusive` (the members' posts stay out of the owner's home timeline). `list_accounts` are
 * the members (accounts the owner follows or asked to follow, or the owner itself): a membership
 * ends when the follow does (services/follows.ts projects it). `list_feeds` is the list's feed,
 * filled like `home_feeds` by fan-out on write (effects/list-feeds.ts): candidates only, every
 * rule is checked when a page is read (services/reads/user-lists.ts).
 *
 * `markers` are a user's read positions (`home`, `notifications`), with Mastodon's optimistic-lock
 * counter `version` that every change of `last_read_id` moves on.
 */
export class Migration20261126202000_lists_markers extends Migration {
  override name = 'Migration20261126202000_lists_markers';

  override up(): void {
    this.addSql(`create table lists (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      title text not null,
      replies_policy text not null default 'list' check (replies_policy in ('followed', 'list', 'none')),
      exclusive boolean not null default false,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index lists_account_idx on lists (account_id, id)`);
    this.addSql(`create table list_accounts (
      id bigint primary key,
      list_id bigint not null references lists (id) on delete cascade,
      account_id bigint not null references accounts (id) on delete cascade,
      created_at timestamptz not null,
      unique (list_id, account_id)
    )`);
    this.addSql(`create index list_accounts_account_idx on list_accounts (account_id, list_id)`);
    this.addSql(`create table list_feeds (
      list_id bigint not null references lists (id) on delete cascade,
      status_id bigint not null references statuses (id) on delete cascade,
      primary key (list_id, status_id)
    )`);
    this.addSql(`create index list_feeds_status_idx on list_feeds (status_id)`);
    this.addSql(`create table markers (
      id bigint primary key,
      user_id bigint not null references users (id) on delete cascade,
      timeline text not null,
      last_read_id bigint not null default 0,
      version integer not null default 0,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      unique (user_id, timeline)
    )`);
  }

  override down(): void {
    this.addSql('drop table if exists markers, list_feeds, list_accounts, lists cascade');
  }
}
