/**
 * Markdown → safe HTML for operator-written texts that clients display: the extended description,
 * the privacy policy, the terms of service and the closed-registrations message.
 *
 * Operators are trusted to write Markdown, not HTML: whatever HTML the source contains is shown as
 * text (escaped; HTML comments are dropped), so nothing an operator pastes — or an attacker who
 * gets hold of a setting — can run script in a client that renders the result. Links keep only
 * harmless schemes (http, https, mailto, relative) and open outside the app with
 * `rel="nofollow noopener noreferrer"`. Images are not embedded (an image in a privacy policy is a
 * tracking pixel waiting to happen, and Mastodon renders its registration message with images off
 * too): an image becomes a link to it, labelled with its alt text.
 *
 * Rendering is GitHub-flavoured Markdown by `marked`, on a private `Marked` instance so the global
 * `marked` defaults other modules might use stay untouched.
 */
import { Marked, type Tokens } from 'marked';
import { escapeHtml, safeLinkUrl } from './html.ts';

const LINK_ATTRIBUTES = 'rel="nofollow noopener noreferrer" target="_blank"';

function anchor(href: string, title: string | null | undefined, innerHtml: string): string {
  const titleAttr = title ? ` title="${escapeHtml(title)}"` : '';
  return `<a href="${escapeHtml(encodeHref(href))}"${titleAttr} ${LINK_ATTRIBUTES}>${innerHtml}</a>`;
}

/** Percent-encodes what must be encoded in an href without double-encoding existing escapes. */
function encodeHref(href: string): string {
  try {
    return encodeURI(href).replace(/%25([0-9a-f]{2})/gi, '%$1');
  } catch {
    // Lone surrogates make encodeURI throw; keep the raw text (it is attribute-escaped anyway).
    return href;
  }
}

const markdown = new Marked({ gfm: true, breaks: false, async: false });

markdown.use({
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag): string {
      // An HTML comment is an operator's note to themselves: drop it. Any other HTML is shown.
      if (/^\s*<!--(?:(?!-->)[\s\S])*-->\s*$/.test(token.text)) return '';
      const text = escapeHtml(token.text);
      return token.block ? `<p>${text.replace(/\n+$/, '')}</p>\n` : text;
    },
    link(token: Tokens.Link): string {
      const inner = token.autolink ? escapeHtml(token.text) : this.parser.parseInline(token.tokens);
      const href = safeLinkUrl(token.href);
      return href === null ? inner : anchor(href, token.title, inner);
    },
    image(token: Tokens.Image): string {
      const label = escapeHtml(token.text || token.href);
      const href = safeLinkUrl(token.href);
      return href === null ? label : anchor(href, token.title, label);
    },
  },
});

/**
 * Renders operator-written Markdown to HTML that is safe to hand to clients. Returns "" for an
 * empty or blank source.
 */
export function renderMarkdown(source: string): string {
  if (source.trim() === '') return '';
  return markdown.parse(source.replace(/\r\n?/g, '\n'), { async: false });
}
