/**
 * Tags on the read side: a page of tags with their week of use (Mastodon's Trends::History: per
 * day, public and unlisted statuses and the distinct accounts that wrote them) and the viewer's
 * `following` / `featuring`, in ONE statement whatever the page size; the viewer's followed tags
 * (by follow id, for Link headers); an account's featured tags with their counts (one statement);
 * the tags an account used most lately (featured tag suggestions).
 */
import type { Services } from '../../context.ts';
import { minIdAt } from '../../lib/snowflake.ts';
import type { FeaturedTagRow } from '../../serializers/featured-tag.ts';
import type { TagRow } from '../../serializers/tag.ts';
import { newestFirst, pageSql, type PageParams } from './page.ts';

const DAY_MS = 86_400_000;
/** Days of history a tag shows (Mastodon: a week, today first). */
const HISTORY_DAYS = 7;
/** Featured tag suggestions look at the account's latest statuses (Mastodon's RECENT_STATUS_LIMIT). */
const RECENT_STATUS_LIMIT = 1000;
const SUGGESTIONS = 10;

/** A week of no use, today first (a tag nobody wrote yet). */
export function emptyHistory(now: Date): TagRow['history'] {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  return Array.from({ length: HISTORY_DAYS }, (_, i) => ({ day: String((today - i * DAY_MS) / 1000), uses: '0', accounts: '0' }));
}

/** The tags `ids` (unknown ones left out) with their history and the viewer's flags. */
export async function loadTags(services: Services, ids: readonly string[], viewerId: string | null): Promise<Map<string, TagRow>> {
  const out = new Map<string, TagRow>();
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return out;
  const now = services.clock.now();
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const since = new Date(today - (HISTORY_DAYS - 1) * DAY_MS);
  const rows = await services.db.sql.query<{ id: string; name: string; following: boolean; featuring: boolean; history: unknown }>(
    `select t.id::text, t.name,
            exists (select 1 from tag_follows tf where tf.tag_id = t.id and tf.account_id = $2) as following,
            exists (select 1 from featured_tags ft where ft.tag_id = t.id and ft.account_id = $2) as featuring,
            (select coalesce(json_agg(json_build_object('day', h.day, 'uses', h.uses, 'accounts', h.accounts)), '[]'::json) from (
               select floor(extract(epoch from s.created_at) / 86400)::bigint as day, count(*)::int as uses, count(distinct s.account_id)::int as accounts
                 from statuses_tags st join statuses s on s.id = st.status_id
                where st.tag_id = t.id and st.status_id >= $3::bigint and s.created_at >= $4 and s.deleted_at is null
                  and s.visibility in ('public', 'unlisted') and s.reblog_of_id is null
                  and not exists (select 1 from accounts ha where ha.id = s.account_id and ha.silenced_at is not null)
                group by 1) h) as history
       from tags t where t.id = any($1::bigint[])`,
    [wanted, viewerId, minIdAt(new Date(since.getTime() - DAY_MS)), since],
  );
  for (const r of rows) {
    const raw = (typeof r.history === 'string' ? JSON.parse(r.history) : r.history) as { day: number | string; uses: number; accounts: number }[];
    const byDay = new Map(raw.map((h) => [Number(h.day), h]));
    const history = [];
    for (let i = 0; i < HISTORY_DAYS; i++) {
      const day = (today - i * DAY_MS) / DAY_MS;
      const h = byDay.get(day);
      history.push({ day: String(day * 86_400), uses: String(h?.uses ?? 0), accounts: String(h?.accounts ?? 0) });
    }
    out.set(r.id, { id: r.id, name: r.name, history, following: r.following, featuring: r.featuring });
  }
  return out;
}

/** The viewer's followed tags, newest follow first: tag ids and the follow ids (the Link cursors). */
export async function followedTagsPage(services: Services, accountId: string, p: PageParams): Promise<{ tagIds: string[]; cursorIds: string[] }> {
  const page = pageSql('tf.id', p, 2);
  const rows = await services.db.sql.query<{ id: string; tag_id: string }>(
    `select tf.id::text, tf.tag_id::text from tag_follows tf where tf.account_id = $1${page.where} order by ${page.order} limit ${p.limit}`,
    [accountId, ...page.params],
  );
  const ordered = newestFirst(rows, p);
  return { tagIds: ordered.map((r) => r.tag_id), cursorIds: ordered.map((r) => r.id) };
}

/**
 * An account's featured tags, oldest first (as Mastodon lists them), each with the number of the
 * account's public and unlisted statuses using it and the date of the latest: one statement.
 */
export async function featuredTagsOf(services: Services, accountId: string): Promise<FeaturedTagRow[]> {
  const rows = await services.db.sql.query<{ id: string; tag_id: string; name: string; username: string; statuses_count: number; last_status_at: string | Date | null }>(
    `select ft.id::text, ft.tag_id::text, t.name, a.username, c.n as statuses_count, c.last as last_status_at
       from featured_tags ft join tags t on t.id = ft.tag_id join accounts a on a.id = ft.account_id
       cross join lateral (
         select count(*)::int as n, max(s.created_at) as last from statuses_tags st join statuses s on s.id = st.status_id
          where st.tag_id = ft.tag_id and s.account_id = ft.account_id and s.deleted_at is null
            and s.visibility in ('public', 'unlisted') and s.reblog_of_id is null) c
      where ft.account_id = $1 and a.domain is null and a.suspended_at is null
      order by ft.id`,
    [accountId],
  );
  return rows.map((r) => ({
    id: r.id,
    tagId: r.tag_id,
    name: r.name,
    username: r.username,
    statusesCount: Number(r.statuses_count),
    lastStatusAt: r.last_status_at ? new Date(r.last_status_at) : null,
  }));
}

/** An account's featured tags (none for a remote account: Roost does not read their collections), null when there is no such account. */
export async function accountFeaturedTags(services: Services, accountId: string): Promise<FeaturedTagRow[] | null> {
  const [known] = await services.db.sql.query(`select 1 from accounts where id = $1`, [accountId]);
  return known ? featuredTagsOf(services, accountId) : null;
}

/** The tags of the account's latest statuses, most used first, not featured yet (Mastodon's suggestions_for_account). */
export async function featuredTagSuggestions(services: Services, accountId: string): Promise<string[]> {
  const rows = await services.db.sql.query<{ id: string }>(
    `select st.tag_id::text as id from statuses_tags st
      where st.status_id in (select s.id from statuses s where s.account_id = $1 and s.deleted_at is null order by s.id desc limit ${RECENT_STATUS_LIMIT})
        and not exists (select 1 from featured_tags ft where ft.account_id = $1 and ft.tag_id = st.tag_id)
      group by st.tag_id order by count(*) desc, max(st.status_id) desc limit ${SUGGESTIONS}`,
    [accountId],
  );
  return rows.map((r) => r.id);
}
