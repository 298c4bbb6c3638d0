import { Migration } from '@mikro-orm/migrations';

/**
 * The instance actor's key pairs (src/federation/instance-actor.ts): one RSA pair (HTTP signatures
 * on Roost's own fetches) and one Ed25519 pair, made once, on the first start that needs them, and
 * kept: peers cache the public key. The instance actor is not an account, so it has no row in
 * accounts and never appears in account lists, counts or searches.
 */
export class Migration20261126206000_instance_actor extends Migration {
  override name = 'Migration20261126206000_instance_actor';

  override up(): void {
    this.addSql(`create table instance_actor_keys (
      algorithm text primary key,
      public_jwk jsonb not null,
      private_jwk jsonb not null,
      created_at timestamptz not null
    )`);
  }

  override down(): void {
    this.addSql('drop table if exists instance_actor_keys');
  }
}
