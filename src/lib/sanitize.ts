/**
 * The one sanitiser for remote text: everything another server sends that a client may render
 * (an actor's summary and profile field values today; status content, poll options and media
 * descriptions later) goes through here on ingest, so what is stored is already safe to serve.
 *
 * HTML follows the behaviour of Mastodon's strict sanitiser (Sanitize::Config::MASTODON_STRICT):
 * - an allow-list of elements (p br span a del pre blockquote code b strong u i em ul ol li);
 *   anything else is unwrapped to its text, and the contents of script, style, svg, math, iframe,
 *   template and the like are dropped whole;
 * - `a` keeps href, rel and class; href must be absolute with a safe protocol (http, https and the
 *   other link protocols Mastodon lets through), otherwise the link becomes plain text; every link
 *   gets rel="nofollow noopener" and target="_blank";
 * - class is kept on a and span only, and only the classes Mastodon's clients style: mention,
 *   hashtag, ellipsis, invisible and microformats (h-*, p-*, u-*, dt-*, e-*);
 * - ol keeps start/reversed, li keeps value; no other attribute survives (no style, no on*).
 * Relative links are dropped too (Mastodon keeps them): in remote content they would point at
 * this server. Built on sanitize-html (an htmlparser2 tokenizer), never on regular expressions.
 *
 * Names are plain text (tags stripped, entities decoded, whitespace collapsed); url, avatar and
 * header are http(s) URLs or nothing. Every function bounds its input before parsing, so a
 * 2,000,000-character name costs a slice, not a parse.
 */
import sanitizeHtml from 'sanitize-html';
import { Parser } from 'htmlparser2';

/** Link protocols Mastodon lets through in remote HTML (its HTTP_PROTOCOLS plus the link ones). */
export const LINK_PROTOCOLS = ['http', 'https', 'dat', 'dweb', 'ipfs', 'ipns', 'ssb', 'gopher', 'xmpp', 'magnet', 'gemini'];

/** Elements whose contents are dropped with them (Sanitize's remove_contents and a few more). */
const DROP_WITH_CONTENTS = [
  'script', 'style', 'svg', 'math', 'iframe', 'noembed', 'noframes', 'noscript', 'plaintext', 'xmp',
  'template', 'textarea', 'option', 'select', 'title', 'object', 'embed', 'frameset', 'frame', 'head',
];

const ALLOWED_CLASS = /^(?:(?:h|p|u|dt|e)-[\w-]+|mention|hashtag|ellipsis|invisible)$/;

/** Sane lengths for what remote actors send (characters, after sanitising). */
export const REMOTE_LIMITS = {
  displayName: 100,
  note: 10_000,
  fieldName: 255,
  fieldValue: 2_048,
  fields: 16,
  url: 2_048,
} as const;

/** Input beyond this many characters is never parsed: a multiple of the longest stored limit. */
const MAX_INPUT = 100_000;

/** The scheme of an href as a browser would read it (entities already decoded by the parser), or null when relative. */
function hrefScheme(href: string): string | null {
  // Browsers ignore ASCII whitespace and control characters inside a scheme ("java\tscript:").
  const squeezed = href.replace(/[\u0000-\u0020\u007f-\u009f\u200b-\u200f\u2028\u2029\ufeff]/g, '');
  const m = /^([a-z][a-z0-9+.-]*):/i.exec(squeezed);
  if (m) return m[1]!.toLowerCase();
  // "//host/…" is protocol-relative: not absolute, treated as unsafe here.
  return null;
}

function filterClasses(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const kept = value.split(/[\t\n\f\r ]+/).filter((c) => ALLOWED_CLASS.test(c));
  return kept.length ? kept.join(' ') : undefined;
}

const STRICT: sanitizeHtml.IOptions = {
  allowedTags: ['p', 'br', 'span', 'a', 'del', 'pre', 'blockquote', 'code', 'b', 'strong', 'u', 'i', 'em', 'ul', 'ol', 'li'],
  allowedAttributes: {
    a: ['href', 'rel', 'class', 'target'],
    span: ['class'],
    ol: ['start', 'reversed'],
    li: ['value'],
  },
  allowedSchemes: LINK_PROTOCOLS,
  allowedSchemesByTag: {},
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nonTextTags: DROP_WITH_CONTENTS,
  parseStyleAttributes: false,
  // Deeply nested markup is flattened past this depth (its text stays).
  nestingLimit: 64,
  transformTags: {
    a: (_tagName, attribs) => {
      const href = (attribs.href ?? '').trim();
      const scheme = hrefScheme(href);
      if (!href || !scheme || !LINK_PROTOCOLS.includes(scheme) || href.length > REMOTE_LIMITS.url) {
        // An unsafe or missing link keeps its text, not its link (Mastodon's UNSUPPORTED_HREF_TRANSFORMER).
        return { tagName: 'span', attribs: {} };
      }
      const out: Record<string, string> = { href, rel: 'nofollow noopener', target: '_blank' };
      const cls = filterClasses(attribs.class);
      if (cls) out.class = cls;
      return { tagName: 'a', attribs: out };
    },
    span: (_tagName, attribs) => {
      const cls = filterClasses(attribs.class);
      const out: Record<string, string> = cls ? { class: cls } : {};
      return { tagName: 'span', attribs: out };
    },
    ol: (_tagName, attribs) => {
      const out: Record<string, string> = {};
      if (attribs.start && /^-?\d{1,9}$/.test(attribs.start)) out.start = attribs.start;
      if ('reversed' in attribs) out.reversed = '';
      return { tagName: 'ol', attribs: out };
    },
    li: (_tagName, attribs) => {
      const out: Record<string, string> = attribs.value && /^-?\d{1,9}$/.test(attribs.value) ? { value: attribs.value } : {};
      return { tagName: 'li', attribs: out };
    },
  },
};

/**
 * Remote HTML (status content, a summary, a profile field value) made safe to store and serve.
 * `maxLength` bounds the result in characters; a cut is sanitised again so no tag is left open.
 */
export function sanitizeRemoteHtml(html: unknown, maxLength: number = REMOTE_LIMITS.note): string {
  if (html == null) return '';
  const input = String(html).slice(0, Math.min(MAX_INPUT, maxLength * 4));
  let out = sanitizeHtml(input, STRICT);
  if (out.length > maxLength) {
    // Cut, then sanitise again: closes what the cut left open; a cut entity becomes text.
    out = sanitizeHtml(out.slice(0, maxLength), STRICT);
    if (out.length > maxLength) out = sanitizeHtml(out.slice(0, maxLength - (out.length - maxLength)), STRICT);
  }
  return out;
}

/**
 * Plain text from something that may hold markup (a display name, a field name): tags stripped,
 * the contents of script/style and the like dropped, entities decoded, control characters removed,
 * whitespace collapsed, at most `maxLength` characters.
 */
export function plainText(value: unknown, maxLength: number = REMOTE_LIMITS.displayName): string {
  if (value == null) return '';
  const input = String(value).slice(0, Math.min(MAX_INPUT, maxLength * 8));
  let text = '';
  let dropDepth = 0;
  const parser = new Parser(
    {
      onopentagname(name) {
        if (DROP_WITH_CONTENTS.includes(name)) dropDepth++;
        else if (name === 'br' || name === 'p' || name === 'li' || name === 'div') text += ' ';
      },
      onclosetag(name) {
        if (DROP_WITH_CONTENTS.includes(name) && dropDepth > 0) dropDepth--;
      },
      ontext(data) {
        if (dropDepth === 0) text += data;
      },
    },
    { decodeEntities: true },
  );
  parser.write(input);
  parser.end();
  const collapsed = text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return [...collapsed].slice(0, maxLength).join('');
}

/** An absolute http(s) URL without credentials, as a string, or null (for url, avatar, header). */
export function safeHttpUrl(value: unknown): string | null {
  if (value == null) return null;
  const raw = (value instanceof URL ? value.href : String(value)).trim();
  if (!raw || raw.length > REMOTE_LIMITS.url) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (!url.hostname || url.username || url.password) return null;
  return url.href;
}

/** What Mastodon's oEmbed sanitiser adds to every iframe it lets through. */
export const OEMBED_IFRAME_SANDBOX = 'allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox allow-forms';

const OEMBED: sanitizeHtml.IOptions = {
  allowedTags: ['iframe'],
  allowedAttributes: { iframe: ['src', 'width', 'height', 'allowfullscreen', 'frameborder', 'scrolling', 'sandbox'] },
  allowedSchemes: ['http', 'https'],
  allowedSchemesByTag: { iframe: ['http', 'https'] },
  allowedSchemesAppliedToAttributes: ['src'],
  allowProtocolRelative: false,
  allowIframeRelativeUrls: false,
  disallowedTagsMode: 'discard',
  nonTextTags: DROP_WITH_CONTENTS.filter((t) => t !== 'iframe'),
  parseStyleAttributes: false,
  nestingLimit: 16,
  transformTags: {
    iframe: (_tagName, attribs) => {
      const src = safeHttpUrl(attribs.src);
      if (!src) return { tagName: 'iframe', attribs: {} };
      const out: Record<string, string> = { src };
      for (const dim of ['width', 'height']) if (attribs[dim] && /^\d{1,5}%?$/.test(attribs[dim]!)) out[dim] = attribs[dim]!;
      if ('allowfullscreen' in attribs) out.allowfullscreen = '';
      if (attribs.frameborder && /^\d{1,2}$/.test(attribs.frameborder)) out.frameborder = attribs.frameborder;
      if (attribs.scrolling && /^(yes|no|auto)$/i.test(attribs.scrolling)) out.scrolling = attribs.scrolling.toLowerCase();
      out.sandbox = OEMBED_IFRAME_SANDBOX;
      return { tagName: 'iframe', attribs: out };
    },
  },
  // An iframe without a usable src goes whole.
  exclusiveFilter: (frame) => frame.tag === 'iframe' && !frame.attribs.src,
};

/**
 * The HTML of a remote oEmbed video (a preview card's `html`) made safe to store and serve, as
 * Mastodon's Sanitize::Config::MASTODON_OEMBED for iframes: only <iframe> with an absolute http(s)
 * src, its size, allowfullscreen, frameborder and scrolling, and always Mastodon's sandbox;
 * anything else (scripts with their contents, other elements, on* attributes) is dropped.
 */
export function sanitizeOEmbedHtml(html: unknown, maxLength = 10_000): string {
  if (html == null) return '';
  const out = sanitizeHtml(String(html).slice(0, Math.min(MAX_INPUT, maxLength * 4)), OEMBED);
  return out.length > maxLength ? '' : out;
}
