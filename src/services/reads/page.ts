/**
 * A page of rows by id cursor (Mastodon's max_id / since_id / min_id / limit), as read modules
 * take it: routes parse the request into PageParams (api/pagination.ts), read modules turn it into
 * SQL here and return the rows newest first.
 */
export interface PageParams {
  maxId: string | null;
  sinceId: string | null;
  minId: string | null;
  limit: number;
}

/** SQL for a page over `column` (a bigint id): the where clause, the order and the parameters. */
export function pageSql(column: string, p: PageParams, firstParam: number): { where: string; order: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (p.maxId) where.push(`${column} < $${firstParam + params.push(p.maxId) - 1}`);
  if (p.sinceId) where.push(`${column} > $${firstParam + params.push(p.sinceId) - 1}`);
  if (p.minId) where.push(`${column} > $${firstParam + params.push(p.minId) - 1}`);
  return {
    where: where.length ? ` and ${where.join(' and ')}` : '',
    // min_id pages walk forward from the cursor; the results are still returned newest first.
    order: p.minId ? `${column} asc` : `${column} desc`,
    params,
  };
}

/** Rows fetched for a min_id page come oldest first: put them newest first. */
export function newestFirst<T>(rows: T[], p: PageParams): T[] {
  return p.minId ? rows.reverse() : rows;
}

/** An id that fits a bigint column (anything else names no row: read modules skip it rather than fail). */
export function isId(id: string): boolean {
  return /^\d{1,19}$/.test(id) && BigInt(id) <= 9223372036854775807n;
}
