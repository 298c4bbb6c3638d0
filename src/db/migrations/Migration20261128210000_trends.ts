import { Migration } from '@mikro-orm/migrations';

/**
 * Trends (GET /api/v1/trends/*, services/trends.ts):
 *  - `trend_tag_uses`: one row per public status and hashtag it uses, written by the trends consumer
 *    of `status.created` (effects/trends.ts): the day (days since the epoch, UTC) and the author,
 *    so a day's distinct accounts are counted, not its uses. Kept 7 days.
 *  - `trends`: the current score of each tag, status and link (preview card) the refresh found,
 *    and its review: `trendable` null until an admin approves (true) or rejects (false) it. A
 *    reviewed row stays when its score falls to 0, so a rejected tag stays rejected.
 */
export class Migration20261128210000_trends extends Migration {
  override name = 'Migration20261128210000_trends';

  override up(): void {
    this.addSql(`create table trend_tag_uses (
      tag_id bigint not null references tags (id) on delete cascade,
      status_id bigint not null,
      account_id bigint not null references accounts (id) on delete cascade,
      day integer not null,
      primary key (tag_id, status_id)
    )`);
    this.addSql(`create index trend_tag_uses_day on trend_tag_uses (day)`);
    this.addSql(`create table trends (
      kind text not null,
      target_id bigint not null,
      score double precision not null default 0,
      trendable boolean,
      reviewed_at timestamptz,
      updated_at timestamptz not null default now(),
      primary key (kind, target_id),
      constraint trends_kind_check check (kind in ('tag', 'status', 'link'))
    )`);
    this.addSql(`create index trends_ranked on trends (kind, score desc, target_id desc) where score > 0`);
  }

  override down(): void {
    this.addSql(`drop table if exists trends, trend_tag_uses`);
  }
}
