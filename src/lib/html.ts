/**
 * Small HTML text helpers shared by the Markdown renderer and the serializers.
 *
 * Pure functions, no DOM. Escaping covers the five characters that matter in HTML text and in
 * double- or single-quoted attribute values.
 */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for use inside HTML element content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  colon: ':',
  tab: '\t',
  newline: '\n',
  lpar: '(',
  rpar: ')',
  sol: '/',
  period: '.',
};

/**
 * Decodes numeric character references and a handful of named ones. Used to look at what a
 * browser would see in an attribute (e.g. to spot `&#106;avascript:`), never to produce output.
 * Unknown named references are left as they are.
 */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);?/gi, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      if (!Number.isFinite(code) || code < 0 || code > 0x10ffff) return '\ufffd';
      return String.fromCodePoint(code);
    }
    const named = NAMED_ENTITIES[body.toLowerCase()];
    return named ?? whole;
  });
}

/** URL schemes a rendered link may use. Anything else (javascript:, data:, vbscript:, …) is dropped. */
const SAFE_SCHEMES = new Set(['http', 'https', 'mailto']);

/**
 * Returns the URL if following it is harmless (http, https, mailto, or a relative reference),
 * else null. The check looks at the URL the way a browser would: character references decoded,
 * ASCII whitespace and control characters removed, case folded.
 */
export function safeLinkUrl(url: string): string | null {
  const trimmed = url.trim();
  if (trimmed === '') return null;
  // Browsers strip tabs/newlines anywhere and C0 controls/space at the ends before parsing the
  // scheme; remove all of them so "java\tscript:" and "\u0001javascript:" are caught.
  const probe = decodeEntities(trimmed).replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase();
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(probe);
  if (scheme) return SAFE_SCHEMES.has(scheme[1]!) ? trimmed : null;
  // No valid scheme. A colon before the first "/", "?" or "#" would still be read as a scheme by
  // some parsers (e.g. "&#0;javascript:"): refuse it rather than guess.
  const firstDelimiter = probe.search(/[/?#]/);
  const colon = probe.indexOf(':');
  if (colon !== -1 && (firstDelimiter === -1 || colon < firstDelimiter)) return null;
  return trimmed;
}
