import { Migration } from '@mikro-orm/migrations';

/**
 * Dismissed follow suggestions (Mastodon's follow_recommendation_mutes) and account aliases
 * (`alsoKnownAs`), which a Move must find on its target before followers migrate.
 */
export class Migration20261122045000_suggestions_moves extends Migration {
  override name = 'Migration20261122045000_suggestions_moves';

  override up(): void {
    this.addSql(`create table follow_recommendation_mutes (
      account_id bigint not null references accounts (id) on delete cascade,
      target_account_id bigint not null references accounts (id) on delete cascade,
      created_at timestamptz not null,
      primary key (account_id, target_account_id)
    )`);
    this.addSql(`alter table accounts add column also_known_as jsonb not null default '[]'`);
    this.addSql(`create index accounts_moved_to_idx on accounts (moved_to_account_id) where moved_to_account_id is not null`);
  }

  override down(): void {
    this.addSql('drop index if exists accounts_moved_to_idx');
    this.addSql('alter table accounts drop column if exists also_known_as');
    this.addSql('drop table if exists follow_recommendation_mutes cascade');
  }
}
