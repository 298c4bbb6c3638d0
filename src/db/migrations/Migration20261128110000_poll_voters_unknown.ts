import { Migration } from '@mikro-orm/migrations';

/**
 * `polls.voters_count` may be null: a remote multiple-choice poll whose server sends no
 * `votersCount` has an unknown number of voters (Mastodon stores and shows null; clients divide
 * by it, so 0 would be wrong).
 */
export class Migration20261128110000_poll_voters_unknown extends Migration {
  override name = 'Migration20261128110000_poll_voters_unknown';

  override up(): void {
    this.addSql(`alter table polls alter column voters_count drop not null`);
  }

  override down(): void {
    this.addSql(`update polls set voters_count = 0 where voters_count is null`);
    this.addSql(`alter table polls alter column voters_count set not null`);
  }
}
