/**
 * A browser at the root, /about and /privacy-policy (URLs the instance API advertises) gets a small
 * readable page, through the real server; a JSON client at / still gets JSON.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';

let roost: TestRoost;
beforeAll(async () => {
  roost = await startTestRoost({
    instance: {
      title: 'Pages & Co',
      shortDescription: 'A <small> test server.',
      description: 'We talk about **birds**.\n\n<script>alert(1)</script>',
      rules: [{ text: 'Be kind', hint: 'to birds too' }, 'No spam'],
      privacyPolicy: 'We keep **nothing** about you on %{domain}.',
      contactEmail: 'admin@pages.example',
    },
    registrations: { mode: 'approval' },
  });
});
afterAll(async () => roost?.close());

const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

describe('web pages', () => {
  it('the root and /about show the title, description, rules and how to sign in', async () => {
    for (const path of ['/', '/about']) {
      const res = await fetch(roost.at(path), { headers: browser });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      const html = await res.text();
      expect(html).toMatch(/^<!DOCTYPE html>/);
      expect(html).toContain('<title>Pages &amp; Co</title>');
      expect(html).toContain('<p class="lead">A &lt;small&gt; test server.</p>');
      expect(html).toContain('<p>We talk about <strong>birds</strong>.</p>');
      expect(html).not.toContain('<script>');
      expect(html).toContain('<ol class="rules"><li>Be kind<div class="hint">to birds too</div></li><li>No spam</li></ol>');
      expect(html).toContain(`<code>${roost.url}/oauth/authorize</code>`);
      expect(html).toContain(`<code>${roost.config.domain}</code>`);
      expect(html).toContain('a moderator approves each sign-up');
      expect(html).toContain('<a href="mailto:admin@pages.example">');
      expect(html).toContain('<a href="/privacy-policy">Privacy policy</a>');
    }
    // curl's default Accept, and none at all, get the page too.
    for (const accept of ['*/*', '']) {
      const res = await fetch(roost.at('/'), { headers: { accept } });
      expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    }
  });

  it('/privacy-policy renders the policy Markdown', async () => {
    const res = await fetch(roost.at('/privacy-policy'), { headers: browser });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<title>Privacy policy - Pages &amp; Co</title>');
    expect(html).toContain(`<p>We keep <strong>nothing</strong> about you on ${roost.config.domain}.</p>`);
    // One heading: the page's, as the policy brings none.
    expect(html.match(/<h1>/g)).toEqual(['<h1>']);
    expect(html).toContain('<h1>Privacy policy</h1>');
  });

  it('the default privacy policy shows its heading once', async () => {
    const plain = await startTestRoost();
    try {
      const html = await (await fetch(plain.at('/privacy-policy'), { headers: browser })).text();
      expect(html.match(/Privacy policy<\/h[12]>/gi)).toHaveLength(1);
      expect(html.match(/<h1[ >]/g)).toHaveLength(1);
    } finally {
      await plain.close();
    }
  });

  it('the URLs the instance API advertises are these pages', async () => {
    const v1 = (await (await fetch(roost.at('/api/v1/instance'))).json()) as any;
    const v2 = (await (await fetch(roost.at('/api/v2/instance'))).json()) as any;
    for (const url of [v2.configuration.urls.about, v2.configuration.urls.privacy_policy].filter(Boolean)) {
      expect((await fetch(url, { headers: browser })).status).toBe(200);
    }
    expect(v2.configuration.urls.about).toBe(roost.at('/about'));
    expect(v1.uri).toBe(roost.config.domain);
  });

  it('a JSON or ActivityPub client at / gets a JSON 404 that points at the instance API; HEAD answers like GET', async () => {
    for (const accept of ['application/json', 'application/activity+json', 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"']) {
      const res = await fetch(roost.at('/'), { headers: { accept } });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: `Record not found: this is the web page's address; the API starts at ${roost.url}/api/v2/instance` });
      expect(res.headers.get('link')).toBe(`<${roost.url}/api/v2/instance>; rel="describedby"; type="application/json"`);
    }
    const head = await fetch(roost.at('/about'), { method: 'HEAD', headers: browser });
    expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([200, 'text/html; charset=utf-8', '']);
  });
});
