/**
 * Mastodon's filter entities, pure: Filter (entities/Filter.md; without `keywords` and `statuses`
 * inside a FilterResult), FilterKeyword, FilterStatus, FilterResult, and the legacy V1::Filter
 * (entities/V1_Filter.md: one keyword of a filter, its id the keyword's, `irreversible` when the
 * filter hides).
 */

export const FILTER_CONTEXTS = ['home', 'notifications', 'public', 'thread', 'account'] as const;
export type FilterContext = (typeof FILTER_CONTEXTS)[number];
export const FILTER_ACTIONS = ['warn', 'hide', 'blur'] as const;
export type FilterAction = (typeof FILTER_ACTIONS)[number];

export interface FilterKeywordRow {
  id: string;
  keyword: string;
  wholeWord: boolean;
}

export interface FilterStatusRow {
  id: string;
  statusId: string;
}

export interface FilterRow {
  id: string;
  title: string;
  context: string[];
  action: FilterAction;
  expiresAt: Date | null;
  keywords: FilterKeywordRow[];
  statuses: FilterStatusRow[];
}

export interface MastodonFilterKeyword {
  id: string;
  keyword: string;
  whole_word: boolean;
}

export interface MastodonFilterStatus {
  id: string;
  status_id: string;
}

export interface MastodonFilter {
  id: string;
  title: string;
  context: string[];
  expires_at: string | null;
  filter_action: FilterAction;
  keywords?: MastodonFilterKeyword[];
  statuses?: MastodonFilterStatus[];
}

export interface MastodonFilterResult {
  filter: MastodonFilter;
  keyword_matches: string[] | null;
  status_matches: string[] | null;
}

export interface MastodonV1Filter {
  id: string;
  phrase: string;
  context: string[];
  whole_word: boolean;
  expires_at: string | null;
  irreversible: boolean;
}

export function serializeFilterKeyword(k: FilterKeywordRow): MastodonFilterKeyword {
  return { id: k.id, keyword: k.keyword, whole_word: k.wholeWord };
}

export function serializeFilterStatus(s: FilterStatusRow): MastodonFilterStatus {
  return { id: s.id, status_id: s.statusId };
}

/** The Filter; `rules: false` leaves out keywords and statuses (as inside a FilterResult). */
export function serializeFilter(f: FilterRow, opts: { rules?: boolean } = {}): MastodonFilter {
  const json: MastodonFilter = {
    id: f.id,
    title: f.title,
    context: f.context,
    expires_at: f.expiresAt ? f.expiresAt.toISOString() : null,
    filter_action: f.action,
  };
  if (opts.rules !== false) {
    json.keywords = f.keywords.map(serializeFilterKeyword);
    json.statuses = f.statuses.map(serializeFilterStatus);
  }
  return json;
}

/** One keyword of a filter in the legacy v1 shape. */
export function serializeV1Filter(f: FilterRow, k: FilterKeywordRow): MastodonV1Filter {
  return {
    id: k.id,
    phrase: k.keyword,
    context: f.context,
    whole_word: k.wholeWord,
    expires_at: f.expiresAt ? f.expiresAt.toISOString() : null,
    irreversible: f.action === 'hide',
  };
}
