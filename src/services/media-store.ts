/**
 * Account images (avatars, headers) on local disk under DATA_DIR/media, served at /system/….
 * The type is taken from the bytes (PNG, JPEG, GIF, WebP), not from what the client claimed.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, writeFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Services } from '../context.ts';

export const MAX_IMAGE_BYTES = 16 * 1024 * 1024;

const SIGNATURES: { ext: string; type: string; test: (b: Uint8Array) => boolean }[] = [
  { ext: 'png', type: 'image/png', test: (b) => b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 },
  { ext: 'jpg', type: 'image/jpeg', test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { ext: 'gif', type: 'image/gif', test: (b) => b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38 },
  {
    ext: 'webp',
    type: 'image/webp',
    test: (b) => b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x46 && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50,
  },
];

export function sniffImage(data: Uint8Array): { ext: string; type: string } | null {
  return SIGNATURES.find((s) => data.length >= 12 && s.test(data)) ?? null;
}

export function mediaRoot(services: Services): string {
  return path.join(services.config.dataDir, 'media');
}

/**
 * Stores an image next to the account's current one (which stays until pruneAccountImages runs
 * after the row points at the new file); returns its public URL. Callers validate with sniffImage.
 */
export async function storeAccountImage(services: Services, kind: 'avatars' | 'headers', accountId: string, data: Uint8Array): Promise<string> {
  const sniffed = sniffImage(data)!;
  const name = `${randomBytes(12).toString('hex')}.${sniffed.ext}`;
  const rel = path.posix.join('accounts', kind, accountId, name);
  const dir = path.join(mediaRoot(services), 'accounts', kind, accountId);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, name), data);
  return `${services.config.publicUrl}/system/${rel}`;
}

/** One current image per account and kind: removes the others (or all, with keepUrl null). */
export async function pruneAccountImages(services: Services, kind: 'avatars' | 'headers', accountId: string, keepUrl: string | null): Promise<void> {
  const dir = path.join(mediaRoot(services), 'accounts', kind, accountId);
  const keep = keepUrl ? path.posix.basename(keepUrl) : null;
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(names.filter((n) => n !== keep).map((n) => rm(path.join(dir, n), { force: true })));
  if (!keep) await rm(dir, { recursive: true, force: true });
}
