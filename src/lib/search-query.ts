/**
 * Mastodon's search syntax (its SearchQueryParser and SearchQueryTransformer), read into words,
 * phrases and operators; pure.
 *
 *   cats "black cat" -dogs from:alice from:me has:media -is:reply language:fr
 *   in:library before:2026-01-01 after:2025-12-01 during:2025-12-24
 *
 * Words and quoted phrases must all match (Mastodon's must clauses); `-` negates any clause. An
 * unknown `prefix:` is an ordinary word, as in Mastodon. Words are the runs of letters, marks and
 * digits PostgreSQL's parser also splits on; the tsquery is built here with every lexeme quoted, so
 * nothing the user types is read as tsquery syntax.
 */

export type SearchFilter =
  | { kind: 'from'; term: string; negated: boolean }
  | { kind: 'has'; term: 'media' | 'poll' | 'link' | 'image' | 'video' | 'audio' | 'embed'; negated: boolean }
  | { kind: 'is'; term: 'reply' | 'sensitive'; negated: boolean }
  | { kind: 'language'; term: string; negated: boolean }
  | { kind: 'before' | 'after' | 'during'; term: string; negated: boolean };

export interface ParsedSearch {
  /** The words and phrases that must match, as one tsquery (to_tsquery('simple', …)); '' for none. */
  tsquery: string;
  /** The negated words and phrases, any of which excludes a status (a tsquery); '' for none. */
  excluded: string;
  filters: SearchFilter[];
  /** `in:`: all (default), library (the searcher's own, mentions, favourites, bookmarks), public (indexable accounts' public posts). */
  scope: 'all' | 'library' | 'public';
}

/** A date operator's term that is no date (Mastodon: 422). */
export class SearchSyntaxError extends Error {
  override name = 'SearchSyntaxError';
}

const HAS = new Set(['media', 'poll', 'link', 'image', 'video', 'audio', 'embed']);
const IS = new Set(['reply', 'sensitive']);
const PREFIXES = new Set(['from', 'has', 'is', 'language', 'before', 'after', 'during', 'in']);
/** At most this many clauses are read (the rest ignored): a bounded statement whatever the input. */
export const MAX_CLAUSES = 16;
const WORD = /[\p{L}\p{M}\p{N}]+/gu;

function lexeme(word: string): string {
  return `'${word.toLowerCase().replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** The tsquery for one word or phrase: its lexemes in sequence (<->), null when it has none. */
function termQuery(text: string): string | null {
  const words = text.match(WORD);
  if (!words) return null;
  const lexemes = words.slice(0, 8).map(lexeme);
  return lexemes.length === 1 ? lexemes[0]! : `(${lexemes.join(' <-> ')})`;
}

/** `YYYY-MM-DD` (an ISO 8601 date, as Mastodon takes), else a SearchSyntaxError. */
export function searchDate(term: string): Date {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(term);
  const d = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
  if (!d || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== term) throw new SearchSyntaxError(`Invalid date ${term}`);
  return d;
}

export function parseSearch(q: string): ParsedSearch {
  const positive: string[] = [];
  const negative: string[] = [];
  const filters: SearchFilter[] = [];
  let scope: ParsedSearch['scope'] = 'all';
  // A clause: an optional +/-, an optional prefix, then a quoted phrase or a run of non-spaces.
  const clause = /([+-])?(?:([a-z]+):)?(?:"([^"]*)"?|(\S+))/giu;
  let count = 0;
  for (const m of q.matchAll(clause)) {
    if (++count > MAX_CLAUSES) break;
    const negated = m[1] === '-';
    const prefix = m[2]?.toLowerCase();
    const phrase = m[3];
    const bare = m[4];
    const term = phrase ?? bare ?? '';
    if (prefix && PREFIXES.has(prefix) && term !== '') {
      const t = term.toLowerCase();
      if (prefix === 'in') {
        if (t === 'library' || t === 'public' || t === 'all') scope = t;
      } else if (prefix === 'has') {
        if (HAS.has(t)) filters.push({ kind: 'has', term: t as never, negated });
      } else if (prefix === 'is') {
        if (IS.has(t)) filters.push({ kind: 'is', term: t as never, negated });
      } else if (prefix === 'language') {
        if (/^[a-z]{2,3}(-[a-z0-9]{2,8})?$/i.test(term)) filters.push({ kind: 'language', term: t, negated });
      } else if (prefix === 'from') {
        filters.push({ kind: 'from', term: term.replace(/^@/, ''), negated });
      } else {
        searchDate(term);
        filters.push({ kind: prefix as 'before' | 'after' | 'during', term, negated });
      }
      continue;
    }
    const text = prefix ? `${m[2]}:${term}` : term;
    const tq = termQuery(text);
    if (tq) (negated ? negative : positive).push(tq);
  }
  return { tsquery: positive.join(' & '), excluded: negative.join(' | '), filters, scope };
}
