import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/lib/markdown.ts';
import { decodeEntities, escapeHtml, safeLinkUrl } from '../../src/lib/html.ts';

const LINK = 'rel="nofollow noopener noreferrer" target="_blank"';

describe('renderMarkdown', () => {
  it('renders GitHub-flavoured Markdown', () => {
    expect(renderMarkdown('# Title\n\nSome *em* and **strong** and `code`.\n\n- one\n- two\n')).toBe(
      '<h1>Title</h1>\n<p>Some <em>em</em> and <strong>strong</strong> and <code>code</code>.</p>\n' +
        '<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n',
    );
    expect(renderMarkdown('~~gone~~')).toBe('<p><del>gone</del></p>\n');
    expect(renderMarkdown('line  \nbreak')).toBe('<p>line<br>break</p>\n');
  });

  it('returns "" for empty or blank input', () => {
    expect(renderMarkdown('')).toBe('');
    expect(renderMarkdown(' \n\t\n')).toBe('');
  });

  it('normalises CRLF line endings', () => {
    expect(renderMarkdown('a\r\n\r\nb')).toBe('<p>a</p>\n<p>b</p>\n');
  });

  it('links open outside the app, with nofollow/noopener/noreferrer', () => {
    expect(renderMarkdown('[site](https://roost.example/about "About")')).toBe(
      `<p><a href="https://roost.example/about" title="About" ${LINK}>site</a></p>\n`,
    );
    expect(renderMarkdown('see https://roost.example/a?b=1&c=2')).toBe(
      `<p>see <a href="https://roost.example/a?b=1&amp;c=2" ${LINK}>https://roost.example/a?b=1&amp;c=2</a></p>\n`,
    );
    expect(renderMarkdown('<staff@roost.example>')).toBe(
      `<p><a href="mailto:staff@roost.example" ${LINK}>staff@roost.example</a></p>\n`,
    );
    expect(renderMarkdown('[about](/about)')).toBe(`<p><a href="/about" ${LINK}>about</a></p>\n`);
  });

  it('images become links labelled with their alt text', () => {
    expect(renderMarkdown('![a "cat"](https://roost.example/cat.png)')).toBe(
      `<p><a href="https://roost.example/cat.png" ${LINK}>a &quot;cat&quot;</a></p>\n`,
    );
  });

  describe('injection attempts', () => {
    const attacks: Array<[string, string]> = [
      ['<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n'],
      ['Hi <img src=x onerror=alert(1)>', '<p>Hi &lt;img src=x onerror=alert(1)&gt;</p>\n'],
      ['<a href="javascript:alert(1)">x</a>', '<p>&lt;a href=&quot;javascript:alert(1)&quot;&gt;x&lt;/a&gt;</p>\n'],
      ['<iframe src="https://evil.example"></iframe>', '<p>&lt;iframe src=&quot;https://evil.example&quot;&gt;&lt;/iframe&gt;</p>\n'],
      ['<div>\n*still text*\n</div>', '<p>&lt;div&gt;\n*still text*\n&lt;/div&gt;</p>\n'],
      ['<style>body{display:none}</style>', '<p>&lt;style&gt;body{display:none}&lt;/style&gt;</p>\n'],
      ['[x](javascript:alert(1))', '<p>x</p>\n'],
      ['[x](JaVaScRiPt:alert(1))', '<p>x</p>\n'],
      ['[x](&#106;avascript:alert(1))', '<p>x</p>\n'],
      ['[x](&#x6A;avascript&colon;alert(1))', '<p>x</p>\n'],
      ['[x](vbscript:msgbox(1))', '<p>x</p>\n'],
      ['[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)', '<p>x</p>\n'],
      ['<javascript:alert(1)>', '<p>javascript:alert(1)</p>\n'],
      ['![x](javascript:alert(1))', '<p>x</p>\n'],
      ['[ref]\n\n[ref]: javascript:alert(1)', '<p>ref</p>\n'],
      ['[x](https://e.example/"onmouseover="alert(1))', `<p><a href="https://e.example/%22onmouseover=%22alert(1)" ${LINK}>x</a></p>\n`],
      ['[x](https://e.example "a\\" onmouseover=\\"alert(1)")', `<p><a href="https://e.example" title="a&quot; onmouseover=&quot;alert(1)" ${LINK}>x</a></p>\n`],
      ['```js"><script>\n<b>x</b>\n```', '<pre><code class="language-js&quot;&gt;&lt;script&gt;">&lt;b&gt;x&lt;/b&gt;\n</code></pre>\n'],
      ['`<script>`', '<p><code>&lt;script&gt;</code></p>\n'],
      ['| a |\n|---|\n| <b onclick=x>1</b> |', '<table>\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n<tbody><tr>\n<td>&lt;b onclick=x&gt;1&lt;/b&gt;</td>\n</tr>\n</tbody></table>\n'],
    ];
    for (const [source, html] of attacks) {
      it(JSON.stringify(source), () => {
        expect(renderMarkdown(source)).toBe(html);
      });
    }

    it('every tag in the output is a Markdown tag with known attributes, and no URL runs script', () => {
      const allowedTags = new Set([
        'p', 'a', 'em', 'strong', 'code', 'pre', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li',
        'blockquote', 'hr', 'br', 'del', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'input',
      ]);
      const allowedAttributes = new Set(['href', 'title', 'rel', 'target', 'class', 'start', 'align', 'checked', 'disabled', 'type']);
      const tag = /<\/?([a-z][a-z0-9]*)((?:\s+[a-z-]+(?:="[^"<>]*")?)*)\s*>/gi;
      for (const [source] of attacks) {
        const html = renderMarkdown(source);
        for (const [, name, attributes] of html.matchAll(tag)) {
          expect(allowedTags.has(name!.toLowerCase()), name).toBe(true);
          for (const [, attribute] of attributes!.matchAll(/\s+([a-z-]+)(?:="[^"]*")?/gi)) {
            expect(allowedAttributes.has(attribute!.toLowerCase()), attribute).toBe(true);
          }
        }
        // Outside well-formed tags there is only escaped text: no stray "<" or ">".
        expect(html.replace(tag, '')).not.toMatch(/[<>]/);
        expect(html).not.toMatch(/href="\s*(javascript|vbscript|data):/i);
      }
    });
  });

  it('drops HTML comments', () => {
    expect(renderMarkdown('<!-- note to self -->\n\nHello')).toBe('<p>Hello</p>\n');
    expect(renderMarkdown('Hi <!-- x --> there')).toBe('<p>Hi  there</p>\n');
  });
});

describe('html helpers', () => {
  it('escapeHtml escapes the five special characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('decodeEntities decodes numeric and common named references', () => {
    expect(decodeEntities('&#106;&#x61;&colon;&amp;&unknown;')).toBe('ja:&&unknown;');
  });

  it('safeLinkUrl keeps http, https, mailto and relative URLs, refuses the rest', () => {
    for (const ok of ['https://a.example', 'HTTP://a.example', 'mailto:a@b.example', '/about', '#top', 'page?x=1', '//a.example/x']) {
      expect(safeLinkUrl(ok)).toBe(ok);
    }
    for (const bad of [
      'javascript:alert(1)',
      ' javascript:alert(1)',
      'java\tscript:alert(1)',
      'java\nscript:alert(1)',
      '\u0001javascript:alert(1)',
      '&#106;avascript:alert(1)',
      'data:text/html,x',
      'vbscript:x',
      'file:///etc/passwd',
      '&#0;javascript:alert(1)',
      '',
    ]) {
      expect(safeLinkUrl(bad)).toBeNull();
    }
  });
});
