import { Migration } from '@mikro-orm/migrations';

/**
 * Web Push subscriptions (src/push/): one per access token (Mastodon's web_push_subscriptions).
 * `access_token_sealed`: the token itself, which Mastodon's payload carries (`access_token`), sealed
 * with AES-256-GCM under a key derived from the instance's secret (src/push/seal.ts): tokens are
 * otherwise stored only as hashes, and a leaked database alone still holds no usable token.
 * `alerts` holds the alert types the client sent, each already cast to a boolean (or null for an
 * empty string, as Rails casts it); `policy` null means "all".
 *
 * The subscription goes with its token: deleted with the row (cascade) and, through the trigger,
 * as soon as the token is revoked, whichever code path revokes it (the revoke endpoint, a reused
 * authorization code, later a password change).
 */
export class Migration20261127003000_push extends Migration {
  override name = 'Migration20261127003000_push';

  override up(): void {
    this.addSql(`create table web_push_subscriptions (
      id bigint primary key,
      access_token_id bigint not null unique references oauth_access_tokens (id) on delete cascade,
      user_id bigint not null references users (id) on delete cascade,
      endpoint text not null,
      key_p256dh text not null,
      key_auth text not null,
      access_token_sealed text not null,
      standard boolean not null default false,
      alerts jsonb not null default '{}',
      policy text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index web_push_subscriptions_user_idx on web_push_subscriptions (user_id)`);
    this.addSql(`create function web_push_subscriptions_token_revoked() returns trigger language plpgsql as $$
      begin
        delete from web_push_subscriptions where access_token_id = new.id;
        return new;
      end
    $$`);
    this.addSql(`create trigger web_push_subscriptions_token_revoked
      after update of revoked_at on oauth_access_tokens
      for each row when (new.revoked_at is not null and old.revoked_at is null)
      execute function web_push_subscriptions_token_revoked()`);
  }

  override down(): void {
    this.addSql('drop trigger if exists web_push_subscriptions_token_revoked on oauth_access_tokens');
    this.addSql('drop function if exists web_push_subscriptions_token_revoked()');
    this.addSql('drop table if exists web_push_subscriptions');
  }
}
