import { Migration } from '@mikro-orm/migrations';

/**
 * Untrusted counts of remote statuses (Mastodon 4.3's status_stats.untrusted_favourites_count and
 * untrusted_reblogs_count): what the author's server says in the Note's `likes` and `shares`
 * collections (`totalItems`), taken on an incoming Create or Update (or a fetch), clamped to
 * [0, 100,000,000], null when the Note said nothing. A like or reblog from here moves them with
 * the own counts, as Mastodon's increment_count!. The API shows the larger of the own count (the
 * likes and reblogs this server saw) and the untrusted one: a remote post's counts then agree with
 * its author's server even though a Like goes to the author's inbox only. Local statuses never
 * have them.
 */
export class Migration20261127041000_untrusted_status_counts extends Migration {
  override name = 'Migration20261127041000_untrusted_status_counts';

  override up(): void {
    this.addSql(`alter table status_stats
      add column untrusted_favourites_count integer,
      add column untrusted_reblogs_count integer`);
  }

  override down(): void {
    this.addSql(`alter table status_stats drop column untrusted_favourites_count, drop column untrusted_reblogs_count`);
  }
}
