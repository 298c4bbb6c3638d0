import { Migration } from '@mikro-orm/migrations';

/**
 * Settings the server keeps about itself in its database. The first is `domain`, written on first
 * start: a server's domain cannot change once accounts (ids, keys, followers elsewhere) exist.
 */
export class Migration20261123090000_instance_settings extends Migration {
  override name = 'Migration20261123090000_instance_settings';

  override up(): void {
    this.addSql(`create table instance_settings (
      name text primary key,
      value text not null,
      updated_at timestamptz not null default now()
    )`);
  }
}
