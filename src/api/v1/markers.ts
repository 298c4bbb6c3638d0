/**
 * /api/v1/markers (Mastodon's methods/markers.md): GET ?timeline[]=home&timeline[]=notifications
 * answers the markers the user has among those asked (unknown timelines ignored, none asked: {});
 * POST home[last_read_id]= / notifications[last_read_id]= (JSON or form) saves them
 * (services/markers.ts) and answers the saved ones.
 */
import type { Router } from '../../http/index.ts';
import { json, paramString, paramStrings, type Params } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { serializeMarkers } from '../../serializers/marker.ts';
import { MARKER_TIMELINES, markersOf } from '../../services/reads/markers.ts';
import { saveMarkers, type MarkerInput } from '../../services/markers.ts';

const isObject = (v: unknown): v is Params => typeof v === 'object' && v !== null && !Array.isArray(v);

export function markerRoutes(router: Router, services: Services): void {
  router.get('/api/v1/markers', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['read', 'read:statuses']);
    return json(serializeMarkers(await markersOf(services, viewer.user.id, paramStrings(ctx.query.timeline))));
  });

  router.post('/api/v1/markers', async (ctx) => {
    const viewer = await requireUser(services, ctx, ['write', 'write:statuses']);
    // Only `home[…]` and `notifications[…]` hashes count (Mastodon's params.slice(*Marker::TIMELINES)).
    const input: MarkerInput[] = [];
    for (const timeline of MARKER_TIMELINES) {
      const given = ctx.input[timeline];
      if (isObject(given)) input.push({ timeline, lastReadId: paramString(given.last_read_id) });
    }
    return json(serializeMarkers(await saveMarkers(services, viewer.user.id, input)));
  });
}
