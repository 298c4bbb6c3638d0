import { Migration } from '@mikro-orm/migrations';

/**
 * When each operator-configured text (the extended description, the privacy policy) last changed:
 * its SHA-256 and the time Roost first saw that version. The texts live in the configuration,
 * which has no history of its own; this is what `updated_at` in the instance API reports.
 */
export class Migration20261123160000_configured_texts extends Migration {
  override name = 'Migration20261123160000_configured_texts';

  override up(): void {
    this.addSql(`create table configured_texts (
      name text primary key,
      sha256 text not null,
      updated_at timestamptz not null
    )`);
  }

  override down(): void {
    this.addSql('drop table configured_texts');
  }
}
