import { Migration } from '@mikro-orm/migrations';

/** OAuth 2: applications, authorization grants and access tokens (tokens and codes stored hashed). */
export class Migration20261122010000_oauth extends Migration {
  override name = 'Migration20261122010000_oauth';

  override up(): void {
    this.addSql(`create table oauth_applications (
      id bigint primary key,
      name text not null,
      website text,
      redirect_uris text[] not null,
      scopes text not null,
      client_id text not null unique,
      client_secret text not null,
      owner_account_id bigint references accounts (id) on delete cascade,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create table oauth_access_grants (
      id bigint primary key,
      application_id bigint not null references oauth_applications (id) on delete cascade,
      user_id bigint not null references users (id) on delete cascade,
      code_hash text not null unique,
      redirect_uri text not null,
      scopes text not null,
      code_challenge text,
      code_challenge_method text,
      expires_at timestamptz not null,
      revoked_at timestamptz,
      created_at timestamptz not null
    )`);
    this.addSql(`create table oauth_access_tokens (
      id bigint primary key,
      application_id bigint references oauth_applications (id) on delete cascade,
      user_id bigint references users (id) on delete cascade,
      token_hash text not null unique,
      scopes text not null,
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz,
      created_at timestamptz not null
    )`);
    this.addSql(`create index oauth_access_tokens_user_idx on oauth_access_tokens (user_id) where revoked_at is null`);
  }

  override down(): void {
    this.addSql('drop table if exists oauth_access_tokens, oauth_access_grants, oauth_applications cascade');
  }
}
