/**
 * /api/v1/media (methods/media.md): upload (synchronous, the legacy endpoint, video and audio
 * included: the request waits for the transcode), read, describe and
 * delete one's own attachments. Scope write:media (or write) everywhere, as Mastodon. An
 * attachment that is not the viewer's, or is already attached to a status, is a 404 (Mastodon
 * looks only among the viewer's unattached media); DELETE of an attached one is a 422.
 * GET and PUT answer 206 while the attachment is being processed, 200 once it is.
 */
import type { Router, RequestContext } from '../../http/index.ts';
import { json, paramString, requireId } from '../../http/index.ts';
import type { Services } from '../../context.ts';
import { requireUser } from '../auth.ts';
import { deleteMedia, updateMedia, uploadMedia, usableMedia, type MediaUpload } from '../../services/media.ts';
import { mediaStorage } from '../../services/media-storage.ts';
import { serializeMediaAttachment, type MediaAttachmentRow } from '../../serializers/media-attachment.ts';

export const WRITE_MEDIA = ['write', 'write:media'];

/** The `file` part (the first, when several came), description and focus of an upload form. */
export function uploadInput(ctx: RequestContext): MediaUpload {
  const f = ctx.files.file;
  const file = Array.isArray(f) ? f[0] : f;
  return { file, description: paramString(ctx.input.description), focus: paramString(ctx.input.focus) };
}

/** An upload route: a larger body, and only from a valid token with the scope (checked before the body is read). */
export function uploadRouteOptions(services: Services) {
  return {
    maxBodyBytes: services.config.bodyLimits.maxUploadBytes,
    beforeBody: async (ctx: RequestContext) => void (await requireUser(services, ctx, WRITE_MEDIA)),
  };
}

/** A media upload route: room for a video of the size limit and the form around it (the file goes to a temporary file as it arrives). */
export function mediaUploadRouteOptions(services: Services) {
  const base = uploadRouteOptions(services);
  return { ...base, maxBodyBytes: Math.max(base.maxBodyBytes, services.config.limits.mediaAttachments.videoSizeLimit + 1024 * 1024) };
}

export function renderMedia(services: Services, m: MediaAttachmentRow, status?: number): Response {
  return json(serializeMediaAttachment(m, mediaStorage(services).baseUrl), status ? { status } : undefined);
}

/** 206 while processing, 200 once processed (Mastodon's status_code_for_media_attachment). */
function processedStatus(m: MediaAttachmentRow): number {
  return m.processing === 'complete' ? 200 : 206;
}

export function mediaRoutes(router: Router, services: Services): void {
  router.post('/api/v1/media', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_MEDIA);
    const id = await uploadMedia(services, viewer.account.id, uploadInput(ctx));
    return renderMedia(services, await usableMedia(services, viewer.account.id, id));
  }, mediaUploadRouteOptions(services));

  router.get('/api/v1/media/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_MEDIA);
    const m = await usableMedia(services, viewer.account.id, requireId(ctx.params.id));
    return renderMedia(services, m, processedStatus(m));
  });

  router.put('/api/v1/media/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_MEDIA);
    const id = requireId(ctx.params.id);
    await updateMedia(services, viewer.account.id, id, { description: paramString(ctx.input.description), focus: paramString(ctx.input.focus) });
    const m = await usableMedia(services, viewer.account.id, id);
    return renderMedia(services, m, processedStatus(m));
  });

  router.delete('/api/v1/media/:id', async (ctx) => {
    const viewer = await requireUser(services, ctx, WRITE_MEDIA);
    await deleteMedia(services, viewer.account.id, requireId(ctx.params.id));
    return json({});
  });
}
