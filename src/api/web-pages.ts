/**
 * The few web pages a person meets in a browser until Roost has a web interface: `/` and `/about`
 * (title, description, rules, how to sign in) and `/privacy-policy` (the instance API advertises
 * both URLs). Operator texts are Markdown rendered by src/lib/markdown.ts. A client that asks `/`
 * for JSON (ActivityPub, API clients) gets the JSON 404 it got before.
 */
import type { Router, RequestContext } from '../http/index.ts';
import { json, stringResponse } from '../http/index.ts';
import type { Services } from '../context.ts';
import { escapeHtml } from '../lib/html.ts';
import { renderMarkdown } from '../lib/markdown.ts';
import { instanceView } from '../services/instance.ts';
import { serializePrivacyPolicy, type InstanceView } from '../serializers/instance.ts';

const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cache-control': 'public, max-age=60',
};

function page(view: InstanceView, title: string, body: string): Response {
  const html = `<!DOCTYPE html>
<html lang="${escapeHtml(view.languages[0] ?? 'en')}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font:16px/1.55 system-ui,sans-serif;max-width:40rem;margin:2.5rem auto;padding:0 1rem;color:#222}
h1{font-size:1.6rem;margin-bottom:.2rem} h2{font-size:1.2rem;margin-top:2rem} nav{margin:.4rem 0 1.6rem;color:#555}
nav a{margin-right:1rem} .lead{font-size:1.1rem;color:#444} ol.rules li{margin:.4rem 0} .hint{color:#666;font-size:.92rem}
code{background:#f3f3f3;padding:0 .25rem;border-radius:3px} footer{margin-top:3rem;color:#777;font-size:.9rem}
</style></head><body>
<header><h1>${escapeHtml(view.title)}</h1>
<nav><a href="/about">About</a><a href="/privacy-policy">Privacy policy</a></nav></header>
<main>${body}</main>
<footer>${escapeHtml(view.domain)} runs <a href="${escapeHtml(view.sourceUrl)}">Roost</a> ${escapeHtml(view.softwareVersion)}, a federated social server that Mastodon apps talk to.</footer>
</body></html>`;
  return stringResponse(html, { status: 200, headers: HEADERS });
}

const REGISTRATIONS: Record<InstanceView['registrations']['mode'], string> = {
  open: 'Anyone can sign up.',
  approval: 'Anyone can ask to sign up; a moderator approves each sign-up.',
  closed: 'Sign-ups are closed.',
};

function aboutPage(view: InstanceView): Response {
  const rules = view.rules.length
    ? `<h2>Rules</h2><ol class="rules">${view.rules
        .map((r) => `<li>${escapeHtml(r.text)}${r.hint ? `<div class="hint">${escapeHtml(r.hint)}</div>` : ''}</li>`)
        .join('')}</ol>`
    : '';
  const description = view.extendedDescription.markdown.trim() ? `<section id="description">${renderMarkdown(view.extendedDescription.markdown)}</section>` : '';
  const closed = view.registrations.mode === 'closed' && view.registrations.closedMessageMarkdown ? renderMarkdown(view.registrations.closedMessageMarkdown) : '';
  const contact = view.contact.email ? `<p>Contact: <a href="mailto:${escapeHtml(view.contact.email)}">${escapeHtml(view.contact.email)}</a></p>` : '';
  return page(
    view,
    view.title,
    `<p class="lead">${escapeHtml(view.shortDescription)}</p>
${description}${rules}
<h2 id="sign-in">Sign in</h2>
<p>This server has no web interface yet: use a Mastodon app (<a href="https://joinmastodon.org/apps">any of these</a>).
Give it <code>${escapeHtml(view.domain)}</code> as your server; the app opens this server's
sign-in page (<code>${escapeHtml(view.baseUrl)}/oauth/authorize</code>) for you to sign in and allow it.</p>
<p>${escapeHtml(REGISTRATIONS[view.registrations.mode])}</p>${closed}
${contact}`,
  );
}

/** Whether the client asked for JSON rather than a page (no text/html in a JSON Accept). */
function wantsJson(ctx: RequestContext): boolean {
  const accept = (ctx.header('accept') ?? '').toLowerCase();
  return /json/.test(accept) && !accept.includes('text/html');
}

export function webPageRoutes(router: Router, services: Services): void {
  router.get('/', async (ctx) => {
    if (wantsJson(ctx)) return json({ error: 'Record not found' }, { status: 404 });
    return aboutPage(await instanceView(services));
  });
  router.get('/about', async () => aboutPage(await instanceView(services)));
  router.get('/privacy-policy', async () => {
    const view = await instanceView(services);
    const policy = serializePrivacyPolicy(view);
    return page(
      view,
      `Privacy policy - ${view.title}`,
      `<h2>Privacy policy</h2><p class="hint">Last updated ${escapeHtml(policy.updated_at.slice(0, 10))}</p>
<section id="policy">${policy.content}</section>`,
    );
  });
}
