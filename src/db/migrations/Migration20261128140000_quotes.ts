import { Migration } from '@mikro-orm/migrations';

/**
 * Quote posts (Mastodon 4.5, FEP-044f). `quotes`: one row per quoting status (Mastodon's quotes
 * table): the status quoted (null when it could not be resolved), its URI as the quote named it,
 * the state (pending, accepted, rejected, revoked), whether the quote came only with the legacy
 * names (`_misskey_quote`, `quoteUri`, `quoteUrl`), the authorization's URI (the stamp: ours at
 * /users/:username/quote_authorizations/:id for a quote of a local post, the remote one's
 * otherwise) and the QuoteRequest's id. `statuses.quote_policy`: who may quote the status
 * (public, followers, nobody; null on a remote status: nobody said). `status_stats.quotes_count`:
 * its accepted quotes, written with the state change.
 */
export class Migration20261128140000_quotes extends Migration {
  override name = 'Migration20261128140000_quotes';

  override up(): void {
    this.addSql(`alter table statuses add column quote_policy text null`);
    this.addSql(`alter table status_stats add column quotes_count integer not null default 0`);
    this.addSql(`create table quotes (
      id bigint primary key,
      status_id bigint not null references statuses(id) on delete cascade,
      account_id bigint not null,
      quoted_status_id bigint null references statuses(id) on delete set null,
      quoted_account_id bigint null,
      quoted_uri text not null,
      state text not null default 'pending',
      legacy boolean not null default false,
      approval_uri text null,
      activity_uri text null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create unique index quotes_status_id_uniq on quotes (status_id)`);
    this.addSql(`create index quotes_quoted_status_id_idx on quotes (quoted_status_id, id)`);
    this.addSql(`create index quotes_approval_uri_idx on quotes (approval_uri) where approval_uri is not null`);
    this.addSql(`create index quotes_activity_uri_idx on quotes (activity_uri) where activity_uri is not null`);
  }

  override down(): void {
    this.addSql(`drop table quotes`);
    this.addSql(`alter table status_stats drop column quotes_count`);
    this.addSql(`alter table statuses drop column quote_policy`);
  }
}
