import { Migration } from '@mikro-orm/migrations';

/** Private notes on accounts, endorsements (pinned accounts), and user-level domain blocks. */
export class Migration20261122050000_notes_pins_domain_blocks extends Migration {
  override name = 'Migration20261122050000_notes_pins_domain_blocks';

  override up(): void {
    this.addSql(`create table account_notes (
      account_id bigint not null references accounts (id) on delete cascade,
      target_account_id bigint not null references accounts (id) on delete cascade,
      comment text not null,
      updated_at timestamptz not null,
      primary key (account_id, target_account_id)
    )`);
    this.addSql(`create table account_pins (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      target_account_id bigint not null references accounts (id) on delete cascade,
      created_at timestamptz not null,
      unique (account_id, target_account_id)
    )`);
    this.addSql(`create table account_domain_blocks (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      domain text not null,
      created_at timestamptz not null,
      unique (account_id, domain)
    )`);
  }

  override down(): void {
    this.addSql('drop table if exists account_domain_blocks, account_pins, account_notes cascade');
  }
}
