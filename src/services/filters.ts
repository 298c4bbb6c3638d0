/**
 * Filters (Mastodon's methods/filters.md): a user's keyword and status filters, v2 and the legacy
 * v1 API over the same store. One use case, one transaction; a refusal writes nothing. Every
 * change writes ONE `filters.changed` outbox event in its transaction (streaming maps it to the
 * `filters_changed` event), however many keywords the request touched.
 *
 *  - createFilter / updateFilter: `title` (required, at most 256 characters), `context` (at least
 *    one of home, notifications, public, thread, account), `filter_action` (warn, hide, blur),
 *    `expires_in` (seconds from now; blank: never), `keywords_attributes` creating, editing (`id`)
 *    and deleting (`id` + `_destroy`) keywords in the same request, as Rails' nested attributes:
 *    an entry whose values are all blank is ignored, a new entry marked `_destroy` is not built, an
 *    `id` that is not one of the filter's keywords is a 404.
 *  - keywords and status filters one at a time; status filters name a status the owner may see,
 *    once per filter.
 *  - v1: a v1 filter is one keyword (its id the keyword's); creating one makes a filter titled
 *    after the phrase; `irreversible` is `hide`. Changing the filter's context, expiry or action
 *    through v1 is refused when it has other keywords too (as Mastodon).
 */
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import { RoostError, Validation, notFound } from '../lib/errors.ts';
import {
  FILTER_ACTIONS,
  FILTER_CONTEXTS,
  type FilterAction,
  type FilterKeywordRow,
  type FilterRow,
  type FilterStatusRow,
} from '../serializers/filter.ts';
import { recordEvent } from './actor-store.ts';
import { isId } from './reads/page.ts';
import { loadFilters } from './reads/filters.ts';
import { visibleSql } from './reads/statuses.ts';

export const TITLE_LENGTH_LIMIT = 256;
export const KEYWORD_LENGTH_LIMIT = 512;
/** expires_in is clamped to ±this many seconds (~317 years): beyond, no date is representable anyway. */
const MAX_EXPIRES_IN = 10_000_000_000;

export interface KeywordAttributes {
  id?: string;
  keyword?: string;
  wholeWord?: boolean;
  destroy?: boolean;
}

export interface FilterInput {
  title?: string;
  /** Undefined: not given (kept on update). */
  context?: string[];
  action?: string;
  /** Undefined: not given; null: never expires; else seconds from now. */
  expiresIn?: number | null;
  keywords?: KeywordAttributes[];
}

export interface KeywordInput {
  keyword?: string;
  wholeWord?: boolean;
}

export interface V1FilterInput {
  phrase?: string;
  context?: string[];
  irreversible?: boolean;
  wholeWord?: boolean;
  expiresIn?: number | null;
}

const MULTIPLE_KEYWORDS =
  'These parameters cannot be changed from this application because they apply to more than one filter keyword. Use a more recent application or the web interface.';

/** Rails' clean_up_contexts: stripped, blanks dropped. */
const cleanContext = (context: string[]) => context.map((c) => c.trim()).filter((c) => c !== '');

function checkContext(v: Validation, context: string[]): void {
  if (context.length === 0) v.add('context', 'ERR_BLANK', "can't be blank");
  if (context.length === 0 || context.some((c) => !(FILTER_CONTEXTS as readonly string[]).includes(c))) {
    v.add('context', 'ERR_INVALID', 'None or invalid context supplied');
  }
}

function checkAction(action: string | undefined): FilterAction | undefined {
  if (action === undefined || action === '') return undefined;
  if (!(FILTER_ACTIONS as readonly string[]).includes(action)) throw new RoostError(422, `'${action}' is not a valid action`);
  return action as FilterAction;
}

function checkKeyword(v: Validation, field: string, keyword: string): void {
  if (keyword.trim() === '') v.add(field, 'ERR_BLANK', "can't be blank");
  else if ([...keyword].length > KEYWORD_LENGTH_LIMIT) v.add(field, 'ERR_TOO_LONG', `is too long (maximum is ${KEYWORD_LENGTH_LIMIT} characters)`);
}

function expiresAt(services: Services, expiresIn: number | null): Date | null {
  if (expiresIn === null) return null;
  const s = Math.max(-MAX_EXPIRES_IN, Math.min(MAX_EXPIRES_IN, expiresIn));
  return new Date(services.clock.now().getTime() + s * 1000);
}

/** The one `filters.changed` event of a request, in its transaction. */
async function filtersChanged(services: Services, sql: Sql, accountId: string): Promise<void> {
  await recordEvent(services, sql, { actorKind: 'account', actorId: accountId, origin: 'client', event: { type: 'filters.changed', accountId } });
}

/** The owner's filter, locked for the change, or a 404. */
async function lockedFilter(sql: Sql, accountId: string, filterId: string): Promise<{ id: string; context: string[]; action: FilterAction; expires_at: Date | string | null }> {
  if (!isId(filterId)) throw notFound();
  const [row] = await sql.query<{ id: string; context: string[]; action: FilterAction; expires_at: Date | string | null }>(
    `select id::text as id, context, action, expires_at from filters where id = $1 and account_id = $2 for update`,
    [filterId, accountId],
  );
  if (!row) throw notFound();
  return row;
}

async function reload(sql: Sql, accountId: string, filterId: string): Promise<FilterRow> {
  const [row] = await loadFilters(sql, accountId, { filterId });
  if (!row) throw notFound();
  return row;
}

/** Rails' reject_if: :all_blank (`_destroy` aside). */
const allBlank = (k: KeywordAttributes) => k.id === undefined && (k.keyword === undefined || k.keyword === '') && k.wholeWord === undefined;

/** Applies keywords_attributes to `filterId` (its keywords already checked by the caller). */
async function writeKeywordAttributes(services: Services, sql: Sql, filterId: string, attrs: KeywordAttributes[], now: Date): Promise<void> {
  const destroy = attrs.filter((k) => k.id !== undefined && k.destroy).map((k) => k.id!);
  const edits = attrs.filter((k) => k.id !== undefined && !k.destroy);
  const creates = attrs.filter((k) => k.id === undefined && !k.destroy);
  if (destroy.length) await sql.query(`delete from filter_keywords where filter_id = $1 and id = any($2::bigint[])`, [filterId, destroy]);
  if (edits.length) {
    await sql.query(
      `update filter_keywords k set keyword = coalesce(e.keyword, k.keyword), whole_word = coalesce(e.whole_word, k.whole_word), updated_at = $2
         from unnest($3::bigint[], $4::text[], $5::boolean[]) as e (id, keyword, whole_word)
        where k.id = e.id and k.filter_id = $1`,
      [filterId, now, edits.map((k) => k.id), edits.map((k) => k.keyword ?? null), edits.map((k) => k.wholeWord ?? null)],
    );
  }
  if (creates.length) {
    await sql.query(
      `insert into filter_keywords (id, filter_id, keyword, whole_word, created_at, updated_at)
       select c.id, $1, c.keyword, c.whole_word, $2, $2 from unnest($3::bigint[], $4::text[], $5::boolean[]) with ordinality as c (id, keyword, whole_word, n)
        order by c.n`,
      [filterId, now, creates.map(() => services.ids.next()), creates.map((k) => k.keyword ?? ''), creates.map((k) => k.wholeWord ?? true)],
    );
  }
}

/** Validates keywords_attributes against the filter's keyword ids (null: a new filter has none). */
function checkKeywordAttributes(v: Validation, attrs: KeywordAttributes[], existing: ReadonlySet<string> | null): void {
  for (const k of attrs) {
    if (k.id !== undefined && (existing === null || !existing.has(k.id))) throw notFound();
    if (k.destroy) continue;
    if (k.id === undefined || k.keyword !== undefined) checkKeyword(v, 'keywords.keyword', k.keyword ?? '');
  }
}

export async function createFilter(services: Services, accountId: string, input: FilterInput): Promise<FilterRow> {
  const keywords = (input.keywords ?? []).filter((k) => !allBlank(k));
  const v = new Validation();
  checkKeywordAttributes(v, keywords, null);
  const title = input.title ?? '';
  if (title.trim() === '') v.add('title', 'ERR_BLANK', "can't be blank");
  else if ([...title].length > TITLE_LENGTH_LIMIT) v.add('title', 'ERR_TOO_LONG', `is too long (maximum is ${TITLE_LENGTH_LIMIT} characters)`);
  const context = cleanContext(input.context ?? []);
  checkContext(v, context);
  const action = checkAction(input.action) ?? 'warn';
  v.throwIfInvalid();
  return services.db.sql.transaction(async (sql) => {
    const now = services.clock.now();
    const id = services.ids.next();
    await sql.query(
      `insert into filters (id, account_id, title, context, action, expires_at, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $7, $7)`,
      [id, accountId, title, context, action, expiresAt(services, input.expiresIn ?? null), now],
    );
    await writeKeywordAttributes(services, sql, id, keywords, now);
    await filtersChanged(services, sql, accountId);
    return reload(sql, accountId, id);
  });
}

export async function updateFilter(services: Services, accountId: string, filterId: string, input: FilterInput): Promise<FilterRow> {
  if (!isId(filterId)) throw notFound();
  const keywords = (input.keywords ?? []).filter((k) => !allBlank(k));
  const action = checkAction(input.action);
  const context = input.context === undefined ? undefined : cleanContext(input.context);
  return services.db.sql.transaction(async (sql) => {
    await lockedFilter(sql, accountId, filterId);
    const existing = await sql.query<{ id: string }>(`select id::text as id from filter_keywords where filter_id = $1`, [filterId]);
    const v = new Validation();
    checkKeywordAttributes(v, keywords, new Set(existing.map((r) => r.id)));
    if (input.title !== undefined) {
      if (input.title.trim() === '') v.add('title', 'ERR_BLANK', "can't be blank");
      else if ([...input.title].length > TITLE_LENGTH_LIMIT) v.add('title', 'ERR_TOO_LONG', `is too long (maximum is ${TITLE_LENGTH_LIMIT} characters)`);
    }
    if (context !== undefined) checkContext(v, context);
    v.throwIfInvalid();
    const now = services.clock.now();
    await sql.query(
      `update filters set title = coalesce($3, title), context = coalesce($4, context), action = coalesce($5, action),
              expires_at = case when $6 then $7::timestamptz else expires_at end, updated_at = $8
        where id = $1 and account_id = $2`,
      [filterId, accountId, input.title ?? null, context ?? null, action ?? null, input.expiresIn !== undefined, input.expiresIn === undefined ? null : expiresAt(services, input.expiresIn), now],
    );
    await writeKeywordAttributes(services, sql, filterId, keywords, now);
    await filtersChanged(services, sql, accountId);
    return reload(sql, accountId, filterId);
  });
}

export async function deleteFilter(services: Services, accountId: string, filterId: string): Promise<void> {
  if (!isId(filterId)) throw notFound();
  await services.db.sql.transaction(async (sql) => {
    const rows = await sql.query(`delete from filters where id = $1 and account_id = $2 returning 1`, [filterId, accountId]);
    if (rows.length === 0) throw notFound();
    await filtersChanged(services, sql, accountId);
  });
}

export async function addFilterKeyword(services: Services, accountId: string, filterId: string, input: KeywordInput): Promise<FilterKeywordRow> {
  if (!isId(filterId)) throw notFound();
  return services.db.sql.transaction(async (sql) => {
    await lockedFilter(sql, accountId, filterId);
    const v = new Validation();
    checkKeyword(v, 'keyword', input.keyword ?? '');
    v.throwIfInvalid();
    const now = services.clock.now();
    const [row] = await sql.query<{ id: string; keyword: string; whole_word: boolean }>(
      `insert into filter_keywords (id, filter_id, keyword, whole_word, created_at, updated_at) values ($1, $2, $3, $4, $5, $5)
       returning id::text as id, keyword, whole_word`,
      [services.ids.next(), filterId, input.keyword, input.wholeWord ?? true, now],
    );
    await filtersChanged(services, sql, accountId);
    return { id: row.id, keyword: row.keyword, wholeWord: row.whole_word };
  });
}

/** The keyword of one of the owner's filters, locked, or a 404. */
async function lockedKeyword(sql: Sql, accountId: string, keywordId: string): Promise<{ filter_id: string; keyword: string; whole_word: boolean }> {
  if (!isId(keywordId)) throw notFound();
  const [row] = await sql.query<{ filter_id: string; keyword: string; whole_word: boolean }>(
    `select k.filter_id::text as filter_id, k.keyword, k.whole_word from filter_keywords k join filters f on f.id = k.filter_id
      where k.id = $1 and f.account_id = $2 for update of k`,
    [keywordId, accountId],
  );
  if (!row) throw notFound();
  return row;
}

export async function updateFilterKeyword(services: Services, accountId: string, keywordId: string, input: KeywordInput, field = 'keyword'): Promise<FilterKeywordRow> {
  return services.db.sql.transaction(async (sql) => {
    await lockedKeyword(sql, accountId, keywordId);
    const v = new Validation();
    if (input.keyword !== undefined) checkKeyword(v, field, input.keyword);
    v.throwIfInvalid();
    const [row] = await sql.query<{ id: string; keyword: string; whole_word: boolean }>(
      `update filter_keywords set keyword = coalesce($2, keyword), whole_word = coalesce($3, whole_word), updated_at = $4 where id = $1
       returning id::text as id, keyword, whole_word`,
      [keywordId, input.keyword ?? null, input.wholeWord ?? null, services.clock.now()],
    );
    await filtersChanged(services, sql, accountId);
    return { id: row.id, keyword: row.keyword, wholeWord: row.whole_word };
  });
}

/** Removes one keyword (also what DELETE /api/v1/filters/:id does: its filter stays). */
export async function deleteFilterKeyword(services: Services, accountId: string, keywordId: string): Promise<void> {
  await services.db.sql.transaction(async (sql) => {
    await lockedKeyword(sql, accountId, keywordId);
    await sql.query(`delete from filter_keywords where id = $1`, [keywordId]);
    await filtersChanged(services, sql, accountId);
  });
}

export async function addFilterStatus(services: Services, accountId: string, filterId: string, statusId: string | undefined): Promise<FilterStatusRow> {
  if (!isId(filterId)) throw notFound();
  return services.db.sql.transaction(async (sql) => {
    await lockedFilter(sql, accountId, filterId);
    const [status] =
      statusId !== undefined && isId(statusId)
        ? await sql.query<{ visible: boolean; taken: boolean }>(
            `select ${visibleSql('s', '$2::bigint')} as visible,
                    exists (select 1 from filter_statuses fs where fs.filter_id = $3 and fs.status_id = s.id) as taken
               from statuses s where s.id = $1`,
            [statusId, accountId, filterId],
          )
        : [];
    const v = new Validation();
    if (!status) v.add('status', 'ERR_BLANK', 'must exist');
    else if (!status.visible) v.add('status', 'ERR_INVALID', 'is invalid');
    else if (status.taken) v.add('status', 'ERR_TAKEN', 'has already been taken');
    v.throwIfInvalid();
    const [row] = await sql.query<{ id: string; status_id: string }>(
      `insert into filter_statuses (id, filter_id, status_id, created_at) values ($1, $2, $3, $4) returning id::text as id, status_id::text as status_id`,
      [services.ids.next(), filterId, statusId, services.clock.now()],
    );
    await filtersChanged(services, sql, accountId);
    return { id: row.id, statusId: row.status_id };
  });
}

export async function deleteFilterStatus(services: Services, accountId: string, id: string): Promise<void> {
  if (!isId(id)) throw notFound();
  await services.db.sql.transaction(async (sql) => {
    const rows = await sql.query(
      `delete from filter_statuses fs using filters f where fs.id = $1 and f.id = fs.filter_id and f.account_id = $2 returning 1`,
      [id, accountId],
    );
    if (rows.length === 0) throw notFound();
    await filtersChanged(services, sql, accountId);
  });
}

// ---------------------------------------------------------------------------------------------
// v1

function checkPhrase(v: Validation, phrase: string | undefined): void {
  const p = phrase ?? '';
  if (p.trim() === '') v.add('phrase', 'ERR_BLANK', "can't be blank");
  else if ([...p].length > KEYWORD_LENGTH_LIMIT) v.add('phrase', 'ERR_TOO_LONG', `is too long (maximum is ${KEYWORD_LENGTH_LIMIT} characters)`);
}

/** A filter titled after the phrase, with the phrase as its one keyword; returns both. */
export async function createV1Filter(services: Services, accountId: string, input: V1FilterInput): Promise<{ filter: FilterRow; keyword: FilterKeywordRow }> {
  const v = new Validation();
  checkPhrase(v, input.phrase);
  const context = cleanContext(input.context ?? []);
  checkContext(v, context);
  v.throwIfInvalid();
  const phrase = input.phrase!;
  return services.db.sql.transaction(async (sql) => {
    const now = services.clock.now();
    const id = services.ids.next();
    const keywordId = services.ids.next();
    await sql.query(
      `insert into filters (id, account_id, title, context, action, expires_at, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $7, $7)`,
      [id, accountId, [...phrase].slice(0, TITLE_LENGTH_LIMIT).join(''), context, input.irreversible ? 'hide' : 'warn', expiresAt(services, input.expiresIn ?? null), now],
    );
    await sql.query(
      `insert into filter_keywords (id, filter_id, keyword, whole_word, created_at, updated_at) values ($1, $2, $3, $4, $5, $5)`,
      [keywordId, id, phrase, input.wholeWord ?? true, now],
    );
    await filtersChanged(services, sql, accountId);
    const filter = await reload(sql, accountId, id);
    return { filter, keyword: filter.keywords.find((k) => k.id === keywordId)! };
  });
}

/** The keyword's phrase and whole_word; its filter's context, action and expiry when it has no other keyword. */
export async function updateV1Filter(services: Services, accountId: string, keywordId: string, input: V1FilterInput): Promise<{ filter: FilterRow; keyword: FilterKeywordRow }> {
  return services.db.sql.transaction(async (sql) => {
    const kw = await lockedKeyword(sql, accountId, keywordId);
    const filter = await lockedFilter(sql, accountId, kw.filter_id);
    const v = new Validation();
    if (input.phrase !== undefined) checkPhrase(v, input.phrase);
    const context = input.context === undefined ? undefined : cleanContext(input.context);
    if (context !== undefined) checkContext(v, context);
    v.throwIfInvalid();
    const action: FilterAction | undefined = input.irreversible === undefined ? undefined : input.irreversible ? 'hide' : filter.action === 'hide' ? 'warn' : filter.action;
    const newExpiry = input.expiresIn === undefined ? undefined : expiresAt(services, input.expiresIn);
    const oldExpiry = filter.expires_at === null ? null : new Date(filter.expires_at).getTime();
    const changed =
      (context !== undefined && context.join('\u0000') !== filter.context.join('\u0000')) ||
      (action !== undefined && action !== filter.action) ||
      (newExpiry !== undefined && (newExpiry?.getTime() ?? null) !== oldExpiry);
    if (changed) {
      const [{ n }] = await sql.query<{ n: number }>(`select count(*)::int as n from filter_keywords where filter_id = $1`, [kw.filter_id]);
      if (n > 1) throw new RoostError(422, MULTIPLE_KEYWORDS);
    }
    const now = services.clock.now();
    await sql.query(
      `update filter_keywords set keyword = coalesce($2, keyword), whole_word = coalesce($3, whole_word), updated_at = $4 where id = $1`,
      [keywordId, input.phrase ?? null, input.wholeWord ?? null, now],
    );
    if (changed) {
      await sql.query(
        `update filters set context = coalesce($2, context), action = coalesce($3, action),
                expires_at = case when $4 then $5::timestamptz else expires_at end, updated_at = $6 where id = $1`,
        [kw.filter_id, context ?? null, action ?? null, newExpiry !== undefined, newExpiry ?? null, now],
      );
    }
    await filtersChanged(services, sql, accountId);
    const row = await reload(sql, accountId, kw.filter_id);
    return { filter: row, keyword: row.keywords.find((k) => k.id === keywordId)! };
  });
}
