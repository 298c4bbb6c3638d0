/**
 * Filters on the read side: an account's filters with their keywords and statuses, one statement
 * whatever their number (the keywords and statuses aggregated as JSON per filter). Used by the
 * filter routes and by services/filter-engine.ts loadFilterSet.
 */
import type { Sql } from '../../db/sql.ts';
import type { Services } from '../../context.ts';
import type { FilterAction, FilterKeywordRow, FilterRow, FilterStatusRow } from '../../serializers/filter.ts';
import { isId } from './page.ts';
import { prepared } from '../../db/prepared.ts';

/** A filter as its statement returns it (keywords and statuses as JSON). */
export interface RawFilter {
  id: string;
  title: string;
  context: string[];
  action: FilterAction;
  expires_at: Date | string | null;
  keywords: { id: string; keyword: string; whole_word: boolean }[] | string | null;
  statuses: { id: string; status_id: string }[] | string | null;
}

const json = <T>(v: T[] | string | null): T[] => (v === null ? [] : typeof v === 'string' ? (JSON.parse(v) as T[]) : v);

export function filterFromRaw(r: RawFilter): FilterRow {
  return {
    id: r.id,
    title: r.title,
    context: r.context,
    action: r.action,
    expiresAt: r.expires_at === null ? null : new Date(r.expires_at),
    keywords: json(r.keywords).map((k): FilterKeywordRow => ({ id: String(k.id), keyword: k.keyword, wholeWord: k.whole_word })),
    statuses: json(r.statuses).map((s): FilterStatusRow => ({ id: String(s.id), statusId: String(s.status_id) })),
  };
}

export interface FilterQuery {
  /** One filter only. */
  filterId?: string;
  /** Only the filters still in force at this time. */
  activeAt?: Date;
}

/** {@link loadFilters}'s statement. */
const FILTERS_SQL = prepared(
  `select f.id::text as id, f.title, f.context, f.action, f.expires_at,
            (select json_agg(json_build_object('id', k.id::text, 'keyword', k.keyword, 'whole_word', k.whole_word) order by k.id)
               from filter_keywords k where k.filter_id = f.id) as keywords,
            (select json_agg(json_build_object('id', fs.id::text, 'status_id', fs.status_id::text) order by fs.id)
               from filter_statuses fs where fs.filter_id = f.id) as statuses
       from filters f
      where f.account_id = $1 and ($2::bigint is null or f.id = $2::bigint)
        and ($3::timestamptz is null or f.expires_at is null or f.expires_at > $3::timestamptz)
      order by f.id`,
);

/** The account's filters, oldest first, each with its keywords and statuses (by id): one statement. */
export async function loadFilters(sql: Sql, accountId: string, q: FilterQuery = {}): Promise<FilterRow[]> {
  if (q.filterId !== undefined && !isId(q.filterId)) return [];
  const rows = await sql.query<RawFilter>(
    FILTERS_SQL,
    [accountId, q.filterId ?? null, q.activeAt ?? null],
  );
  return rows.map(filterFromRaw);
}

/** The filters in force at `activeAt` of each of `accountIds`, by account: one statement. */
export async function loadActiveFiltersOf(sql: Sql, accountIds: readonly string[], activeAt: Date): Promise<Map<string, FilterRow[]>> {
  const out = new Map<string, FilterRow[]>(accountIds.map((id) => [id, []]));
  if (accountIds.length === 0) return out;
  const rows = await sql.query<RawFilter & { account_id: string }>(
    `select f.account_id::text as account_id, f.id::text as id, f.title, f.context, f.action, f.expires_at,
            (select json_agg(json_build_object('id', k.id::text, 'keyword', k.keyword, 'whole_word', k.whole_word) order by k.id)
               from filter_keywords k where k.filter_id = f.id) as keywords,
            (select json_agg(json_build_object('id', fs.id::text, 'status_id', fs.status_id::text) order by fs.id)
               from filter_statuses fs where fs.filter_id = f.id) as statuses
       from filters f
      where f.account_id = any($1::bigint[]) and (f.expires_at is null or f.expires_at > $2::timestamptz)
      order by f.id`,
    [[...accountIds], activeAt],
  );
  for (const r of rows) out.get(r.account_id)?.push(filterFromRaw(r));
  return out;
}

export async function filtersOf(services: Services, accountId: string): Promise<FilterRow[]> {
  return loadFilters(services.db.sql, accountId);
}

/** The account's filter `filterId`, or null (another's, like a missing one). */
export async function filterOf(services: Services, accountId: string, filterId: string): Promise<FilterRow | null> {
  return (await loadFilters(services.db.sql, accountId, { filterId }))[0] ?? null;
}

/** The keyword `keywordId` of one of the account's filters, with its filter, or null. */
export async function filterKeywordOf(services: Services, accountId: string, keywordId: string): Promise<{ filter: FilterRow; keyword: FilterKeywordRow } | null> {
  if (!isId(keywordId)) return null;
  const [row] = await services.db.sql.query<{ filter_id: string }>(
    `select k.filter_id::text as filter_id from filter_keywords k join filters f on f.id = k.filter_id where k.id = $1 and f.account_id = $2`,
    [keywordId, accountId],
  );
  if (!row) return null;
  const filter = await filterOf(services, accountId, row.filter_id);
  const keyword = filter?.keywords.find((k) => k.id === keywordId);
  return filter && keyword ? { filter, keyword } : null;
}

/** The status filter `id` of one of the account's filters, or null. */
export async function filterStatusOf(services: Services, accountId: string, id: string): Promise<FilterStatusRow | null> {
  if (!isId(id)) return null;
  const [row] = await services.db.sql.query<{ id: string; status_id: string }>(
    `select fs.id::text as id, fs.status_id::text as status_id from filter_statuses fs join filters f on f.id = fs.filter_id
      where fs.id = $1 and f.account_id = $2`,
    [id, accountId],
  );
  return row ? { id: row.id, statusId: row.status_id } : null;
}

/** Every keyword of the account's filters as v1 filters (with their filter), by keyword id. */
export async function v1FiltersOf(services: Services, accountId: string): Promise<{ filter: FilterRow; keyword: FilterKeywordRow }[]> {
  const filters = await filtersOf(services, accountId);
  return filters
    .flatMap((filter) => filter.keywords.map((keyword) => ({ filter, keyword })))
    .sort((a, b) => (BigInt(a.keyword.id) < BigInt(b.keyword.id) ? -1 : 1));
}
