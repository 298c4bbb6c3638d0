/**
 * Plain text as typed by a local user → the HTML Mastodon serves for it (its TextFormatter):
 * escaped, http(s) URLs turned into shortened links, and for multi-line text paragraphs on blank
 * lines and `<br />` on single line breaks. Profile bios use the multi-line form; profile field
 * values the single-line form with `rel="me"` on links (what rel="me" verification looks for on
 * the other side). Pure; no mentions or hashtags yet (they need account and tag lookups).
 */
import { escapeHtml } from './html.ts';

/** Candidate URLs; trailing punctuation is trimmed afterwards. */
const URL_RE = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const TRAILING = /[.,;:!?'"»”’]+$/;
const PREFIX_RE = /^(https?:\/\/(www\.)?|xmpp:)/i;

/** Mastodon's link rel (TextFormatter::DEFAULT_REL), plus `me` on profile fields. */
const REL = 'nofollow noopener';

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

function linkify(text: string, relMe: boolean): string {
  return extractUrls(text)
    .map((p) => (p.url ? shortenedLink(p.url, { relMe }) : escapeHtml(p.text)))
    .join('');
}

/** A bio: paragraphs, line breaks, links. Empty text gives ''. */
export function formatPlainText(text: string): string {
  const normalized = text.replace(/\r\n?/g, '\n').trim();
  if (!normalized) return '';
  return normalized
    .split(/\n{2,}/)
    .map((para) => `<p>${para.split('\n').map((line) => linkify(line, false)).join('<br />')}</p>`)
    .join('');
}

/** A profile field value: one line, links carry rel="me". */
export function formatFieldValue(value: string): string {
  return linkify(value.replace(/\s*\r?\n\s*/g, ' '), true);
}

/** Mastodon counts every URL in a bio as 23 characters (as in statuses). */
export function countedLength(text: string): number {
  let n = 0;
  for (const p of extractUrls(text)) n += p.url ? 23 : [...p.text].length;
  return n;
}
