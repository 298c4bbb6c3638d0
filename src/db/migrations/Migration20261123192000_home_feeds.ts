import { Migration } from '@mikro-orm/migrations';

/**
 * Timelines. `home_feeds` holds, per local account, the ids of the statuses (and reblogs) of the
 * accounts it follows, pushed after commit by effects/home-feeds.ts from the outbox (fan-out on
 * write, as Mastodon's FanOutOnWriteService, in PostgreSQL rather than Redis): posting costs the
 * same whatever the author's follower count, and reading a home page is one walk down
 * (account_id, status_id desc). The feed holds candidates; who may see what (blocks, mutes, domain
 * blocks, a follow since ended, deletion, the replies rule) is decided when the page is read
 * (reads/timelines.ts), so a block or an unfollow takes effect at once. The account's own statuses
 * are not pushed: the home read takes them from statuses (account_id, id desc) directly.
 *
 * The public and hashtag timelines walk statuses by id through partial indexes of the statuses
 * they can show (public, not a reblog, not deleted).
 */
export class Migration20261123192000_home_feeds extends Migration {
  override name = 'Migration20261123192000_home_feeds';

  override up(): void {
    this.addSql(`create table home_feeds (
      account_id bigint not null references accounts (id) on delete cascade,
      status_id bigint not null references statuses (id) on delete cascade,
      primary key (account_id, status_id)
    )`);
    this.addSql(`create index home_feeds_status_idx on home_feeds (status_id)`);
    this.addSql(`create index statuses_public_idx on statuses (id desc) where visibility = 'public' and reblog_of_id is null and deleted_at is null`);
  }

  override down(): void {
    this.addSql('drop index if exists statuses_public_idx');
    this.addSql('drop table if exists home_feeds cascade');
  }
}
