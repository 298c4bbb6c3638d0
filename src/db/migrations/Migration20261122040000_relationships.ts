import { Migration } from '@mikro-orm/migrations';

/** Mutes and blocks; follows keep every state of their actor (ended ones too). */
export class Migration20261122040000_relationships extends Migration {
  override name = 'Migration20261122040000_relationships';

  override up(): void {
    this.addSql(`create table mutes (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      target_account_id bigint not null references accounts (id) on delete cascade,
      hide_notifications boolean not null default true,
      expires_at timestamptz,
      created_at timestamptz not null,
      unique (account_id, target_account_id)
    )`);
    this.addSql(`create index mutes_target_idx on mutes (target_account_id)`);
    this.addSql(`create table blocks (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      target_account_id bigint not null references accounts (id) on delete cascade,
      uri text,
      created_at timestamptz not null,
      unique (account_id, target_account_id)
    )`);
    this.addSql(`create index blocks_target_idx on blocks (target_account_id)`);
  }

  override down(): void {
    this.addSql('drop table if exists blocks, mutes cascade');
  }
}
