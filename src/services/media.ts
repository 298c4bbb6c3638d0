/**
 * Media attachments (Mastodon's MediaAttachment): upload, process, describe, delete, attach to a
 * status; and the rows of remote attachments that federation stores with a remote status.
 *
 * An upload is never stored as sent. Its type is taken from the bytes (the `file-type` package),
 * never from the client's Content-Type or file name; Mastodon's types are accepted
 * (ROOST_SUPPORTED_MIME_TYPES: all but HEIC/HEIF). Images: the header's dimensions are checked
 * against the pixel bounds before anything is decoded; then sharp decodes it (bounded again),
 * applies the EXIF orientation, writes it again without metadata (no EXIF, GPS, XMP or IPTC
 * survives), scaled down to Mastodon's original size when larger, and makes the `small` preview
 * (at most 230,400 pixels, Mastodon's 640×360) and a 4×4 blurhash (the `blurhash` package, from
 * a small RGBA downscale of the preview). An animated GIF becomes a `gifv` (a silent MP4), as
 * Mastodon makes it. Video and audio are probed and transcoded by ffmpeg (./media-av.ts).
 *
 * POST /api/v1/media does all that before answering, for every type, as Mastodon's v1 does.
 * POST /api/v2/media does it for an image (200 with the URLs); video and audio take the queued
 * road (`uploadMediaAsync`), as Mastodon delays its "larger media formats": the upload is checked
 * at once (type, size, and for video and audio ffprobe's reading and the video limits), its bytes
 * kept under a pending key, the attachment answered 202 with `url` null; the transcoding runs in
 * a background job (MEDIA_PROCESS_JOB on its own lane, MEDIA_QUEUE, as many at once as
 * media.transcodeConcurrency; one account's uploads one at a time), and GET /api/v1/media/:id
 * answers 206 until the job is done, 422 if it failed.
 */
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileTypeFromBuffer, fileTypeFromFile } from 'file-type';
import sharp, { type Metadata, type OutputInfo, type Sharp } from 'sharp';
import { decode as decodeBlurhash, isBlurhashValid } from 'blurhash';
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import { schedule } from '../events/timers.ts';
import { RoostError, Validation, notFound } from '../lib/errors.ts';
import { isValidBlurhash } from '../lib/blurhash.ts';
import { FfmpegError } from '../lib/ffmpeg.ts';
import { uploadBytes, uploadPath, uploadSize, type Upload } from '../lib/upload.ts';
import { mediaSize, type MediaAttachmentRow, type MediaMeta, type MediaType } from '../serializers/media-attachment.ts';
import { mediaStorage, type MediaStorage } from './media-storage.ts';
import { avKindOf, blurhashOf, canonicalMime, makeWorkDir, probeAv, transcodeAv, UNVERIFIED_FILE, type AvKind, type ProcessedAv } from './media-av.ts';
import { findOwnMedia, findUnattachedMedia } from './reads/media.ts';

sharp.cache(false);

/** The job that processes a queued upload (`uploadMediaAsync`; payload { mediaId }). */
export const MEDIA_PROCESS_JOB = 'media.process';
/** Its lane: as many runners as media.transcodeConcurrency, so transcodes never hold the lane of other work. */
export const MEDIA_QUEUE = 'media';

/** Mastodon's answers for what it cannot take. */
export const INVALID_FILE = 'Validation failed: File content type is invalid, File is invalid';
export { UNVERIFIED_FILE };
export const PROCESSING_ERROR = 'Error processing thumbnail for uploaded media';

/** Output format per accepted input type (AVIF becomes JPEG, as Mastodon converts HEIC/AVIF). */
const FORMATS: Record<string, { ext: 'jpg' | 'png' | 'gif' | 'webp'; type: string }> = {
  'image/jpeg': { ext: 'jpg', type: 'image/jpeg' },
  'image/png': { ext: 'png', type: 'image/png' },
  'image/gif': { ext: 'gif', type: 'image/gif' },
  'image/webp': { ext: 'webp', type: 'image/webp' },
  'image/avif': { ext: 'jpg', type: 'image/jpeg' },
};

export interface MediaUpload {
  /** The file (undefined: none sent); read only once its size passed. */
  file?: Upload;
  description?: string;
  /** "x,y", each -1…1. */
  focus?: string;
}

/** A local file (in a work directory) to store. */
interface WorkFile {
  path: string;
  size: number;
}

export interface ProcessedMedia {
  type: MediaType;
  contentType: string;
  ext: string;
  original: Buffer | WorkFile;
  /** The preview (none for audio); `smallExt` when its format differs from the original's. */
  small: Buffer | WorkFile | null;
  smallExt?: string;
  meta: MediaMeta;
  blurhash: string | null;
}

function fromAv(p: ProcessedAv): ProcessedMedia {
  return { type: p.type, contentType: p.contentType, ext: p.ext, original: p.original, small: p.small, smallExt: p.small?.ext, meta: p.meta, blurhash: p.blurhash };
}

function sizeOf(b: Buffer | WorkFile): number {
  return Buffer.isBuffer(b) ? b.length : b.size;
}

function mb(bytes: number): number {
  return Math.round(bytes / 1024 / 1024);
}

/** What an upload is, from its bytes: an image or video or audio of a type Roost takes, within its size limit; else Mastodon's 422. */
async function classifyUpload(services: Services, upload: Upload | undefined): Promise<{ kind: 'image' | AvKind; mime: string }> {
  const limits = services.config.limits.mediaAttachments;
  if (!upload || uploadSize(upload) === 0) throw new RoostError(422, "Validation failed: File can't be blank");
  const size = uploadSize(upload);
  const largest = Math.max(limits.imageSizeLimit, limits.videoSizeLimit);
  if (size > largest) throw new RoostError(422, `Validation failed: File file size must be less than ${mb(largest)} MB`);
  const file = uploadPath(upload);
  // Only the head is read to tell the type (the whole file when it came in memory anyway).
  const sniffed = await (file ? fileTypeFromFile(file) : fileTypeFromBuffer(await uploadBytes(upload))).catch(() => undefined);
  const mime = canonicalMime(sniffed?.mime);
  if (!mime || !limits.supportedMimeTypes.includes(mime)) throw new RoostError(422, INVALID_FILE);
  if (FORMATS[mime]) {
    if (size > limits.imageSizeLimit) throw new RoostError(422, `Validation failed: File file size must be less than ${mb(limits.imageSizeLimit)} MB`);
    return { kind: 'image', mime };
  }
  const kind = avKindOf(mime);
  if (!kind) throw new RoostError(422, INVALID_FILE);
  if (size > limits.videoSizeLimit) throw new RoostError(422, `Validation failed: File file size must be less than ${mb(limits.videoSizeLimit)} MB`);
  return { kind, mime };
}

/** An image upload's header: refused with Mastodon's 422 when it does not read or is too large. */
async function checkImage(services: Services, upload: Upload, mime: string): Promise<{ data: Uint8Array; mime: string; width: number; height: number; pages: number; orientation: number }> {
  const data = await uploadBytes(upload);
  let meta: Metadata;
  try {
    meta = await sharp(data, { limitInputPixels: false, animated: true }).metadata();
  } catch {
    throw new RoostError(422, UNVERIFIED_FILE);
  }
  const width = meta.width ?? 0;
  const height = meta.pageHeight ?? meta.height ?? 0;
  const pages = meta.pages ?? 1;
  if (!width || !height) throw new RoostError(422, UNVERIFIED_FILE);
  // Every frame of an animation is decoded: the bound is on all of them.
  if (width * height * pages > maxPixels(services)) throw new RoostError(422, `${width}x${height} images are not supported`);
  return { data, mime, width, height, pages, orientation: meta.orientation ?? 1 };
}

function maxPixels(services: Services): number {
  return Math.min(services.config.limits.mediaAttachments.imageMatrixLimit, services.config.bodyLimits.maxImagePixels);
}

/** Width and height scaled down to at most `pixels` (never up), keeping the aspect. */
function fitPixels(width: number, height: number, pixels: number): { width: number; height: number } {
  if (width * height <= pixels) return { width, height };
  const scale = Math.sqrt(pixels / (width * height));
  return { width: Math.max(1, Math.floor(width * scale)), height: Math.max(1, Math.floor(height * scale)) };
}

function encodeAs(pipeline: Sharp, ext: string): Sharp {
  switch (ext) {
    case 'png': return pipeline.png({ compressionLevel: 9 });
    case 'gif': return pipeline.gif();
    case 'webp': return pipeline.webp({ quality: 90 });
    default: return pipeline.jpeg({ quality: 90, mozjpeg: true });
  }
}

/** Decodes, orients, bounds and re-encodes an image; makes its preview, sizes and blurhash. Throws a 422 RoostError for what it cannot take (a video or audio too). */
export async function processImage(services: Services, upload: Upload): Promise<ProcessedMedia> {
  const limits = services.config.limits.mediaAttachments;
  const kind = await classifyUpload(services, upload);
  if (kind.kind !== 'image') throw new RoostError(422, INVALID_FILE);
  const head = await checkImage(services, upload, kind.mime);
  const data = head.data;
  const format = FORMATS[head.mime]!;
  const animated = head.pages > 1;
  const input = () => sharp(data, { limitInputPixels: maxPixels(services), animated });
  try {
    // The sizes of the picture as seen: EXIF orientations 5–8 turn it a quarter.
    const [w, h] = head.orientation >= 5 ? [head.height, head.width] : [head.width, head.height];
    const originalSize = fitPixels(w, h, limits.originalMaxPixels);
    const smallSize = fitPixels(w, h, limits.smallMaxPixels);
    const original = await encodeAs(input().rotate().resize(originalSize.width, originalSize.height, { fit: 'fill' }), format.ext).toBuffer({ resolveWithObject: true });
    const small = await encodeAs(input().rotate().resize(smallSize.width, smallSize.height, { fit: 'fill' }), format.ext).toBuffer({ resolveWithObject: true });
    const blurhash = await blurhashOf(services, small.data);
    const heightOf = (info: OutputInfo) => (animated ? (info.pageHeight ?? Math.round(info.height / head.pages)) : info.height);
    return {
      type: 'image',
      contentType: format.type,
      ext: format.ext,
      original: original.data,
      small: small.data,
      meta: { original: mediaSize(original.info.width, heightOf(original.info)), small: mediaSize(small.info.width, heightOf(small.info)) },
      blurhash,
    };
  } catch (err) {
    if (err instanceof RoostError) throw err;
    const message = (err as Error).message ?? '';
    if (/pixel limit/i.test(message)) throw new RoostError(422, `${head.width}x${head.height} images are not supported`);
    throw new RoostError(422, UNVERIFIED_FILE);
  }
}

/** The upload as a local file ffmpeg can read: its temporary file, else its bytes written into `workDir`. */
async function inputFile(upload: Upload, workDir: string): Promise<string> {
  const file = uploadPath(upload);
  if (file) return file;
  const written = path.join(workDir, 'input');
  await writeFile(written, await uploadBytes(upload));
  return written;
}

/**
 * Probes and transcodes a video or audio upload (`input`, a local file) in `workDir`, and stores
 * the results for attachment `id`; Mastodon's 422 for what cannot be processed (an ffmpeg that
 * failed on it, timed out, or cannot run: logged).
 */
async function processAndStoreAv(services: Services, id: string, input: string, kind: AvKind, workDir: string, opts: { gifv?: boolean } = {}): Promise<{ processed: ProcessedMedia; keys: StoredKeys }> {
  const probe = await probeAv(services, input, kind, opts).catch((e) => rethrowAv(services, id, e));
  const processed = fromAv(await transcodeAv(services, input, probe, workDir, opts).catch((e) => rethrowAv(services, id, e)));
  return { processed, keys: await storeProcessed(mediaStorage(services), id, processed) };
}

/** An ffmpeg failure as Mastodon's 422 (its processing error), logged. */
function rethrowAv(services: Services, mediaId: string, e: unknown): never {
  if (e instanceof RoostError) throw e;
  if (e instanceof FfmpegError) {
    const log = services.log.child({ module: 'media' });
    if (e.reason === 'unavailable') log.error({ mediaId, err: e.message }, 'ffmpeg cannot run: video and audio uploads fail (set ROOST_FFMPEG_PATH / ROOST_FFPROBE_PATH)');
    else log.info({ mediaId, reason: e.reason, err: e.message }, 'video or audio upload could not be processed');
    throw new RoostError(422, PROCESSING_ERROR);
  }
  throw e;
}

/** Description and focal point, checked as Mastodon words its errors (also for an edit's media_attributes). */
export function checkAttributes(services: Services, input: { description?: string; focus?: string }): { description?: string | null; focus?: { x: number; y: number } | null } {
  const limit = services.config.limits.mediaAttachments.descriptionLimit;
  const v = new Validation();
  const out: { description?: string | null; focus?: { x: number; y: number } | null } = {};
  if (input.description !== undefined) {
    const d = input.description.replace(/\r\n?/g, '\n');
    if ([...d].length > limit) v.add('description', 'ERR_TOO_LONG', `is too long (maximum is ${limit} characters)`);
    out.description = d.trim() === '' ? null : d;
  }
  if (input.focus !== undefined && input.focus.trim() !== '') {
    const parts = input.focus.split(',').map((p) => p.trim());
    const nums = parts.map((p) => (/^[-+]?(\d+(\.\d*)?|\.\d+)$/.test(p) ? Number(p) : NaN));
    if (nums.length !== 2 || nums.some((n) => !Number.isFinite(n) || n < -1 || n > 1)) {
      v.add('focus', 'ERR_INVALID', 'must be two numbers from -1.0 to 1.0, "x,y"');
    } else out.focus = { x: nums[0]!, y: nums[1]! };
  }
  v.throwIfInvalid();
  return out;
}

/** Storage keys as Mastodon lays them out: media_attachments/files/<id in groups of 3>/<style>/<random>.<ext>. */
function fileKeys(id: string, ext: string, smallExt = ext): StoredKeys {
  const partition = id.padStart(9, '0').match(/\d{1,3}(?=(\d{3})*$)/g)!.join('/');
  const name = randomBytes(8).toString('hex');
  return { original: `media_attachments/files/${partition}/original/${name}.${ext}`, small: `media_attachments/files/${partition}/small/${name}.${smallExt}` };
}

interface StoredKeys {
  original: string;
  /** null: no preview (audio). */
  small: string | null;
}

/** Where an upload waits for its job (not served: no extension). */
function pendingKey(id: string): string {
  return `media_attachments/pending/${id}`;
}

async function putEither(storage: MediaStorage, key: string, data: Buffer | WorkFile): Promise<void> {
  if (Buffer.isBuffer(data)) await storage.put(key, data);
  else await storage.putFile(key, data.path);
}

async function storeProcessed(storage: MediaStorage, id: string, p: ProcessedMedia): Promise<StoredKeys> {
  const keys = fileKeys(id, p.ext, p.smallExt);
  await putEither(storage, keys.original, p.original);
  if (!p.small) return { original: keys.original, small: null };
  try {
    await putEither(storage, keys.small!, p.small);
  } catch (e) {
    await storage.delete(keys.original).catch(() => undefined);
    throw e;
  }
  return keys;
}

async function removeFiles(storage: MediaStorage, keys: (string | null)[]): Promise<void> {
  for (const key of keys) if (key) await storage.delete(key).catch(() => undefined);
}

/** Inserts a processed attachment (processing complete); its files go if the row cannot be written. */
async function insertProcessed(services: Services, id: string, accountId: string, p: ProcessedMedia, keys: StoredKeys, attrs: ReturnType<typeof checkAttributes>): Promise<void> {
  const now = services.clock.now();
  try {
    await services.db.sql.query(
      `insert into media_attachments (id, account_id, type, processing, file_key, small_key, content_type, file_size, description,
                                      focus_x, focus_y, meta, blurhash, created_at, updated_at)
       values ($1, $2, $3, 'complete', $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $13)`,
      [id, accountId, p.type, keys.original, keys.small, p.contentType, sizeOf(p.original), attrs.description ?? null,
        attrs.focus?.x ?? null, attrs.focus?.y ?? null, JSON.stringify(p.meta), p.blurhash, now],
    );
  } catch (e) {
    await removeFiles(mediaStorage(services), [keys.original, keys.small]);
    throw e;
  }
}

/**
 * POST /api/v1/media (and v2 for an image): processes the upload, then stores the attachment
 * (processing complete). A video or audio is transcoded here too, as Mastodon's v1 does (the
 * request waits for an ffmpeg slot). Returns its id.
 */
export async function uploadMedia(services: Services, accountId: string, input: MediaUpload): Promise<string> {
  const attrs = checkAttributes(services, input);
  const kind = await classifyUpload(services, input.file);
  const id = services.ids.next();
  // An animated GIF becomes a gifv (a silent MP4), in the request as Mastodon's GifTranscoder does.
  const gifv = kind.mime === 'image/gif' && (await checkImage(services, input.file!, kind.mime)).pages > 1;
  if (kind.kind === 'image' && !gifv) {
    const processed = await processImage(services, input.file!);
    const keys = await storeProcessed(mediaStorage(services), id, processed);
    await insertProcessed(services, id, accountId, processed, keys, attrs);
    return id;
  }
  const workDir = await makeWorkDir(services);
  try {
    const file = await inputFile(input.file!, workDir);
    const { processed, keys } = await processAndStoreAv(services, id, file, gifv ? 'video' : (kind.kind as AvKind), workDir, { gifv });
    await insertProcessed(services, id, accountId, processed, keys, attrs);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  return id;
}

/** Whether an upload is video or audio (POST /api/v2/media queues those); throws Mastodon's 422 for what Roost does not take. */
export async function isLargerMedia(services: Services, file: Upload | undefined): Promise<boolean> {
  return (await classifyUpload(services, file)).kind !== 'image';
}

/**
 * The queued upload (POST /api/v2/media for video and audio): checks the upload now (type, size;
 * an image's dimensions; a video's or audio's ffprobe reading and Mastodon's video limits), keeps
 * its bytes and queues the processing (MEDIA_PROCESS_JOB) in the transaction that stores the
 * attachment as `queued`, of its type. Returns its id.
 */
export async function uploadMediaAsync(services: Services, accountId: string, input: MediaUpload): Promise<string> {
  const attrs = checkAttributes(services, input);
  const kind = await classifyUpload(services, input.file);
  const upload = input.file!;
  const id = services.ids.next();
  const storage = mediaStorage(services);
  if (kind.kind === 'image') {
    const { data } = await checkImage(services, upload, kind.mime);
    await storage.put(pendingKey(id), data);
  } else {
    const workDir = await makeWorkDir(services);
    try {
      const file = await inputFile(upload, workDir);
      await probeAv(services, file, kind.kind).catch((e) => rethrowAv(services, id, e));
      await storage.putFile(pendingKey(id), file);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }
  const now = services.clock.now();
  try {
    await services.db.sql.transaction(async (sql) => {
      await sql.query(
        `insert into media_attachments (id, account_id, type, processing, file_size, description, focus_x, focus_y, created_at, updated_at)
         values ($1, $2, $3, 'queued', $4, $5, $6, $7, $8, $8)`,
        [id, accountId, kind.kind, uploadSize(upload), attrs.description ?? null, attrs.focus?.x ?? null, attrs.focus?.y ?? null, now],
      );
      // One account's uploads are processed one at a time (a burst from one account does not hold everyone's).
      await schedule(sql, MEDIA_PROCESS_JOB, { mediaId: id }, { queue: MEDIA_QUEUE, orderingKey: mediaOrderingKey(accountId), maxAttempts: 5, clock: services.clock });
    });
  } catch (e) {
    await removeFiles(storage, [pendingKey(id)]);
    throw e;
  }
  return id;
}

/** The ordering key of an account's processing jobs. */
export function mediaOrderingKey(accountId: string): string {
  return `${MEDIA_PROCESS_JOB}:${accountId}`;
}

/**
 * The job: processes a queued upload. An upload that turns out unprocessable (undecodable, an
 * ffmpeg that fails on it, times out or cannot run) is marked `failed` (GET /api/v1/media/:id
 * then answers 422), not retried; an attachment deleted meanwhile is forgotten, with any file
 * written for it. Work files go whatever the outcome.
 */
export async function processQueuedMedia(services: Services, mediaId: string): Promise<void> {
  const sql = services.db.sql;
  const [row] = await sql.query<{ processing: string; type: MediaType }>(`select processing, type from media_attachments where id = $1`, [mediaId]);
  const storage = mediaStorage(services);
  if (!row || row.processing === 'complete' || row.processing === 'failed') {
    if (!row) await removeFiles(storage, [pendingKey(mediaId)]);
    return;
  }
  await sql.query(`update media_attachments set processing = 'in_progress', updated_at = $2 where id = $1 and processing = 'queued'`, [mediaId, services.clock.now()]);
  let stored: { processed: ProcessedMedia; keys: StoredKeys } | null = null;
  if (row.type === 'video' || row.type === 'audio') {
    const workDir = await makeWorkDir(services);
    try {
      const input = path.join(workDir, 'input');
      if (await storage.copyOut(pendingKey(mediaId), input)) stored = await processAndStoreAv(services, mediaId, input, row.type, workDir);
    } catch (e) {
      if (!(e instanceof RoostError)) throw e;
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  } else {
    const data = await storage.read(pendingKey(mediaId));
    try {
      if (data) {
        const processed = await processImage(services, data);
        stored = { processed, keys: await storeProcessed(storage, mediaId, processed) };
      }
    } catch (e) {
      if (!(e instanceof RoostError)) throw e;
    }
  }
  if (!stored) {
    await sql.query(`update media_attachments set processing = 'failed', updated_at = $2 where id = $1`, [mediaId, services.clock.now()]);
    await removeFiles(storage, [pendingKey(mediaId)]);
    services.log.child({ module: 'media' }).info({ mediaId }, 'upload could not be processed');
    return;
  }
  const { processed, keys } = stored;
  const done = await sql.query(
    `update media_attachments set processing = 'complete', type = $2, file_key = $3, small_key = $4, content_type = $5, file_size = $6,
            meta = $7::jsonb, blurhash = $8, updated_at = $9
      where id = $1 and processing <> 'complete' returning id`,
    [mediaId, processed.type, keys.original, keys.small, processed.contentType, sizeOf(processed.original), JSON.stringify(processed.meta), processed.blurhash, services.clock.now()],
  );
  // Deleted (or done by another run) meanwhile: these files are nobody's.
  if (done.length === 0) await removeFiles(storage, [keys.original, keys.small]);
  await removeFiles(storage, [pendingKey(mediaId)]);
}

/** An unattached attachment of the account's, or 404; one whose processing failed is Mastodon's 422. */
export async function usableMedia(services: Services, accountId: string, id: string): Promise<MediaAttachmentRow> {
  const m = await findUnattachedMedia(services, accountId, id);
  if (!m) throw notFound();
  if (m.processing === 'failed') throw new RoostError(422, PROCESSING_ERROR);
  return m;
}

/** PUT /api/v1/media/:id: description and focal point of an unattached attachment of the account's. */
export async function updateMedia(services: Services, accountId: string, id: string, input: { description?: string; focus?: string }): Promise<void> {
  await usableMedia(services, accountId, id);
  const attrs = checkAttributes(services, input);
  const sets: string[] = [];
  const params: unknown[] = [id, accountId, services.clock.now()];
  if (attrs.description !== undefined) {
    params.push(attrs.description);
    sets.push(`description = $${params.length}`);
  }
  if (attrs.focus !== undefined) {
    params.push(attrs.focus?.x ?? null, attrs.focus?.y ?? null);
    sets.push(`focus_x = $${params.length - 1}, focus_y = $${params.length}`);
  }
  if (sets.length === 0) return;
  await services.db.sql.query(
    `update media_attachments set ${sets.join(', ')}, updated_at = $3 where id = $1 and account_id = $2 and status_id is null`,
    params,
  );
}

/**
 * DELETE /api/v1/media/:id (Mastodon 4.4): an attachment of the account's that no status uses
 * goes, with its files; one a status uses is a 422.
 */
export async function deleteMedia(services: Services, accountId: string, id: string): Promise<void> {
  const removed = await services.db.sql.transaction(async (sql) => {
    const m = await findOwnMedia(sql, accountId, id, { forUpdate: true });
    if (!m) throw notFound();
    if (m.statusId !== null) throw new RoostError(422, 'Media attachment is currently used by a status');
    await sql.query(`delete from media_attachments where id = $1`, [id]);
    return m;
  });
  await removeFiles(mediaStorage(services), [removed.fileKey, removed.smallKey, pendingKey(removed.id)]);
}

/**
 * The attachments a new status of `accountId` names, checked as Mastodon's PostStatusService
 * does (messages as its): at most `max` ids; each the author's, not attached yet (else "Media …
 * not found or already attached to another post"); and processed. Locks them; returns them in
 * the order given (a repeated id counts once). Attachments reserved by a scheduled status are
 * taken only by that one's publication (`reservedFor`).
 */
export async function mediaForNewStatus(sql: Sql, accountId: string, ids: readonly string[], max: number, reservedFor: string | null = null): Promise<string[]> {
  if (ids.length === 0) return [];
  if (ids.length > max) throw new RoostError(422, `Cannot attach more than ${max} files`);
  const wanted = [...new Set(ids.map((id) => id.trim()))];
  const numeric = wanted.filter((id) => /^\d{1,19}$/.test(id) && BigInt(id) <= 9223372036854775807n);
  // Attachments a scheduled status reserved are not free, except for that status' publication.
  const rows = await sql.query<{ id: string; processing: string; type: string }>(
    `select id::text, processing, type from media_attachments
      where id = any($1::bigint[]) and account_id = $2 and status_id is null
        and (scheduled_status_id is null or scheduled_status_id = $3::bigint) for update`,
    [numeric, accountId, reservedFor],
  );
  const found = new Map(rows.map((r) => [r.id, r]));
  const missing = wanted.filter((id) => !found.has(id));
  if (missing.length) throw new RoostError(422, `Media ${missing.join(', ')} not found or already attached to another post`);
  if (rows.length > 1 && rows.some((r) => r.type === 'video' || r.type === 'audio')) {
    throw new RoostError(422, 'Cannot attach a video to a post that already contains images');
  }
  if (rows.some((r) => r.processing !== 'complete')) throw new RoostError(422, 'Cannot attach files that have not finished processing. Try again in a moment!');
  return wanted;
}

/** Attaches checked attachments (mediaForNewStatus) to a status, in order, in the caller's transaction. */
export async function attachMedia(sql: Sql, statusId: string, mediaIds: readonly string[], now: Date): Promise<void> {
  if (mediaIds.length === 0) return;
  await sql.query(
    `update media_attachments m set status_id = $1, position = x.position, scheduled_status_id = null, updated_at = $3
       from unnest($2::bigint[]) with ordinality as x(id, position) where m.id = x.id`,
    [statusId, mediaIds, now],
  );
}

/**
 * A deleted status lets go of its attachments, in the caller's transaction. As Mastodon: they
 * stay, unattached, so "delete and redraft" can post them again (DELETE answered them in
 * `media_attachments`); with `deleteMedia` (Mastodon's `delete_media`) the rows go, and the
 * storage keys to remove after commit are returned.
 */
export async function releaseStatusMedia(sql: Sql, statusId: string, opts: { deleteMedia?: boolean; now: Date }): Promise<string[]> {
  if (opts.deleteMedia) {
    const rows = await sql.query<{ id: string; file_key: string | null; small_key: string | null }>(
      `delete from media_attachments where status_id = $1 returning id::text, file_key, small_key`,
      [statusId],
    );
    return rows.flatMap((r) => [r.file_key, r.small_key].filter((k): k is string => !!k));
  }
  await sql.query(`update media_attachments set status_id = null, position = null, updated_at = $2 where status_id = $1`, [statusId, opts.now]);
  return [];
}

/** Removes stored files by key (after a commit that dropped their rows); failures are logged, not thrown. */
export async function removeStoredFiles(services: Services, keys: readonly string[]): Promise<void> {
  await removeFiles(mediaStorage(services), [...keys]);
}

// --- remote media ---------------------------------------------------------------------------

/** One attachment of a remote Note, as federation reads it (ActivityPub Document/Image…). */
export interface RemoteMediaItem {
  url: string;
  mediaType?: string | null;
  /** The description (`name`). */
  name?: string | null;
  blurhash?: string | null;
  width?: number | null;
  height?: number | null;
  /** Mastodon's `focalPoint` [x, y]. */
  focalPoint?: readonly [number, number] | readonly number[] | null;
}

/** The type Mastodon gives a remote attachment from its media type. */
function remoteType(mediaType: string | null | undefined): MediaType {
  const t = (mediaType ?? '').toLowerCase();
  if (t.startsWith('image/')) return 'image';
  if (t.startsWith('video/')) return 'video';
  if (t.startsWith('audio/')) return 'audio';
  return 'unknown';
}

/**
 * A blurhash from another server, kept only when well formed with at most `max` components per
 * axis (the size flag's X = flag % 9 + 1 and Y = ⌊flag / 9⌋ + 1; Mastodon accepts 5×5 at most)
 * and when the `blurhash` package validates and decodes it (on a 4×4 canvas: cheap).
 */
export function acceptedRemoteBlurhash(hash: unknown, max: number): string | null {
  if (typeof hash !== 'string' || !isValidBlurhash(hash, max) || !isBlurhashValid(hash).result) return null;
  try {
    const pixels = decodeBlurhash(hash, 4, 4);
    if (pixels.length !== 64) return null;
  } catch {
    return null;
  }
  return hash;
}

/**
 * Stores the attachments of a remote status (federation calls this in the transaction that
 * stores the status). Nothing is fetched: the rows keep `remote_url` and are shown at it until
 * Roost fetches media itself. Only http(s) URLs; at most config.limits.statuses.maxMediaAttachments,
 * in the order given; descriptions cut to the description limit; sizes and the focal point kept
 * when sane; the blurhash only within config.limits.mediaAttachments.maxRemoteBlurhashComponents.
 * Returns the new attachments' ids in order.
 */
export async function persistRemoteMedia(
  sql: Sql,
  services: Services,
  statusId: string,
  accountId: string,
  items: readonly RemoteMediaItem[],
): Promise<string[]> {
  const limits = services.config.limits;
  const now = services.clock.now();
  const rows: unknown[][] = [];
  for (const item of items) {
    if (rows.length >= limits.statuses.maxMediaAttachments) break;
    let url: URL;
    try {
      url = new URL(item.url);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    const w = Number(item.width);
    const h = Number(item.height);
    const sized = Number.isInteger(w) && Number.isInteger(h) && w > 0 && h > 0 && w <= 100_000 && h <= 100_000;
    const fp = item.focalPoint;
    const focus = Array.isArray(fp) && fp.length === 2 && fp.every((n) => typeof n === 'number' && Number.isFinite(n) && n >= -1 && n <= 1) ? fp : null;
    const description = typeof item.name === 'string' && item.name.trim() ? [...item.name].slice(0, limits.mediaAttachments.descriptionLimit).join('') : null;
    rows.push([
      services.ids.next(), rows.length + 1, remoteType(item.mediaType), url.href, description,
      focus ? focus[0] : null, focus ? focus[1] : null,
      sized ? JSON.stringify({ original: mediaSize(w, h) }) : null,
      acceptedRemoteBlurhash(item.blurhash, limits.mediaAttachments.maxRemoteBlurhashComponents),
    ]);
  }
  if (rows.length === 0) return [];
  const col = (i: number) => rows.map((r) => r[i]);
  await sql.query(
    `insert into media_attachments (id, account_id, status_id, position, type, processing, remote_url, description, focus_x, focus_y, meta, blurhash, created_at, updated_at)
     select x.id, $1, $2, x.position, x.type, 'complete', x.url, x.description, x.fx, x.fy, x.meta::jsonb, x.blurhash, $3, $3
       from unnest($4::bigint[], $5::int[], $6::text[], $7::text[], $8::text[], $9::real[], $10::real[], $11::text[], $12::text[])
         as x(id, position, type, url, description, fx, fy, meta, blurhash)`,
    [accountId, statusId, now, col(0), col(1), col(2), col(3), col(4), col(5), col(6), col(7), col(8)],
  );
  return rows.map((r) => r[0] as string);
}
