/**
 * POST /api/v2/media (methods/media.md): an image is processed in the request, as Mastodon does,
 * and answered 200 with its URLs, so an app may attach it at once; video and audio (Mastodon's
 * "larger media formats") are checked in the request (type, size, ffprobe's reading, the video
 * limits: 422 at once for what Roost cannot take), queued (`uploadMediaAsync`) and answered 202
 * with `url` null; GET /api/v1/media/:id answers 206 until the transcode is done, then 200 (422
 * if it failed).
 */
import type { Router } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { isLargerMedia, uploadMedia, uploadMediaAsync, usableMedia } from '../../services/media.ts';
import { WRITE_MEDIA, mediaUploadRouteOptions, renderMedia, uploadInput } from '../v1/media.ts';

export function mediaV2Routes(router: Router, services: Services): void {
  router.post('/api/v2/media', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_MEDIA);
    const input = uploadInput(ctx);
    const queued = await isLargerMedia(services, input.file);
    const id = queued ? await uploadMediaAsync(services, viewer.account.id, input) : await uploadMedia(services, viewer.account.id, input);
    const m = await usableMedia(services, viewer.account.id, id);
    return renderMedia(services, m, m.processing === 'complete' ? 200 : 202);
  }, mediaUploadRouteOptions(services));
}
