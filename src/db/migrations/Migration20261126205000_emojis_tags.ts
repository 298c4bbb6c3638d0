import { Migration } from '@mikro-orm/migrations';

/**
 * Custom emojis, featured tags and followed tags (Mastodon's custom_emojis,
 * custom_emoji_categories, featured_tags and tag_follows).
 *
 * custom_emojis — local emojis (domain null: an operator's upload, its image and static PNG in
 *   the media storage under `image_key` / `static_key`) and remote copies (domain set: the
 *   `Emoji` tag's icon URL in `image_url`, its id in `uri`, its `updated` in `image_updated_at`).
 *   One shortcode per domain; shortcodes are matched as written (Mastodon's are case-sensitive).
 * featured_tags — a tag an account shows on its profile; the counts are read from its statuses.
 * tag_follows — a local account follows a tag: new public statuses with it go to its home feed.
 */
export class Migration20261126205000_emojis_tags extends Migration {
  override name = 'Migration20261126205000_emojis_tags';

  override up(): void {
    this.addSql(`create table custom_emoji_categories (
      id bigint primary key,
      name text not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create unique index custom_emoji_categories_name_key on custom_emoji_categories (lower(name))`);
    this.addSql(`create table custom_emojis (
      id bigint primary key,
      shortcode text not null,
      domain text,
      uri text,
      image_key text,
      static_key text,
      image_url text,
      image_updated_at timestamptz,
      category_id bigint references custom_emoji_categories (id) on delete set null,
      visible_in_picker boolean not null default true,
      disabled boolean not null default false,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create unique index custom_emojis_shortcode_domain_key on custom_emojis (shortcode, coalesce(domain, ''))`);
    this.addSql(`create table featured_tags (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      tag_id bigint not null references tags (id) on delete cascade,
      created_at timestamptz not null,
      unique (account_id, tag_id)
    )`);
    this.addSql(`create table tag_follows (
      id bigint primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      tag_id bigint not null references tags (id) on delete cascade,
      created_at timestamptz not null,
      unique (account_id, tag_id)
    )`);
    this.addSql(`create index tag_follows_tag_idx on tag_follows (tag_id)`);
    // The statuses in an account's home by a followed hashtag (effects/tag-feeds.ts), apart from
    // home_feeds: the home read walks each feed down (account_id, status_id desc), and a tag
    // branch walking home_feeds would pass over every followed account's status to find them.
    this.addSql(`create table tag_home_feeds (
      account_id bigint not null references accounts (id) on delete cascade,
      status_id bigint not null references statuses (id) on delete cascade,
      primary key (account_id, status_id)
    )`);
    this.addSql(`create index tag_home_feeds_status_idx on tag_home_feeds (status_id)`);
  }

  override down(): void {
    this.addSql('drop table if exists tag_home_feeds, tag_follows, featured_tags, custom_emojis, custom_emoji_categories cascade');
  }
}
