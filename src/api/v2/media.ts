/**
 * POST /api/v2/media (methods/media.md): an image is processed in the request, as Mastodon does,
 * and answered 200 with its URLs, so an app may attach it at once; an image Roost cannot take is
 * refused 422 there. Only larger work (video, audio: not supported yet) would be queued
 * (`uploadMediaAsync`) and answered 202 with `url` null, GET /api/v1/media/:id answering 206
 * until done.
 */
import type { Router } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { uploadMedia, usableMedia } from '../../services/media.ts';
import { WRITE_MEDIA, renderMedia, uploadInput, uploadRouteOptions } from '../v1/media.ts';

export function mediaV2Routes(router: Router, services: Services): void {
  router.post('/api/v2/media', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_MEDIA);
    const id = await uploadMedia(services, viewer.account.id, uploadInput(ctx));
    const m = await usableMedia(services, viewer.account.id, id);
    return renderMedia(services, m, m.processing === 'complete' ? 200 : 202);
  }, uploadRouteOptions(services));
}
