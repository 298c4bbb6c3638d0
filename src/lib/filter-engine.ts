/**
 * The filter engine, pure (DESIGN.md principle 6: one engine for timelines, notifications,
 * streaming and push). services/filter-engine.ts loads an account's filters (loadFilterSet); this
 * module compiles them once and matches statuses against them:
 *
 *  - a keyword matches the status's plain text, case-insensitively: its content warning, its
 *    content (HTML → text), its poll options and its media descriptions, as Mastodon's
 *    Status#searchable_text; a reblog is matched on the status it reblogs;
 *  - `whole_word`: as Mastodon's CustomFilterKeyword#to_regex, a keyword that starts (ends) with a
 *    word character must not have a word character right before (after) it. Word characters are
 *    Unicode's letters, marks, decimal digits and connector punctuation (Ruby's [[:word:]]), so
 *    "кот" does not match inside "который", "#tag" matches "#tag!" but not "#tagging", and a
 *    keyword that starts with `#` or `@` needs no boundary before it;
 *  - a filter's own statuses match by id (the status or, for a reblog, the one it reblogs);
 *  - only filters for the asked context apply, and a filter whose `expires_at` has passed stops
 *    applying by itself (pass `now`; loadFilterSet already leaves out those expired when loaded);
 *  - the viewer's own statuses (and own reblogs) are never filtered (Mastodon's
 *    StatusRelationshipsPresenter leaves them out);
 *  - any matching `hide` filter hides the status; every match (warn, blur, hide) is reported as
 *    Mastodon's FilterResult, in the status's `filtered` array.
 */
import { Parser } from 'htmlparser2';
import {
  serializeFilter,
  type FilterContext,
  type FilterRow,
  type MastodonFilter,
  type MastodonFilterResult,
} from '../serializers/filter.ts';

export type { FilterContext, MastodonFilterResult } from '../serializers/filter.ts';

/** What the engine needs of a status. */
export interface FilterableStatus {
  /** The status's id (for a reblog: the reblog's). */
  id: string;
  /** For a reblog, the reblogged status's id (its text is what `text` holds). */
  reblogOfId: string | null;
  /** The author of `id` (the reblogger, for a reblog): the viewer's own are never filtered. Null: unknown. */
  accountId: string | null;
  /** The searchable plain text (filterableText). */
  text: string;
}

interface CompiledKeyword {
  keyword: string;
  re: RegExp;
}

export interface CompiledFilter {
  row: FilterRow;
  /** The Filter as a FilterResult shows it (no keywords, no statuses), serialized once. */
  json: MastodonFilter;
  keywords: CompiledKeyword[];
  statusIds: ReadonlySet<string>;
}

/** An account's filters, compiled once (per request, or per streaming connection until filters_changed). */
export interface FilterSet {
  accountId: string;
  filters: CompiledFilter[];
}

export interface FilterOutcome {
  hidden: boolean;
  filtered: MastodonFilterResult[];
}

const WORD = '[\\p{L}\\p{M}\\p{Nd}\\p{Pc}]';
const STARTS_WITH_WORD = /^[\p{L}\p{M}\p{Nd}\p{Pc}]/u;
const ENDS_WITH_WORD = /[\p{L}\p{M}\p{Nd}\p{Pc}]$/u;

/** `s` as a literal inside a `u`-flag regular expression. */
function escapeRegExp(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

/** The keyword's matcher: case-insensitive, with Unicode word boundaries where `wholeWord` asks for them. */
export function keywordRegExp(keyword: string, wholeWord: boolean): RegExp {
  let source = escapeRegExp(keyword);
  if (wholeWord) {
    if (STARTS_WITH_WORD.test(keyword)) source = `(?<!${WORD})${source}`;
    if (ENDS_WITH_WORD.test(keyword)) source = `${source}(?!${WORD})`;
  }
  return new RegExp(source, 'iu');
}

/** Compiles an account's filter rows (services/filter-engine.ts loadFilterSet loads them). */
export function compileFilterSet(accountId: string, rows: readonly FilterRow[]): FilterSet {
  return {
    accountId,
    filters: rows.map((row) => ({
      row,
      json: serializeFilter(row, { rules: false }),
      keywords: row.keywords.filter((k) => k.keyword !== '').map((k) => ({ keyword: k.keyword, re: keywordRegExp(k.keyword, k.wholeWord) })),
      statusIds: new Set(row.statuses.map((s) => s.statusId)),
    })),
  };
}

/**
 * The filters of `set` that match `status` in `context` (expired ones left out when `now` is
 * given). `'any'`: every filter whatever its context, as Mastodon's status_matches_filters for a
 * status asked for by id.
 */
export function applyFilters(set: FilterSet, status: FilterableStatus, context: FilterContext | 'any', now?: Date): FilterOutcome {
  const out: FilterOutcome = { hidden: false, filtered: [] };
  if (set.filters.length === 0 || status.accountId === set.accountId) return out;
  for (const f of set.filters) {
    if (context !== 'any' && !f.row.context.includes(context)) continue;
    if (now && f.row.expiresAt && f.row.expiresAt.getTime() <= now.getTime()) continue;
    const keywordMatches = f.keywords.filter((k) => k.re.test(status.text)).map((k) => k.keyword);
    // As Mastodon: null when the filter has no statuses, else those of this status it names.
    const statusMatches = f.statusIds.size === 0 ? null : [status.id, status.reblogOfId].filter((id): id is string => !!id && f.statusIds.has(id));
    if (keywordMatches.length === 0 && !statusMatches?.length) continue;
    if (f.row.action === 'hide') out.hidden = true;
    out.filtered.push({ filter: f.json, keyword_matches: keywordMatches.length ? keywordMatches : null, status_matches: statusMatches });
  }
  return out;
}

const BLOCK_ENDS = new Set(['p', 'div', 'li', 'blockquote', 'pre', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/** Plain text of status HTML: tags dropped, entities decoded, `<br>` a line break, paragraphs apart. */
export function htmlToText(html: string): string {
  if (!html.includes('<') && !html.includes('&')) return html;
  let out = '';
  const parser = new Parser(
    {
      ontext(text) {
        out += text;
      },
      onopentag(name) {
        if (name === 'br') out += '\n';
      },
      onclosetag(name) {
        if (BLOCK_ENDS.has(name)) out += '\n\n';
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return out.trim();
}

/** The text filters match: content warning, content, poll options, media descriptions (Mastodon's searchable_text). */
export function filterableText(parts: { spoilerText: string; contentHtml: string; pollOptions?: readonly string[]; mediaDescriptions?: readonly (string | null)[] }): string {
  return [parts.spoilerText, htmlToText(parts.contentHtml), ...(parts.pollOptions ?? []), ...(parts.mediaDescriptions ?? []).filter((d): d is string => !!d)]
    .filter((s) => s !== '')
    .join('\n\n');
}

/** What filterableFromStatusJson reads of a serialized Mastodon Status (MastodonStatus fits). */
export interface FilterableStatusJson {
  id?: unknown;
  account?: { id?: unknown } | null;
  content?: unknown;
  spoiler_text?: unknown;
  media_attachments?: unknown;
  poll?: { options?: unknown } | null;
  reblog?: FilterableStatusJson | null;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function textOfJson(json: FilterableStatusJson): string {
  const media = Array.isArray(json.media_attachments) ? json.media_attachments : [];
  const options = json.poll && Array.isArray(json.poll.options) ? json.poll.options : [];
  return filterableText({
    spoilerText: str(json.spoiler_text),
    contentHtml: str(json.content),
    pollOptions: options.map((o: { title?: unknown } | null) => str(o?.title)),
    mediaDescriptions: media.map((m: { description?: unknown } | null) => str(m?.description)),
  });
}

/**
 * A FilterableStatus from a serialized Mastodon Status (what streaming and push hold): a reblog
 * is matched on the status it reblogs.
 */
export function filterableFromStatusJson(json: FilterableStatusJson): FilterableStatus {
  const reblog = json.reblog ?? null;
  return {
    id: str(json.id),
    reblogOfId: reblog ? str(reblog.id) || null : null,
    accountId: str(json.account?.id) || null,
    text: textOfJson(reblog ?? json),
  };
}
