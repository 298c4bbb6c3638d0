/**
 * Plain text as typed by a local user → the HTML Mastodon serves for it (its TextFormatter).
 * Used for profile bios and field values today, and meant for statuses next.
 *
 * Two steps, both pure:
 *   1. `extractEntities(text)` splits the text into runs: plain text, http(s) URLs, `@mentions`
 *      (`@user` or `@user@domain`) and `#hashtags`, with Mastodon's boundaries (no mention after
 *      a word character, `=` or `/`, so e-mail addresses and URL paths stay text; no hashtag
 *      after a letter, digit, `=`, `/` or `)`; URLs win over what is inside them).
 *   2. `formatPlainText` / `formatFieldValue` render the runs: text escaped, URLs as shortened
 *      links, hashtags as `/tags/` links, mentions as h-card links when the account is known
 *      (`resolveMention`, filled by the caller from a batched lookup: `mentionedHandles` says
 *      which handles to look up) and as plain text otherwise, exactly as Mastodon does.
 *      Multi-line text (a bio) gets paragraphs on blank lines and `<br />` on single breaks.
 *
 * linkifyjs (with its hashtag and mention plugins) would do step 1; it is not installed, so the
 * scanner below stays small and follows Mastodon's regular expressions instead.
 */
import { escapeHtml } from './html.ts';

/** Candidate URLs; trailing punctuation is trimmed afterwards. */
const URL_RE = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const TRAILING = /[.,;:!?'"»”’]+$/;
const PREFIX_RE = /^(https?:\/\/(www\.)?|xmpp:)/i;

/**
 * Mastodon's Account::MENTION_RE: `@` not preceded by `=`, `/` or a word character, a username
 * (letters, digits, `_`, inner `.`/`-`), optionally `@domain` (with a `:port`, which Roost's own
 * domain may carry, e.g. `localhost:3000`).
 */
const MENTION_RE = /(?<![=/\p{L}\p{N}_])@([a-z0-9_]+(?:[.-]+[a-z0-9_]+)*)(?:@([\p{L}\p{N}_.-]+[\p{L}\p{N}_]+(?::\d{1,5})?))?/giu;

/** Mastodon's Tag::HASHTAG_RE, simplified: `#` then a name with at least one letter. */
const HASHTAG_RE = /(?<![=/)\p{L}\p{N}])#([\p{L}\p{M}\p{N}_]*[\p{L}\p{M}][\p{L}\p{M}\p{N}_]*)/gu;

/** Mastodon's link rel (TextFormatter::DEFAULT_REL), plus `me` on profile fields. */
const REL = 'nofollow noopener';

export type TextEntity =
  | { kind: 'text'; text: string }
  | { kind: 'url'; text: string; url: string }
  | { kind: 'mention'; text: string; username: string; domain: string | null }
  | { kind: 'hashtag'; text: string; tag: string };

/** An account a mention can link to. */
export interface MentionTarget {
  username: string;
  /** null for a local account. */
  domain: string | null;
  /** Its profile page (Mastodon links `url`, falling back to the actor URI). */
  url: string;
}

export interface FormatOptions {
  /** The instance's public URL, for `/tags/NAME` links. */
  baseUrl: string;
  /** The local domain: `@user@LOCAL` is a local mention. Default: the host of baseUrl. */
  localDomain?: string;
  /** The known account for a mention (domain null = local), or undefined: the mention stays text. */
  resolveMention?: (username: string, domain: string | null) => MentionTarget | undefined;
}

/** One URL with its cut-off display text, as Mastodon renders it. */
export function shortenedLink(url: string, opts: { relMe?: boolean } = {}): string {
  const prefix = PREFIX_RE.exec(url)?.[0] ?? '';
  const rest = url.slice(prefix.length);
  const display = [...rest].slice(0, 30).join('');
  const suffix = [...rest].slice(30).join('');
  const cutoff = [...rest].length > 30;
  return (
    `<a href="${escapeHtml(url)}" target="_blank" rel="${opts.relMe ? `${REL} me` : REL}" translate="no">` +
    `<span class="invisible">${escapeHtml(prefix)}</span><span class="${cutoff ? 'ellipsis' : ''}">${escapeHtml(display)}</span>` +
    `<span class="invisible">${escapeHtml(suffix)}</span></a>`
  );
}

/** Splits text into plain runs and URLs (trailing punctuation and an unbalanced ")" stay text). */
export function extractUrls(text: string): { text: string; url?: string }[] {
  const parts: { text: string; url?: string }[] = [];
  let last = 0;
  for (const m of text.matchAll(URL_RE)) {
    let url = m[0].replace(TRAILING, '');
    while (url.endsWith(')') && (url.match(/\(/g)?.length ?? 0) < (url.match(/\)/g)?.length ?? 0)) url = url.slice(0, -1);
    try {
      const parsed = new URL(url);
      if (!parsed.hostname) continue;
    } catch {
      continue;
    }
    const start = m.index;
    if (start > last) parts.push({ text: text.slice(last, start) });
    parts.push({ text: url, url });
    last = start + url.length;
  }
  if (last < text.length) parts.push({ text: text.slice(last) });
  return parts;
}

/** Mentions and hashtags in a run of text that holds no URL. */
function extractTagsAndMentions(text: string): TextEntity[] {
  const found: { start: number; end: number; entity: TextEntity }[] = [];
  for (const m of text.matchAll(MENTION_RE)) {
    found.push({ start: m.index, end: m.index + m[0].length, entity: { kind: 'mention', text: m[0], username: m[1]!, domain: m[2] ?? null } });
  }
  for (const m of text.matchAll(HASHTAG_RE)) {
    // A tag inside a mention's domain cannot happen (no '#' there); overlaps are dropped anyway.
    if (found.some((f) => m.index < f.end && m.index + m[0].length > f.start)) continue;
    found.push({ start: m.index, end: m.index + m[0].length, entity: { kind: 'hashtag', text: m[0], tag: m[1]! } });
  }
  found.sort((a, b) => a.start - b.start);
  const out: TextEntity[] = [];
  let last = 0;
  for (const f of found) {
    if (f.start > last) out.push({ kind: 'text', text: text.slice(last, f.start) });
    out.push(f.entity);
    last = f.end;
  }
  if (last < text.length) out.push({ kind: 'text', text: text.slice(last) });
  return out;
}

/** The text as entities, in order; concatenating their `text` gives the input back. */
export function extractEntities(text: string): TextEntity[] {
  return extractUrls(text).flatMap((p): TextEntity[] => (p.url ? [{ kind: 'url', text: p.text, url: p.url }] : extractTagsAndMentions(p.text)));
}

/** Lower-case key of a handle for lookups: `user` for local, `user@domain` for remote. */
export function handleKey(username: string, domain: string | null): string {
  return (domain ? `${username}@${domain}` : username).toLowerCase();
}

/**
 * The handles a text mentions, de-duplicated, local ones with domain null (a mention of
 * `@user@LOCALDOMAIN` is local), for one batched lookup before rendering.
 */
export function mentionedHandles(text: string, localDomain: string): { username: string; domain: string | null }[] {
  const seen = new Map<string, { username: string; domain: string | null }>();
  for (const e of extractEntities(text)) {
    if (e.kind !== 'mention') continue;
    const domain = e.domain && e.domain.toLowerCase() !== localDomain.toLowerCase() ? e.domain : null;
    const key = handleKey(e.username, domain);
    if (!seen.has(key)) seen.set(key, { username: e.username, domain });
  }
  return [...seen.values()];
}

function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return '';
  }
}

function renderLine(text: string, opts: FormatOptions, field: boolean): string {
  const localDomain = (opts.localDomain ?? hostOf(opts.baseUrl)).toLowerCase();
  return extractEntities(text)
    .map((e) => {
      switch (e.kind) {
        case 'url':
          return shortenedLink(e.url, { relMe: field });
        case 'hashtag':
          return `<a href="${escapeHtml(`${opts.baseUrl}/tags/${encodeURIComponent(e.tag)}`)}" class="mention hashtag" rel="tag">#<span>${escapeHtml(e.tag)}</span></a>`;
        case 'mention': {
          const domain = e.domain && e.domain.toLowerCase() !== localDomain ? e.domain : null;
          const target = opts.resolveMention?.(e.username, domain);
          if (!target) return escapeHtml(e.text);
          // Fields show the full handle of a remote account (Mastodon's with_domains); bios the username.
          const shown = field && target.domain ? `${target.username}@${target.domain}` : target.username;
          return `<span class="h-card" translate="no"><a href="${escapeHtml(target.url)}" class="u-url mention">@<span>${escapeHtml(shown)}</span></a></span>`;
        }
        default:
          return escapeHtml(e.text);
      }
    })
    .join('');
}

/** A bio (or a status): paragraphs, line breaks, links, hashtags, mentions. Empty text gives ''. */
export function formatPlainText(text: string, opts: FormatOptions): string {
  const normalized = text.replace(/\r\n?/g, '\n').trim();
  if (!normalized) return '';
  return normalized
    .split(/\n{2,}/)
    .map((para) => `<p>${para.split('\n').map((line) => renderLine(line, opts, false)).join('<br />')}</p>`)
    .join('');
}

/** A profile field value: one line, links carry rel="me". */
export function formatFieldValue(value: string, opts: FormatOptions): string {
  return renderLine(value.replace(/\s*\r?\n\s*/g, ' '), opts, true);
}

/** Mastodon counts every URL in a bio as 23 characters (as in statuses). */
export function countedLength(text: string): number {
  let n = 0;
  for (const p of extractUrls(text)) n += p.url ? 23 : [...p.text].length;
  return n;
}
