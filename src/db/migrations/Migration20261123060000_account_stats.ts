import { Migration } from '@mikro-orm/migrations';

/**
 * One counters row per account (Mastodon's account_stats): followers, following and statuses
 * counts and the last status time, kept up to date in the transaction that changes them, so
 * rendering an account never counts rows. An account without a row has zero of everything.
 * Backfilled from the follows and statuses already there.
 */
export class Migration20261123060000_account_stats extends Migration {
  override name = 'Migration20261123060000_account_stats';

  override up(): void {
    this.addSql(`create table account_stats (
      account_id bigint primary key references accounts (id) on delete cascade,
      followers_count integer not null default 0,
      following_count integer not null default 0,
      statuses_count integer not null default 0,
      last_status_at timestamptz
    )`);
    this.addSql(`insert into account_stats (account_id, followers_count, following_count, statuses_count, last_status_at)
      select a.id,
             (select count(*) from follows f where f.target_account_id = a.id and f.state = 'accepted'),
             (select count(*) from follows f where f.account_id = a.id and f.state = 'accepted'),
             (select count(*) from statuses s where s.account_id = a.id and s.deleted_at is null),
             (select max(s.created_at) from statuses s where s.account_id = a.id and s.deleted_at is null)
        from accounts a`);
  }

  override down(): void {
    this.addSql('drop table if exists account_stats');
  }
}
