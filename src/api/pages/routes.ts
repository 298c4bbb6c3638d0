/**
 * The public pages on the URLs of the ActivityPub objects, by content negotiation (negotiate.ts):
 * `/@user` and `/users/user` (a profile), `/@user/:id` and `/users/user/statuses/:id` (a status in
 * its thread), `/tags/:name` (a tag's public posts); `/@user.rss` and `/tags/:name.rss` (RSS);
 * `/api/oembed`; the stylesheet. A peer or a JSON client gets the ActivityPub document from Fedify
 * as before. Pages show what an anonymous visitor may see (the views with no viewer: public and
 * unlisted posts, never private or direct ones); a suspended account is a tombstone (410); a
 * remote account's or status's page redirects to its own URL, as Mastodon's PermalinkRedirector
 * does for visitors, unless its domain is suspended (404).
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramId, paramInt, paramString, stringResponse } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import type { RoostFederation } from '../../federation/index.ts';
import { html } from '../../lib/html-template.ts';
import { RoostError } from '../../lib/errors.ts';
import { escapeHtml } from '../../lib/html.ts';
import { plainText } from '../../lib/sanitize.ts';
import { renderAccount } from '../../views/accounts.ts';
import { renderStatuses } from '../../views/statuses.ts';
import { accountStatusesPage, findVisibleStatus, statusContext } from '../../services/reads/statuses.ts';
import { tagTimelinePage } from '../../services/reads/timelines.ts';
import { accountFeedIds, publicAccountByHandle, publicLocalStatusId, type PublicAccountHandle } from '../../services/reads/public-pages.ts';
import type { MastodonStatus } from '../../serializers/status.ts';
import { wantsJson } from './negotiate.ts';
import { renderPage } from './layout.ts';
import { displayName, fullHandle, profileHead, statusArticle, statusSummary } from './render.ts';
import { accountFeed, tagFeed } from './feeds.ts';
import { STYLESHEET, STYLESHEET_PATH } from './stylesheet.ts';
import { PageCache } from './cache.ts';

const PAGE_SIZE = 20;

export function publicPageRoutes(router: Router, services: Services, federation?: RoostFederation): void {
  const base = () => services.config.publicUrl;
  const localDomain = () => services.config.domain;
  const generator = () => `Roost ${services.version}`;
  const cache = new PageCache(() => services.config.pages.cacheSeconds * 1000, () => services.clock.now().getTime());
  const maxIdOf = (ctx: RequestContext) => paramId(ctx.query.max_id) ?? '';

  // --- JSON for peers and JSON clients: Fedify's answer, as before ---------------------------
  const fedifyOptions = {
    contextData: undefined,
    onNotFound: () => Response.json({ error: 'Record not found' }, { status: 404 }),
    onNotAcceptable: () => Response.json({ error: 'Not acceptable' }, { status: 406 }),
    onUnauthorized: () => Response.json({ error: 'Record not found' }, { status: 404 }),
  };
  // A link (/@user, /@user/:id) asked for as JSON: the object at its canonical URL. In
  // authorized-fetch mode the link is redirected there instead: a request's HTTP signature covers
  // the path it was made to, so one made to the link cannot be checked at the canonical URL.
  const objectAt = (ctx: RequestContext, canonicalPath: string) => {
    if (!federation) throw new RoostError(404, 'Record not found');
    const url = new URL(canonicalPath, base());
    if (services.config.federation.authorizedFetch) {
      return new Response(null, { status: 301, headers: { location: url.href, vary: 'Accept', 'cache-control': 'no-store' } });
    }
    return federation.fetch(new Request(url, { headers: ctx.headers }), fedifyOptions);
  };
  const canonicalAnswer = (ctx: RequestContext) => {
    if (!federation) throw new RoostError(404, 'Record not found');
    return federation.fetch(ctx.request, {
      ...fedifyOptions,
      onUnauthorized: () => Response.json({ error: 'Request not signed or not authorized' }, { status: 401 }),
    });
  };

  // --- pages --------------------------------------------------------------------------------
  const notFound = () =>
    renderPage(services, {
      title: `Not found - ${services.config.instance.title}`,
      status: 404,
      noindex: true,
      body: html`<h1>Not found</h1><p>There is nothing here, or nothing you may see without signing in.</p><p><a href="/about">About this server</a></p>`,
    });
  const tombstone = (handle: PublicAccountHandle) =>
    renderPage(services, {
      title: `Account suspended - ${services.config.instance.title}`,
      status: 410,
      noindex: true,
      body: html`<section class="tombstone"><h1>@${handle.username} is suspended</h1><p>This account was suspended by the moderators of ${localDomain()}. Its profile and posts are no longer available.</p></section>`,
    });
  const redirect = (location: string | null) =>
    location ? new Response(null, { status: 302, headers: { location, 'cache-control': 'public, max-age=15', vary: 'Accept' } }) : notFound();

  /** `user` or `user@domain` (this server's domain meaning local). */
  const parseHandle = (raw: string): { username: string; domain: string | null } | null => {
    const m = /^@?([^@/\s]+)(?:@([^@/\s]+))?$/.exec(raw);
    if (!m) return null;
    const domain = m[2] && m[2].toLowerCase() !== localDomain().toLowerCase() ? m[2] : null;
    return { username: m[1]!, domain };
  };
  /** A remote account a visitor may be sent to: known, not suspended, its domain not suspended. */
  const remoteShown = async (handle: PublicAccountHandle | null) =>
    handle !== null && !handle.suspended && handle.domain !== null && !(await services.domainPolicy.suspended(handle.domain));

  const profilePage = async (ctx: RequestContext, handle: PublicAccountHandle) => {
    if (handle.suspended) return tombstone(handle);
    const maxId = maxIdOf(ctx) || null;
    const [account, page] = await Promise.all([
      renderAccount(services, handle.id, { visibleOnly: true }),
      accountStatusesPage(services, handle.id, null, { maxId, sinceId: null, minId: null, limit: PAGE_SIZE }, { excludeReplies: true }),
    ]);
    if (!account) return notFound();
    const statuses = await renderStatuses(services, page.statusIds, null);
    const name = displayName(account);
    const handleText = fullHandle(account, localDomain());
    const older = page.statusIds.length >= PAGE_SIZE ? `${account.url}?max_id=${page.statusIds[page.statusIds.length - 1]}` : null;
    const description = plainText(account.note, 300) || `Posts by ${handleText}`;
    return renderPage(services, {
      title: `${name} (${handleText}) - ${services.config.instance.title}`,
      description,
      noindex: account.noindex === true,
      meta: [
        ['og:type', 'profile'],
        ['og:site_name', services.config.instance.title],
        ['og:title', `${name} (${handleText})`],
        ['og:description', description],
        ['og:url', account.url],
        ['og:image', account.avatar],
        ['og:image:alt', `Avatar of ${name}`],
        ['profile:username', handleText.slice(1)],
        ['twitter:card', 'summary'],
        ['twitter:title', `${name} (${handleText})`],
        ['twitter:description', description],
      ],
      links: [
        { rel: 'canonical', href: account.url },
        { rel: 'alternate', type: 'application/rss+xml', href: `${account.url}.rss`, title: `Public posts from ${handleText}` },
        { rel: 'alternate', type: 'application/activity+json', href: account.uri },
      ],
      body: html`${profileHead(account, localDomain())}
<section aria-labelledby="posts-heading"><h2 id="posts-heading">Posts</h2>
${statuses.length ? statuses.map((s) => statusArticle(s, { localDomain: localDomain() })) : html`<p>No public posts${maxId ? ' before these' : ''}.</p>`}
${older ? html`<nav class="pager" aria-label="More posts"><a rel="next" href="${older}">Older posts</a></nav>` : ''}
</section>`,
    });
  };

  const statusPage = async (handle: PublicAccountHandle, id: string) => {
    if (handle.suspended) return tombstone(handle);
    const facts = await findVisibleStatus(services, id, null);
    if (!facts || facts.accountId !== handle.id) return notFound();
    // A boost's page is its original's (Mastodon's redirect_to_original).
    if (facts.reblogOfId) {
      const [original] = await renderStatuses(services, [facts.reblogOfId], null);
      return redirect(original?.url ?? original?.uri ?? null);
    }
    const thread = await statusContext(services, facts, null);
    const ids = [...thread.ancestors, facts.id, ...thread.descendants];
    const rendered = await renderStatuses(services, ids, null);
    const focus = rendered.find((s) => s.id === facts.id);
    if (!focus) return notFound();
    const ancestors = new Set(thread.ancestors);
    const before = rendered.filter((s) => ancestors.has(s.id));
    const after = rendered.filter((s) => s.id !== facts.id && !ancestors.has(s.id));
    return statusDocument(focus, before, after);
  };

  const statusDocument = (focus: MastodonStatus, before: MastodonStatus[], after: MastodonStatus[]) => {
    const account = focus.account;
    const name = displayName(account);
    const handleText = fullHandle(account, localDomain());
    const summary = statusSummary(focus);
    const url = focus.url ?? focus.uri;
    const image = focus.media_attachments.find((m) => m.type === 'image' && (m.preview_url || m.url));
    const meta: [string, string][] = [
      ['og:type', 'article'],
      ['og:site_name', services.config.instance.title],
      ['og:title', `${name} (${handleText})`],
      ['og:description', summary],
      ['og:url', url],
      ['og:image', image ? (image.url ?? image.preview_url)! : account.avatar],
      ...(image?.description ? [['og:image:alt', image.description] as [string, string]] : []),
      ['article:published_time', focus.created_at],
      ['profile:username', handleText.slice(1)],
      ['twitter:card', image && !focus.sensitive ? 'summary_large_image' : 'summary'],
      ['twitter:title', `${name} (${handleText})`],
      ['twitter:description', summary],
    ];
    const opts = { localDomain: localDomain() };
    return renderPage(services, {
      title: `${name}: "${summary.slice(0, 80)}" - ${services.config.instance.title}`,
      lang: focus.language,
      description: summary,
      noindex: account.noindex === true,
      meta,
      links: [
        { rel: 'canonical', href: url },
        { rel: 'alternate', type: 'application/json+oembed', href: `${base()}/api/oembed?url=${encodeURIComponent(url)}` },
        { rel: 'alternate', type: 'application/activity+json', href: focus.uri },
      ],
      body: html`<h1>Post by ${name} <span class="handle">${handleText}</span></h1>
${before.length ? html`<section aria-labelledby="earlier"><h2 id="earlier">Earlier in the thread</h2>${before.map((s) => statusArticle(s, opts))}</section>` : ''}
${statusArticle(focus, { ...opts, focus: true })}
${after.length ? html`<section aria-labelledby="replies"><h2 id="replies">Replies</h2>${after.map((s) => statusArticle(s, opts))}</section>` : ''}`,
    });
  };

  const tagPage = async (ctx: RequestContext, raw: string) => {
    const tag = raw.replace(/^#/, '');
    const maxId = maxIdOf(ctx) || null;
    const { statusIds } = await tagTimelinePage(services, null, { maxId, sinceId: null, minId: null, limit: PAGE_SIZE }, { tag });
    const statuses = await renderStatuses(services, statusIds, null);
    const url = `${base()}/tags/${encodeURIComponent(tag)}`;
    const older = statusIds.length >= PAGE_SIZE ? `${url}?max_id=${statusIds[statusIds.length - 1]}` : null;
    return renderPage(services, {
      title: `#${tag} - ${services.config.instance.title}`,
      description: `Public posts tagged #${tag} on ${localDomain()}`,
      meta: [
        ['og:type', 'website'],
        ['og:site_name', services.config.instance.title],
        ['og:title', `#${tag}`],
        ['og:url', url],
        ['twitter:card', 'summary'],
      ],
      links: [
        { rel: 'canonical', href: url },
        { rel: 'alternate', type: 'application/rss+xml', href: `${url}.rss`, title: `Public posts tagged #${tag}` },
      ],
      body: html`<h1>#${tag}</h1><p class="lead">Public posts tagged #${tag}</p>
<section aria-label="Posts">${statuses.length ? statuses.map((s) => statusArticle(s, { localDomain: localDomain() })) : html`<p>No public posts with this tag${maxId ? ' before these' : ''}.</p>`}</section>
${older ? html`<nav class="pager" aria-label="More posts"><a rel="next" href="${older}">Older posts</a></nav>` : ''}`,
    });
  };

  // --- routes -------------------------------------------------------------------------------
  router.get('/@:username', async (ctx) => {
    const raw = ctx.params.username ?? '';
    if (raw.endsWith('.rss')) {
      const handle = parseHandle(raw.slice(0, -4));
      const found = handle && handle.domain === null ? await publicAccountByHandle(services, handle.username, null) : null;
      if (!found || found.suspended) throw new RoostError(404, 'Record not found');
      const [account, ids] = await Promise.all([renderAccount(services, found.id, { visibleOnly: true }), accountFeedIds(services, found.id, PAGE_SIZE)]);
      if (!account) throw new RoostError(404, 'Record not found');
      return accountFeed(account, await renderStatuses(services, ids, null), { localDomain: localDomain(), generator: generator() });
    }
    const handle = parseHandle(raw);
    if (wantsJson(ctx.header('accept'))) {
      if (!handle || handle.domain !== null) throw new RoostError(404, 'Record not found');
      return objectAt(ctx, `/users/${encodeURIComponent(handle.username)}`);
    }
    if (!handle) return notFound();
    return cache.get(`profile ${handle.username.toLowerCase()}@${handle.domain?.toLowerCase() ?? ''} ${maxIdOf(ctx)}`, async () => {
      const found = await publicAccountByHandle(services, handle.username, handle.domain);
      if (handle.domain !== null) return (await remoteShown(found)) ? redirect(found!.url) : notFound();
      return found ? profilePage(ctx, found) : notFound();
    });
  });

  router.get('/@:username/:id', async (ctx) => {
    const handle = parseHandle(ctx.params.username ?? '');
    const id = ctx.params.id ?? '';
    if (wantsJson(ctx.header('accept'))) {
      if (!handle || handle.domain !== null) throw new RoostError(404, 'Record not found');
      return objectAt(ctx, `/users/${encodeURIComponent(handle.username)}/statuses/${encodeURIComponent(id)}`);
    }
    if (!handle) return notFound();
    return cache.get(`status ${handle.username.toLowerCase()}@${handle.domain?.toLowerCase() ?? ''} ${id}`, async () => {
      const found = await publicAccountByHandle(services, handle.username, handle.domain);
      if (!found) return notFound();
      if (handle.domain !== null) {
        if (!(await remoteShown(found))) return notFound();
        const facts = await findVisibleStatus(services, id, null);
        if (!facts || facts.accountId !== found.id) return notFound();
        const [status] = await renderStatuses(services, [facts.id], null);
        return redirect(status?.url ?? status?.uri ?? null);
      }
      return statusPage(found, id);
    });
  });

  router.get('/users/:username', async (ctx) => {
    if (wantsJson(ctx.header('accept'))) return canonicalAnswer(ctx);
    const username = ctx.params.username ?? '';
    return cache.get(`profile ${username.toLowerCase()}@ ${maxIdOf(ctx)}`, async () => {
      const found = await publicAccountByHandle(services, username, null);
      return found ? profilePage(ctx, found) : notFound();
    });
  });

  router.get('/users/:username/statuses/:id', async (ctx) => {
    if (wantsJson(ctx.header('accept'))) return canonicalAnswer(ctx);
    const username = ctx.params.username ?? '';
    const id = ctx.params.id ?? '';
    return cache.get(`status ${username.toLowerCase()}@ ${id}`, async () => {
      const found = await publicAccountByHandle(services, username, null);
      return found ? statusPage(found, id) : notFound();
    });
  });

  router.get('/tags/:name', async (ctx) => {
    const raw = ctx.params.name ?? '';
    if (raw.endsWith('.rss')) {
      const tag = raw.slice(0, -4).replace(/^#/, '');
      const { statusIds } = await tagTimelinePage(services, null, { maxId: null, sinceId: null, minId: null, limit: PAGE_SIZE }, { tag });
      return tagFeed(tag, `${base()}/tags/${encodeURIComponent(tag)}`, await renderStatuses(services, statusIds, null), { generator: generator() });
    }
    if (wantsJson(ctx.header('accept'))) throw new RoostError(404, 'Record not found');
    return cache.get(`tag ${raw.toLowerCase()} ${maxIdOf(ctx)}`, () => tagPage(ctx, raw));
  });

  // oEmbed (Mastodon's Api::OEmbedController): a status URL of this server, public or unlisted.
  router.get('/api/oembed', async (ctx) => {
    const status = await oembedStatus(services, paramString(ctx.query.url) ?? '');
    if (!status) throw new RoostError(404, 'Record not found');
    const width = paramInt(ctx.query.maxwidth, 400, { min: 100, max: 1200 });
    const url = status.url ?? status.uri;
    const name = displayName(status.account);
    const text = statusSummary(status, 500);
    const embed =
      `<blockquote class="roost-embed" cite="${escapeHtml(url)}" style="max-width:${width}px">` +
      `<p>${escapeHtml(text)}</p>&mdash; ${escapeHtml(name)} (${escapeHtml(fullHandle(status.account, localDomain()))}) ` +
      `<a href="${escapeHtml(url)}">${escapeHtml(new Date(status.created_at).toISOString().slice(0, 10))}</a></blockquote>`;
    return json({
      type: 'rich',
      version: '1.0',
      title: `Post by ${name}`,
      author_name: name,
      author_url: status.account.url,
      provider_name: localDomain(),
      provider_url: `${base()}/`,
      cache_age: 86400,
      html: embed,
      width,
      height: null,
    });
  });

  router.get(STYLESHEET_PATH, () =>
    stringResponse(STYLESHEET, {
      headers: { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' },
    }),
  );
}

/** The status an oEmbed `url` names: this server's `/@user/:id` or `/users/user/statuses/:id`, public or unlisted. */
async function oembedStatus(services: Services, raw: string): Promise<MastodonStatus | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.origin !== new URL(services.config.publicUrl).origin) return null;
  const m = /^\/@([^/@]+)\/(\d{1,19})\/?$/.exec(url.pathname) ?? /^\/users\/([^/@]+)\/statuses\/(\d{1,19})\/?$/.exec(url.pathname);
  if (!m) return null;
  let username: string;
  try {
    username = decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
  const id = await publicLocalStatusId(services, username, m[2]!);
  if (!id) return null;
  const [status] = await renderStatuses(services, [id], null);
  return status ?? null;
}

