/**
 * POST /api/v2/media (methods/media.md): the upload is checked at once (type from its bytes,
 * size, dimensions: a 422 for what Roost cannot take) and processed in the background; the answer
 * is 202 with `url` null, and GET /api/v1/media/:id answers 206 until the processing is done.
 * (Processed already by the time the answer is rendered: 200, as Mastodon answers small images.)
 */
import type { Router } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { uploadMediaAsync, usableMedia } from '../../services/media.ts';
import { WRITE_MEDIA, renderMedia, uploadInput, uploadRouteOptions } from '../v1/media.ts';

export function mediaV2Routes(router: Router, services: Services): void {
  router.post('/api/v2/media', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_MEDIA);
    const id = await uploadMediaAsync(services, viewer.account.id, uploadInput(ctx));
    const m = await usableMedia(services, viewer.account.id, id);
    return renderMedia(services, m, m.processing === 'complete' ? 200 : 202);
  }, uploadRouteOptions(services));
}
