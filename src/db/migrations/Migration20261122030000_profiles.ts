import { Migration } from '@mikro-orm/migrations';

/**
 * Profiles and sign-ups: the "hide followers and following" choice (Mastodon's
 * accounts.hide_collections, stored the same way for local and remote accounts: null = not said),
 * and the OAuth application a user signed up through (Mastodon's users.created_by_application_id).
 */
export class Migration20261122030000_profiles extends Migration {
  override name = 'Migration20261122030000_profiles';

  override up(): void {
    this.addSql(`alter table accounts add column hide_collections boolean`);
    this.addSql(`alter table users add column created_by_application_id bigint references oauth_applications (id) on delete set null`);
  }

  override down(): void {
    this.addSql(`alter table users drop column if exists created_by_application_id`);
    this.addSql(`alter table accounts drop column if exists hide_collections`);
  }
}
