/**
 * The oEmbed sanitiser (a preview card's `html`), as Mastodon's MASTODON_OEMBED for iframes: only
 * iframes with an absolute http(s) src survive, with their size, allowfullscreen, frameborder and
 * scrolling, and always Mastodon's sandbox; scripts go with their contents, other markup to text.
 */
import { describe, it, expect } from 'vitest';
import { OEMBED_IFRAME_SANDBOX, sanitizeOEmbedHtml } from '../../src/lib/sanitize.ts';

const SANDBOX = `sandbox="${OEMBED_IFRAME_SANDBOX}"`;

describe('sanitizeOEmbedHtml', () => {
  it('keeps a player iframe and nothing dangerous', () => {
    const cases: [string, string][] = [
      [
        '<iframe src="https://player.example/embed/1" width="480" height="270" onload="alert(1)" allowfullscreen frameborder="0"></iframe><script>alert(1)</script>',
        `<iframe src="https://player.example/embed/1" width="480" height="270" allowfullscreen frameborder="0" ${SANDBOX}></iframe>`,
      ],
      ['<iframe src="javascript:alert(1)"></iframe>text<b>bold</b>', 'textbold'],
      ['<iframe src="//evil.example/x"></iframe><iframe srcdoc="<script>x</script>" src="https://ok.example/"></iframe>', `<iframe src="https://ok.example/" ${SANDBOX}></iframe>`],
      [
        '<div><iframe src="https://a.example/" style="x" sandbox="allow-top-navigation" width="100%" height="1e9" scrolling="NO"></iframe></div>',
        `<iframe src="https://a.example/" width="100%" scrolling="no" ${SANDBOX}></iframe>`,
      ],
      ['<iframe src="https://u:p@a.example/"></iframe><img src=x onerror=alert(1)>', ''],
    ];
    expect(cases.map(([html]) => [html, sanitizeOEmbedHtml(html)])).toEqual(cases);
    expect([sanitizeOEmbedHtml(null), sanitizeOEmbedHtml(`<iframe src="https://a.example/${'x'.repeat(20_000)}"></iframe>`)]).toEqual(['', '']);
  });
});
