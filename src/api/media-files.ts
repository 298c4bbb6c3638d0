/**
 * GET /system/*: stored media files — account images (services/media-store.ts) and media
 * attachments (the keys of services/media-storage.ts's LocalDiskStorage, whose root this is, e.g.
 * /system/media_attachments/files/…/original/….png) — by exact path under DATA_DIR/media (no
 * traversal; a pending upload, which has no extension, is never served; images, MP4 video and
 * MP3 audio, with their types), streamed
 * from disk with backpressure (a slow reader holds one chunk, not the file). Names are random and
 * a file never changes once written, so it is cached for a year; the ETag and Last-Modified let
 * a client revalidate with a 304. One byte range is served as a 206.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileResponse, type Router } from '../http/index.ts';
import type { Services } from '../context.ts';
import { IMAGE_TYPES, mediaRoot } from '../services/media-store.ts';
import { RoostError } from '../lib/errors.ts';

/** What video and audio attachments are stored as (services/media-av.ts). */
const AV_TYPES: Record<string, string> = { mp4: 'video/mp4', mp3: 'audio/mpeg' };

export function mediaFileRoutes(router: Router, services: Services): void {
  router.get('/system/*', async (ctx) => {
    const rel = ctx.params['*'] ?? '';
    const m = /^[a-z0-9_/-]+\.(png|jpg|gif|webp|mp4|mp3)$/.exec(rel);
    if (!m || rel.includes('..')) throw new RoostError(404, 'Record not found');
    const root = mediaRoot(services);
    const file = path.join(root, rel);
    if (!file.startsWith(`${root}${path.sep}`)) throw new RoostError(404, 'Record not found');
    const st = await stat(file).catch(() => null);
    if (!st || !st.isFile()) throw new RoostError(404, 'Record not found');
    const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
    const lastModified = new Date(Math.floor(st.mtimeMs / 1000) * 1000).toUTCString();
    const headers = {
      'content-type': IMAGE_TYPES[m[1]!] ?? AV_TYPES[m[1]!]!,
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
    if (notModified) return fileResponse(file, st.size, { status: 304, headers });
    // One byte range (players and resumed downloads); If-Range naming another version means the whole file.
    const range = ctx.header('range');
    const ifRange = ctx.header('if-range');
    if (range !== null && (ifRange === null || ifRange === etag || ifRange === lastModified)) {
      const part = byteRange(range, st.size);
      if (part === 'unsatisfiable') {
        return new Response(JSON.stringify({ error: 'Range Not Satisfiable' }), {
          status: 416,
          headers: { 'content-type': 'application/json; charset=utf-8', 'content-range': `bytes */${st.size}` },
        });
      }
      if (part !== null) {
        return fileResponse(
          file,
          part.end - part.start + 1,
          { status: 206, headers: { ...headers, 'accept-ranges': 'bytes', 'content-range': `bytes ${part.start}-${part.end}/${st.size}` } },
          part.start,
        );
      }
    }
    return fileResponse(file, st.size, { status: 200, headers: { ...headers, 'accept-ranges': 'bytes' } });
  });
}

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` against a file of `size` bytes; null for anything else (several ranges, other units: the whole file). */
function byteRange(header: string, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (end < start) return m[2] !== '' && Number(m[2]) < start ? null : 'unsatisfiable';
  }
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
