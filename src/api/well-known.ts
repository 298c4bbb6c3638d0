/**
 * Discovery documents served beside Fedify's WebFinger: NodeInfo 2.0 (Fedify serves only 2.1, and
 * Roost speaks 2.0 exactly), host-meta, and the default server thumbnail.
 */
import type { Router } from '../http/index.ts';
import { json } from '../http/index.ts';
import type { Services } from '../context.ts';
import { instanceStats, THUMBNAIL_PATH, THUMBNAIL_2X_PATH } from '../services/instance.ts';
import { serializeNodeInfo20, serializeNodeInfoLinks } from '../serializers/nodeinfo.ts';
import { registrationsEnabled } from '../serializers/instance.ts';
import { defaultThumbnail } from '../lib/default-thumbnail.ts';
import { escapeHtml } from '../lib/html.ts';

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
}
