import { Migration } from '@mikro-orm/migrations';

/**
 * The instance's domain policy (Mastodon's DomainBlock and DomainAllow, managed through
 * /api/v1/admin/domain_blocks and domain_allows and `roost domains …`), and the marker of what it
 * did to stored accounts.
 *
 * Domains are stored normalised (src/lib/domains.ts): lower case, punycode, no trailing dot, an
 * optional :port. A block on example.com covers its subdomains; the most specific block rules.
 *
 * instance_domain_block_effects is Mastodon's suspension_origin / "suspended_at = the block's
 * created_at" linkage: an account suspended or silenced BECAUSE of the domain policy has a row
 * here, so lifting or softening the block lifts exactly those flags, never a moderator's own
 * suspension of the same account.
 */
export class Migration20261123195000_instance_domain_policy extends Migration {
  override name = 'Migration20261123195000_instance_domain_policy';

  override up(): void {
    this.addSql(`create table instance_domain_blocks (
      id bigint primary key,
      domain text not null,
      severity text not null default 'silence' check (severity in ('silence', 'suspend', 'noop')),
      reject_media boolean not null default false,
      reject_reports boolean not null default false,
      private_comment text,
      public_comment text,
      obfuscate boolean not null default false,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create unique index instance_domain_blocks_domain_key on instance_domain_blocks (domain)`);
    this.addSql(`create table instance_domain_allows (
      id bigint primary key,
      domain text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create unique index instance_domain_allows_domain_key on instance_domain_allows (domain)`);
    this.addSql(`create table instance_domain_block_effects (
      account_id bigint not null references accounts (id) on delete cascade,
      effect text not null check (effect in ('suspend', 'silence')),
      created_at timestamptz not null,
      primary key (account_id, effect)
    )`);
  }

  override down(): void {
    this.addSql('drop table if exists instance_domain_block_effects, instance_domain_allows, instance_domain_blocks cascade');
  }
}
