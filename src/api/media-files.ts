/** GET /system/*: stored media files, by exact path under DATA_DIR/media (no traversal). */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Router } from '../http/index.ts';
import type { Services } from '../context.ts';
import { mediaRoot, sniffImage } from '../services/media-store.ts';
import { RoostError } from '../lib/errors.ts';

export function mediaFileRoutes(router: Router, services: Services): void {
  router.get('/system/*', async (ctx) => {
    const rel = ctx.params['*'] ?? '';
    if (!/^[a-z0-9_/-]+\.(png|jpg|gif|webp)$/.test(rel) || rel.includes('..')) throw new RoostError(404, 'Record not found');
    const root = mediaRoot(services);
    const file = path.join(root, rel);
    if (!file.startsWith(`${root}${path.sep}`)) throw new RoostError(404, 'Record not found');
    const data = await readFile(file).catch(() => null);
    if (!data) throw new RoostError(404, 'Record not found');
    return new Response(new Uint8Array(data), {
      headers: { 'content-type': sniffImage(data)?.type ?? 'application/octet-stream', 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' },
    });
  });
}
