import { Migration } from '@mikro-orm/migrations';

/**
 * account_domain_blocks by domain: the streaming hub asks, per status event, who blocks the
 * author's domain (src/streaming/hub.ts droppedFor), by target rather than by subscriber.
 */
export class Migration20261127090000_account_domain_blocks_domain extends Migration {
  override name = 'Migration20261127090000_account_domain_blocks_domain';

  override up(): void {
    this.addSql(`create index account_domain_blocks_domain_idx on account_domain_blocks (domain)`);
  }

  override down(): void {
    this.addSql(`drop index if exists account_domain_blocks_domain_idx`);
  }
}
