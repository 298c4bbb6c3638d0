/**
 * The pages' pure parts: the escaping template, content negotiation, and what a hostile remote
 * account's texts become on a page (escaped names, sanitised markup, no handler, no script).
 */
import { describe, it, expect } from 'vitest';
import { Parser } from 'htmlparser2';
import { html, trustedHtml } from '../../src/lib/html-template.ts';
import { wantsJson } from '../../src/api/pages/negotiate.ts';
import { profileHead, statusArticle, statusSummary } from '../../src/api/pages/render.ts';
import type { MastodonAccount } from '../../src/serializers/account.ts';
import type { MastodonStatus } from '../../src/serializers/status.ts';

describe('html template', () => {
  it('escapes every value, joins arrays, drops null/false, keeps SafeHtml', () => {
    const name = `<img src=x onerror="alert(1)">'&`;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&amp;">&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&amp;</p>',
    );
    expect(html`<ul>${['a<', 'b'].map((x) => html`<li>${x}</li>`)}</ul>`.value).toBe('<ul><li>a&lt;</li><li>b</li></ul>');
    expect(html`${null}${undefined}${false}${0}`.value).toBe('0');
    expect(html`${trustedHtml('<b>kept</b>')}`.value).toBe('<b>kept</b>');
  });
});

describe('content negotiation', () => {
  it('as Fedify decides: a browser gets the page, ActivityPub and JSON types the JSON, anything else the page', () => {
    expect(wantsJson('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(false);
    expect(wantsJson('application/activity+json')).toBe(true);
    expect(wantsJson('application/ld+json; profile="https://www.w3.org/ns/activitystreams"')).toBe(true);
    expect(wantsJson('application/json')).toBe(true);
    expect(wantsJson('application/json;q=0.5, text/html')).toBe(false);
    expect(wantsJson('text/html;q=0.1, application/activity+json')).toBe(true);
    expect(wantsJson('application/activity+json;q=0')).toBe(false);
    expect(wantsJson('*/*')).toBe(false);
    expect(wantsJson('')).toBe(false);
    expect(wantsJson(null)).toBe(false);
  });
});

const HOSTILE = '<p>hi<script>alert(1)</script><img src=x onerror=alert(2)><a href="javascript:alert(3)">x</a></p>';

function remoteAccount(): MastodonAccount {
  return {
    id: '1', username: 'evil', acct: 'evil@bad.example', url: 'https://bad.example/@evil', uri: 'https://bad.example/users/evil',
    display_name: '<b onmouseover=alert(4)>Evil</b>', note: HOSTILE, avatar: 'https://bad.example/a.png', avatar_static: '', header: 'https://bad.example/h.png', header_static: '',
    locked: false, fields: [{ name: '<i>f</i>', value: HOSTILE, verified_at: null }], emojis: [], bot: false, group: false, discoverable: true, indexable: false,
    hide_collections: true, roles: [], created_at: '2026-01-01T00:00:00.000Z', last_status_at: null, statuses_count: 3, followers_count: 7, following_count: 9,
  };
}

describe('a hostile remote account on a page', () => {
  it('its name is text, its bio, fields and posts pass the sanitiser, its hidden collections stay hidden', () => {
    const account = remoteAccount();
    const head = profileHead(account, 'roost.example').value;
    expect(head).toContain('<h1 id="profile-name">&lt;b onmouseover=alert(4)&gt;Evil&lt;/b&gt;</h1>');
    expect(head).toContain('@evil@bad.example');
    expect(head).toContain('<strong>3</strong> posts');
    expect(head).not.toContain('followers');
    const status = {
      id: '2', uri: 'https://bad.example/s/2', url: 'https://bad.example/@evil/2', created_at: '2026-01-02T00:00:00.000Z', account, content: HOSTILE,
      visibility: 'public', sensitive: false, spoiler_text: '', media_attachments: [], mentions: [], tags: [], emojis: [], reblogs_count: 0,
      favourites_count: 0, replies_count: 0, in_reply_to_id: null, in_reply_to_account_id: null, reblog: null, poll: null, card: null, language: 'en', edited_at: null, quotes_count: 0, quote: null, quote_approval: { automatic: ['public'], manual: [], current_user: 'denied' },
    } as MastodonStatus;
    const article = statusArticle(status, { localDomain: 'roost.example' }).value;
    for (const out of [head, article]) {
      // Parsed as a browser would: no script element, no handler attribute, no script URL
      // (escaped text and attribute values may mention them: they are text).
      const found: string[] = [];
      const parser = new Parser({
        onopentag(name, attrs) {
          if (name === 'script') found.push('script');
          for (const [k, v] of Object.entries(attrs)) if (/^on/i.test(k) || /^\s*javascript:/i.test(v)) found.push(`${name} ${k}=${v}`);
        },
      });
      parser.write(out);
      parser.end();
      expect(found).toEqual([]);
    }
    expect(article).toContain('<p>hi');
    expect(statusSummary(status)).toBe('hix');
  });
});

describe('a moved account', () => {
  it('says where it moved', () => {
    const account = { ...remoteAccount(), display_name: 'Old', moved: { ...remoteAccount(), acct: 'new@else.example', url: 'https://else.example/@new' } };
    expect(profileHead(account, 'roost.example').value).toContain(
      '<p class="moved"><strong>Old has moved to <a href="https://else.example/@new">@new@else.example</a>.</strong></p>',
    );
  });
});
