/**
 * Discovery documents served beside Fedify's WebFinger: NodeInfo 2.0 (Fedify serves only 2.1, and
 * Roost speaks 2.0 exactly), host-meta, the default server thumbnail, the default avatar and
 * header every account without its own points at, and Mastodon's `/health` probe.
 */
import type { Router } from '../http/index.ts';
import { json, unavailableError } from '../http/index.ts';
import type { Services } from '../context.ts';
import { instanceStats, THUMBNAIL_PATH, THUMBNAIL_2X_PATH } from '../services/instance.ts';
import { serializeNodeInfo20, serializeNodeInfoLinks } from '../serializers/nodeinfo.ts';
import { registrationsEnabled } from '../serializers/instance.ts';
import { defaultThumbnail } from '../lib/default-thumbnail.ts';
import { defaultAvatarPng, defaultHeaderPng } from '../lib/default-images.ts';
import { escapeHtml } from '../lib/html.ts';
import { databaseAnswers } from '../services/health.ts';
import { RoostError } from '../lib/errors.ts';
import type { RoostFederation } from '../federation/index.ts';

const NODEINFO_20_PROFILE = 'http://nodeinfo.diaspora.software/ns/schema/2.0#';

/** ActivityPub media types a peer asks for (Mastodon's own fetches send these). */
const ACTIVITY_JSON = /application\/(activity\+json|ld\+json)/i;

export function wellKnownRoutes(router: Router, services: Services, federation?: RoostFederation): void {
  const base = () => services.config.publicUrl;
  router.get('/.well-known/nodeinfo', () => json(serializeNodeInfoLinks(base())));
  router.get('/nodeinfo/2.0', async () => {
    const stats = await instanceStats(services);
    const doc = serializeNodeInfo20({
      softwareVersion: services.version,
      openRegistrations: registrationsEnabled(services.config.registrations.mode),
      users: { total: stats.userCount, activeMonth: stats.activeMonth, activeHalfyear: stats.activeHalfyear },
      localPosts: stats.statusCount,
      nodeName: services.config.instance.title,
      nodeDescription: services.config.instance.shortDescription,
    });
    return json(doc, { headers: { 'content-type': `application/json; profile="${NODEINFO_20_PROFILE}"` } });
  });
  router.get('/.well-known/host-meta', () => {
    const template = `${escapeHtml(base())}/.well-known/webfinger?resource={uri}`;
    const xml =
      `<?xml version="1.0" encoding="UTF-8"?>\n` +
      `<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">\n` +
      `  <Link rel="lrdd" template="${template}"/>\n` +
      `</XRD>\n`;
    return new Response(xml, { headers: { 'content-type': 'application/xrd+xml; charset=utf-8' } });
  });
  const png = (which: 'png' | 'png2x') => async () =>
    new Response(new Uint8Array((await defaultThumbnail())[which]), {
      headers: { 'content-type': 'image/png', 'cache-control': 'public, max-age=86400' },
    });
  router.get(THUMBNAIL_PATH, png('png'));
  router.get(THUMBNAIL_2X_PATH, png('png2x'));
  // The paths serializers/account.ts puts in `avatar`/`header` when an account has none (Mastodon's).
  const image = (draw: () => Promise<Buffer>) => async () =>
    new Response(new Uint8Array(await draw()), {
      headers: { 'content-type': 'image/png', 'cache-control': 'public, max-age=86400' },
    });
  router.get('/avatars/original/missing.png', image(defaultAvatarPng));
  router.get('/headers/original/missing.png', image(defaultHeaderPng));
  // In authorized-fetch mode a link is redirected to the canonical URL instead: a request's HTTP
  // signature covers the path it was made to, so one made to the link cannot be checked at the
  // canonical URL it would be answered from; the fetcher follows the redirect and signs again there.
  const canonical = (url: URL) =>
    new Response(null, { status: 301, headers: { location: url.href, vary: 'Accept', 'cache-control': 'no-store' } });
  // A profile link (https://host/@user) asked for as ActivityPub: the actor document, as Mastodon
  // serves it there, so pasting a profile link into a Mastodon search finds the account. Fedify
  // answers the actor's own URL; other media types get no page yet.
  router.get('/@:username', async (ctx) => {
    if (!federation || !ACTIVITY_JSON.test(ctx.header('accept') ?? '')) throw new RoostError(404, 'Record not found');
    const actorUrl = new URL(`/users/${encodeURIComponent(ctx.params.username)}`, services.config.publicUrl);
    if (services.config.federation.authorizedFetch) return canonical(actorUrl);
    return federation.fetch(new Request(actorUrl, { headers: ctx.headers }), {
      contextData: undefined,
      onNotFound: () => Response.json({ error: 'Record not found' }, { status: 404 }),
      onNotAcceptable: () => Response.json({ error: 'Not acceptable' }, { status: 406 }),
    });
  });
  // A status link (https://host/@user/id) asked for as ActivityPub: the Note at the status's URI,
  // as Mastodon serves it (the same visibility rules: Fedify's object dispatcher answers).
  router.get('/@:username/:id', async (ctx) => {
    if (!federation || !ACTIVITY_JSON.test(ctx.header('accept') ?? '')) throw new RoostError(404, 'Record not found');
    const statusUrl = new URL(
      `/users/${encodeURIComponent(ctx.params.username)}/statuses/${encodeURIComponent(ctx.params.id)}`,
      services.config.publicUrl,
    );
    if (services.config.federation.authorizedFetch) return canonical(statusUrl);
    return federation.fetch(new Request(statusUrl, { headers: ctx.headers }), {
      contextData: undefined,
      onNotFound: () => Response.json({ error: 'Record not found' }, { status: 404 }),
      onNotAcceptable: () => Response.json({ error: 'Not acceptable' }, { status: 406 }),
      onUnauthorized: () => Response.json({ error: 'Record not found' }, { status: 404 }),
    });
  });
  // Mastodon's load-balancer probe: 200 "OK" as text/plain once the app is up and its database
  // answers; 503 (the API's answer while the database is unreachable) when it does not.
  router.get('/health', async () => {
    if (!(await databaseAnswers(services))) throw unavailableError();
    return new Response('OK', { headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } });
  });
}
