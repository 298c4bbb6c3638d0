/**
 * Trends on the read side: a page of what trends (ids by score, one statement), the review state
 * of those ids for the admin API, and the links (preview cards) of a page with their week of use
 * (one statement). The scores themselves are computed in the background (services/trends.ts).
 */
import type { Services } from '../../context.ts';
import { hiddenFromSql } from '../../db/audience.ts';
import type { PreviewCardRow } from '../../serializers/preview-card.ts';
import type { TagRow } from '../../serializers/tag.ts';
import { cardFromRow, cardJsonSql } from './statuses.ts';
import { emptyHistory } from './tags.ts';

type Kind = 'tag' | 'status' | 'link';

export interface TrendPageOptions {
  offset: number;
  limit: number;
  /** The public lists: approved rows (and unreviewed ones when trendable by default); the admin lists: every row that scores. */
  audience: 'public' | 'admin';
  /** The signed-in viewer: statuses and links of authors hidden from them are left out (public lists). */
  viewerId?: string | null;
}

/** The ids that trend, best first. */
export async function trendingIds(services: Services, kind: Kind, o: TrendPageOptions): Promise<string[]> {
  const params: unknown[] = [kind, o.limit, o.offset];
  const where: string[] = [];
  if (o.audience === 'public') {
    where.push(services.config.trends.trendableByDefault ? `coalesce(t.trendable, true)` : `t.trendable`);
    if (kind === 'status') {
      // Still public, not deleted, its author not suspended; and for a viewer, not hidden from them.
      params.push(o.viewerId ?? null, services.clock.now());
      where.push(`exists (select 1 from statuses s join accounts a on a.id = s.account_id
                          where s.id = t.target_id and s.deleted_at is null and s.visibility = 'public' and a.suspended_at is null
                            and ($4::bigint is null or not ${hiddenFromSql('$4::bigint', 's.account_id', '$5')}))`);
    }
  }
  const rows = await services.db.sql.query<{ id: string }>(
    `select t.target_id::text as id from trends t
      where t.kind = $1 and t.score > 0 ${where.map((w) => `and ${w}`).join(' ')}
      order by t.score desc, t.target_id desc limit $2 offset $3`,
    params,
  );
  return rows.map((r) => r.id);
}

/** The review of each id (`trendable`: null until reviewed); ids with no row are unreviewed. */
export async function trendReviews(services: Services, kind: Kind, ids: readonly string[]): Promise<Map<string, boolean | null>> {
  const out = new Map<string, boolean | null>(ids.map((id) => [id, null]));
  if (ids.length === 0) return out;
  const rows = await services.db.sql.query<{ id: string; trendable: boolean | null }>(
    `select target_id::text as id, trendable from trends where kind = $1 and target_id = any($2::bigint[])`,
    [kind, [...ids]],
  );
  for (const r of rows) out.set(r.id, r.trendable);
  return out;
}

export interface TrendLinkRow {
  id: string;
  card: PreviewCardRow;
  history: TagRow['history'];
}

/**
 * Preview cards by id (unknown ones left out) with their week of use, today first: per day, the
 * public statuses carrying the card and their distinct authors. One statement.
 */
export async function loadTrendLinks(services: Services, ids: readonly string[]): Promise<Map<string, TrendLinkRow>> {
  const out = new Map<string, TrendLinkRow>();
  if (ids.length === 0) return out;
  const now = services.clock.now();
  const week = emptyHistory(now);
  const since = new Date(Number(week[week.length - 1]!.day) * 1000);
  const rows = await services.db.sql.query<{ id: string; card: Record<string, unknown>; history: { day: number; uses: number; accounts: number }[] | null }>(
    `select pc.id::text as id, ${cardJsonSql('pc', 'null::text')} as card,
            (select json_agg(json_build_object('day', h.day, 'uses', h.uses, 'accounts', h.accounts)) from (
               select floor(extract(epoch from s.created_at) / 86400)::bigint * 86400 as day, count(*)::int as uses, count(distinct s.account_id)::int as accounts
                 from preview_cards_statuses pcs join statuses s on s.id = pcs.status_id
                where pcs.preview_card_id = pc.id and s.created_at >= $2 and s.deleted_at is null and s.visibility = 'public' and s.reblog_of_id is null
                group by 1) h) as history
       from preview_cards pc where pc.id = any($1::bigint[])`,
    [[...ids], since],
  );
  for (const r of rows) {
    const byDay = new Map((r.history ?? []).map((h) => [String(h.day), h]));
    const history = week.map((d) => {
      const h = byDay.get(d.day);
      return h ? { day: d.day, uses: String(h.uses), accounts: String(h.accounts) } : d;
    });
    out.set(r.id, { id: r.id, card: cardFromRow(r.card), history });
  }
  return out;
}
