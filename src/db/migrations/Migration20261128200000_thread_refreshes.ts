import { Migration } from '@mikro-orm/migrations';

/**
 * Complete threads (federation/threads.ts):
 *
 * - `thread_refreshes`: one row per thread root whose missing replies were asked of their servers:
 *   the current refresh (Mastodon's AsyncRefresh: its opaque id, running or finished, how many
 *   statuses it brought in), when it started and finished (the per-thread cooldown), and the hosts
 *   that could not be reached during the last one.
 * - `status_reply_reports`: what a remote status's own server says of its replies: the
 *   `totalItems` of its replies collection (or, without one, the items it listed), when read.
 */
export class Migration20261128200000_thread_refreshes extends Migration {
  override name = 'Migration20261128200000_thread_refreshes';

  override up(): void {
    this.addSql(`create table thread_refreshes (
      root_status_id bigint primary key references statuses (id) on delete cascade,
      refresh_id text not null,
      state text not null check (state in ('running', 'finished')),
      result_count int not null default 0,
      started_at timestamptz not null,
      finished_at timestamptz,
      unreachable_hosts text[] not null default '{}'
    )`);
    this.addSql(`create unique index thread_refreshes_refresh_id on thread_refreshes (refresh_id)`);
    this.addSql(`create table status_reply_reports (
      status_id bigint primary key references statuses (id) on delete cascade,
      reported int not null check (reported >= 0),
      checked_at timestamptz not null
    )`);
  }

  override down(): void {
    this.addSql(`drop table if exists status_reply_reports`);
    this.addSql(`drop table if exists thread_refreshes`);
  }
}
