/**
 * The frame of every page Roost serves to a browser: the document head (title, description,
 * robots, Open Graph and Twitter-card meta, alternate links), the site header with the sign-in
 * link, the main landmark and the footer, and the headers the pages go out with (a strict CSP:
 * no script at all, styles from the one stylesheet only).
 */
import { stringResponse } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { html, type SafeHtml, type HtmlValue } from '../../lib/html-template.ts';
import { STYLESHEET_PATH, STYLESHEET_VERSION } from './stylesheet.ts';

export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' https: data:; media-src 'self' https:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export function pageHeaders(cacheSeconds = 60): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': PAGE_CSP,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'cache-control': `public, max-age=${cacheSeconds}`,
    // The same URLs answer ActivityPub and JSON: caches keep one answer per Accept.
    vary: 'Accept',
  };
}

export interface PageParts {
  title: string;
  /** The page's language (the instance's first one when unknown). */
  lang?: string | null;
  /** meta description (plain text). */
  description?: string;
  /** robots noindex (the account asked search engines to keep away). */
  noindex?: boolean;
  /** property → content: og:*, profile:*, article:* (property=) and twitter:* (name=). */
  meta?: [string, string][];
  /** <link> elements: rel, type, href, title. */
  links?: { rel: string; type?: string; href: string; title?: string }[];
  body: SafeHtml;
  status?: number;
}

export function renderPage(services: Services, parts: PageParts): Response {
  const { config } = services;
  const lang = parts.lang || config.instance.languages[0] || 'en';
  const meta: HtmlValue[] = (parts.meta ?? []).map(([key, content]) =>
    key.startsWith('twitter:') ? html`<meta name="${key}" content="${content}">` : html`<meta property="${key}" content="${content}">`,
  );
  const links = (parts.links ?? []).map((l) => html`<link rel="${l.rel}"${l.type ? html` type="${l.type}"` : ''} href="${l.href}"${l.title ? html` title="${l.title}"` : ''}>`);
  const doc = html`<!DOCTYPE html>
<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${parts.title}</title>
${parts.description ? html`<meta name="description" content="${parts.description}">` : ''}
${parts.noindex ? html`<meta name="robots" content="noindex, noarchive">` : ''}
${meta}${links}
<link rel="stylesheet" href="${STYLESHEET_PATH}?v=${STYLESHEET_VERSION}">
</head><body>
<a class="skip" href="#main">Skip to content</a>
<header class="site"><a class="brand" href="/">${config.instance.title}</a>
<nav aria-label="Site"><a href="/about">About</a><a href="/about#sign-in">Sign in</a></nav></header>
<main id="main">${parts.body}</main>
<footer class="site-footer">${config.domain} runs <a href="${config.instance.sourceUrl}">Roost</a> ${services.version}, a federated social server that Mastodon apps talk to. <a href="/privacy-policy">Privacy policy</a></footer>
</body></html>`;
  return stringResponse(doc.value, { status: parts.status ?? 200, headers: pageHeaders() });
}
