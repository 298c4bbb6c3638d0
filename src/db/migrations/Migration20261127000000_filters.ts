import { Migration } from '@mikro-orm/migrations';

/**
 * Filters (issue 12; Mastodon's CustomFilter, CustomFilterKeyword, CustomFilterStatus).
 *
 * `filters` belong to a local account: a title, the contexts it applies in (home, notifications,
 * public, thread, account), the action (warn, hide, blur) and an optional expiry. An expired
 * filter is kept (the user may extend it) and stops applying by itself: every read compares
 * `expires_at` with the clock. `filter_keywords` are its phrases (a v1 filter is one keyword, its
 * id the keyword's); `filter_statuses` the individual statuses it targets.
 */
export class Migration20261127000000_filters extends Migration {
  override name = 'Migration20261127000000_filters';

  override up(): void {
    this.addSql(`create table filters (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      title text not null,
      context text[] not null,
      action text not null default 'warn' check (action in ('warn', 'hide', 'blur')),
      expires_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index filters_account_idx on filters (account_id, id)`);
    this.addSql(`create table filter_keywords (
      id bigint primary key,
      filter_id bigint not null references filters (id) on delete cascade,
      keyword text not null,
      whole_word boolean not null default true,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index filter_keywords_filter_idx on filter_keywords (filter_id, id)`);
    this.addSql(`create table filter_statuses (
      id bigint primary key,
      filter_id bigint not null references filters (id) on delete cascade,
      status_id bigint not null references statuses (id) on delete cascade,
      created_at timestamptz not null,
      unique (filter_id, status_id)
    )`);
    this.addSql(`create index filter_statuses_status_idx on filter_statuses (status_id)`);
  }

  override down(): void {
    this.addSql('drop table if exists filter_statuses, filter_keywords, filters cascade');
  }
}
