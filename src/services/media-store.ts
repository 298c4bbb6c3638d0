/**
 * Account images (avatars, headers) on local disk under DATA_DIR/media, served at /system/….
 *
 * An upload is never stored as sent: its type is taken from the bytes (PNG, JPEG, GIF, WebP),
 * then sharp decodes it — refusing anything that would decode to more than
 * `bodyLimits.maxImagePixels` pixels before it allocates them — applies the EXIF orientation,
 * scales it down to Mastodon's sizes (avatars 400×400, headers 1500×500, cropped to fill) and
 * encodes it again in the same format. sharp writes no metadata unless asked, so EXIF (GPS
 * positions, camera serials), XMP and IPTC are gone from what is stored and served.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp, { type Metadata } from 'sharp';
import type { Services } from '../context.ts';

// No cache of decoded images between uploads: each is decoded once, and memory stays bounded.
sharp.cache(false);

export type ImageKind = 'avatars' | 'headers';

/** Mastodon's stored sizes (Account::Avatar and Account::Header). */
export const IMAGE_SIZES: Record<ImageKind, { width: number; height: number }> = {
  avatars: { width: 400, height: 400 },
  headers: { width: 1500, height: 500 },
};

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

export const IMAGE_TYPES: Record<string, string> = Object.fromEntries(SIGNATURES.map((s) => [s.ext, s.type]));

export function sniffImage(data: Uint8Array): { ext: string; type: string } | null {
  return SIGNATURES.find((s) => data.length >= 12 && s.test(data)) ?? null;
}

export function mediaRoot(services: Services): string {
  return path.join(services.config.dataDir, 'media');
}

/** Why an upload was refused: too many pixels, or bytes sharp cannot decode. */
export class ImageRejected extends Error {
  override name = 'ImageRejected';
  readonly reason: 'too_many_pixels' | 'undecodable';
  constructor(reason: 'too_many_pixels' | 'undecodable', message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface ProcessedImage {
  data: Buffer;
  ext: string;
  width: number;
  height: number;
}

/**
 * Decode, orient, scale down and re-encode an upload (see the module comment). Throws
 * ImageRejected for an image over `maxPixels` or one that does not decode.
 */
export async function processAccountImage(kind: ImageKind, data: Uint8Array, maxPixels: number): Promise<ProcessedImage> {
  const sniffed = sniffImage(data);
  if (!sniffed) throw new ImageRejected('undecodable', 'not a PNG, JPEG, GIF or WebP image');
  let meta: Metadata;
  try {
    meta = await sharp(data, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw new ImageRejected('undecodable', (err as Error).message);
  }
  // The header says how large the decoded image would be: refuse before decoding anything.
  if (!meta.width || !meta.height) throw new ImageRejected('undecodable', 'image without dimensions');
  if (meta.width * meta.height > maxPixels) throw new ImageRejected('too_many_pixels', `${meta.width}×${meta.height} is more than ${maxPixels} pixels`);
  const { width, height } = IMAGE_SIZES[kind];
  // (limitInputPixels again: a file whose header lies still cannot make libvips allocate more)
  let pipeline = sharp(data, { limitInputPixels: maxPixels }).rotate().resize(width, height, { fit: 'cover', withoutEnlargement: true });
  switch (sniffed.ext) {
    case 'png': pipeline = pipeline.png(); break;
    case 'jpg': pipeline = pipeline.jpeg({ quality: 90, mozjpeg: true }); break;
    case 'gif': pipeline = pipeline.gif(); break;
    default: pipeline = pipeline.webp({ quality: 90 });
  }
  try {
    const { data: out, info } = await pipeline.toBuffer({ resolveWithObject: true });
    return { data: out, ext: sniffed.ext, width: info.width, height: info.height };
  } catch (err) {
    const message = (err as Error).message;
    if (/pixel limit/i.test(message)) throw new ImageRejected('too_many_pixels', message);
    throw new ImageRejected('undecodable', message);
  }
}

/** Where an image of this account will live: its public URL and its path on disk. */
export function newAccountImageLocation(services: Services, kind: ImageKind, accountId: string, ext: string): { url: string; file: string } {
  const name = `${randomBytes(12).toString('hex')}.${ext}`;
  return {
    url: `${services.config.publicUrl}/system/${path.posix.join('accounts', kind, accountId, name)}`,
    file: path.join(mediaRoot(services), 'accounts', kind, accountId, name),
  };
}

export async function writeAccountImage(file: string, data: Uint8Array): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, data);
}

/**
 * Remove a stored image by its URL (one this server made: /system/accounts/<kind>/<id>/<name>),
 * then its directory when that is left empty. Anything else is left alone.
 */
export async function deleteAccountImage(services: Services, kind: ImageKind, accountId: string, url: string | null): Promise<void> {
  if (!url) return;
  const name = path.posix.basename(url);
  if (!/^[0-9a-f]{24}\.(png|jpg|gif|webp)$/.test(name) || !url.endsWith(`/system/accounts/${kind}/${accountId}/${name}`)) return;
  const dir = path.join(mediaRoot(services), 'accounts', kind, accountId);
  await rm(path.join(dir, name), { force: true });
  await rmdir(dir).catch(() => undefined); // not empty: a newer image lives there
}
