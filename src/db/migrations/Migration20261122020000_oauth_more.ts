import { Migration } from '@mikro-orm/migrations';

/**
 * OAuth: an authorization grant remembers the access token it was exchanged for, so that a second
 * use of the code revokes that token (RFC 6749 §4.1.2: the code may have been intercepted).
 */
export class Migration20261122020000_oauth_more extends Migration {
  override name = 'Migration20261122020000_oauth_more';

  override up(): void {
    this.addSql(
      'alter table oauth_access_grants add column access_token_id bigint references oauth_access_tokens (id) on delete set null',
    );
  }

  override down(): void {
    this.addSql('alter table oauth_access_grants drop column if exists access_token_id');
  }
}
