/**
 * GET /system/*: stored media files, by exact path under DATA_DIR/media (no traversal), streamed
 * from disk with backpressure (a slow reader holds one chunk, not the file). Names are random and
 * a file never changes once written, so it is cached for a year; the ETag and Last-Modified let
 * a client revalidate with a 304.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileResponse, type Router } from '../http/index.ts';
import type { Services } from '../context.ts';
import { IMAGE_TYPES, mediaRoot } from '../services/media-store.ts';
import { RoostError } from '../lib/errors.ts';

export function mediaFileRoutes(router: Router, services: Services): void {
  router.get('/system/*', async (ctx) => {
    const rel = ctx.params['*'] ?? '';
    const m = /^[a-z0-9_/-]+\.(png|jpg|gif|webp)$/.exec(rel);
    if (!m || rel.includes('..')) throw new RoostError(404, 'Record not found');
    const root = mediaRoot(services);
    const file = path.join(root, rel);
    if (!file.startsWith(`${root}${path.sep}`)) throw new RoostError(404, 'Record not found');
    const st = await stat(file).catch(() => null);
    if (!st || !st.isFile()) throw new RoostError(404, 'Record not found');
    const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
    const lastModified = new Date(Math.floor(st.mtimeMs / 1000) * 1000).toUTCString();
    const headers = {
      'content-type': IMAGE_TYPES[m[1]!]!,
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
      etag,
      'last-modified': lastModified,
    };
    const ifNoneMatch = ctx.header('if-none-match');
    const ifModifiedSince = ctx.header('if-modified-since');
    const notModified =
      ifNoneMatch !== null
        ? ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*')
        : ifModifiedSince !== null && Date.parse(ifModifiedSince) >= Date.parse(lastModified);
    return fileResponse(file, st.size, { status: notModified ? 304 : 200, headers });
  });
}
