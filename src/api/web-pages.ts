/**
 * The few web pages a person meets in a browser until Roost has a web interface: `/` and `/about`
 * (title, description, rules, how to sign in) and `/privacy-policy` (the instance API advertises
 * both URLs), in the public pages' frame and stylesheet (pages/layout.ts). Operator texts are
 * Markdown rendered by src/lib/markdown.ts. A client that asks `/`
 * for JSON (ActivityPub, API clients) gets the JSON 404 it got before.
 */
import type { Router, RequestContext } from '../http/index.ts';
import { json } from '../http/index.ts';
import { html, trustedHtml } from '../lib/html-template.ts';
import { renderPage } from './pages/layout.ts';
import type { Services } from '../context.ts';
import { escapeHtml } from '../lib/html.ts';
import { renderMarkdown } from '../lib/markdown.ts';
import { instanceView } from '../services/instance.ts';
import { serializePrivacyPolicy, type InstanceView } from '../serializers/instance.ts';

/** A page under one heading: `heading` as its h1, or none when the body brings its own. */
function page(services: Services, view: InstanceView, title: string, body: string, heading: string | null = view.title): Response {
  return renderPage(services, { title, lang: view.languages[0] ?? 'en', body: html`${heading === null ? '' : html`<h1>${heading}</h1>`}${trustedHtml(body)}` });
}

const REGISTRATIONS: Record<InstanceView['registrations']['mode'], string> = {
  open: 'Anyone can sign up.',
  approval: 'Anyone can ask to sign up; a moderator approves each sign-up.',
  closed: 'Sign-ups are closed.',
};

function aboutPage(services: Services, view: InstanceView): Response {
  const rules = view.rules.length
    ? `<h2>Rules</h2><ol class="rules">${view.rules
        .map((r) => `<li>${escapeHtml(r.text)}${r.hint ? `<div class="hint">${escapeHtml(r.hint)}</div>` : ''}</li>`)
        .join('')}</ol>`
    : '';
  const description = view.extendedDescription.markdown.trim() ? `<section id="description">${renderMarkdown(view.extendedDescription.markdown)}</section>` : '';
  const closed = view.registrations.mode === 'closed' && view.registrations.closedMessageMarkdown ? renderMarkdown(view.registrations.closedMessageMarkdown) : '';
  const contact = view.contact.email ? `<p>Contact: <a href="mailto:${escapeHtml(view.contact.email)}">${escapeHtml(view.contact.email)}</a></p>` : '';
  return page(
    services,
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
    // A JSON client at the site's root is most likely a newcomer's curl or an app probing: still
    // a 404 (there is no JSON document here), but one that says where the API begins.
    if (wantsJson(ctx)) {
      return json(
        { error: `Record not found: this is the web page's address; the API starts at ${services.config.publicUrl}/api/v2/instance` },
        { status: 404, headers: { link: `<${services.config.publicUrl}/api/v2/instance>; rel="describedby"; type="application/json"` } },
      );
    }
    return aboutPage(services, await instanceView(services));
  });
  router.get('/about', async () => aboutPage(services, await instanceView(services)));
  router.get('/privacy-policy', async () => {
    const view = await instanceView(services);
    const policy = serializePrivacyPolicy(view);
    // The policy's own first heading (the default text's "# Privacy policy") is the page's: shown once.
    const own = /^\s*<h1[\s>]/.test(policy.content);
    return page(
      services,
      view,
      `Privacy policy - ${view.title}`,
      `<section id="policy">${policy.content}</section><p class="hint">Last updated ${escapeHtml(policy.updated_at.slice(0, 10))}</p>`,
      own ? null : 'Privacy policy',
    );
  });
}
