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

const NODEINFO_20_PROFILE = 'http://nodeinfo.diaspora.software/ns/schema/2.0#';

export function wellKnownRoutes(router: Router, services: Services): void {
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
  // The profile and status links (/@user, /@user/:id) are pages and ActivityPub objects both: api/pages/routes.ts.
  // Mastodon's load-balancer probe: 200 "OK" as text/plain once the app is up and its database
  // answers; 503 (the API's answer while the database is unreachable) when it does not.
  router.get('/health', async () => {
    if (!(await databaseAnswers(services))) throw unavailableError();
    return new Response('OK', { headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } });
  });
}
