/**
 * Video and audio uploads, as Mastodon 4.3 processes them (its MediaAttachment styles and
 * Paperclip transcoder), through ffmpeg and ffprobe (src/lib/ffmpeg.ts: bounded in concurrency,
 * time and memory):
 *
 * - probed first (ffprobe): a file ffprobe cannot read, or with neither a video nor an audio
 *   stream, is Mastodon's 422 "could not be verified"; a video over the pixel limit (3840×2160)
 *   or the frame-rate limit (120 fps) is refused with Mastodon's words. A "video" container that
 *   holds only audio (or audio and a cover picture) is an audio upload;
 * - video becomes H.264 + AAC (192 kb/s) in MP4, yuv420p, dimensions cropped to even numbers,
 *   the moov atom first (faststart), metadata dropped, at most 36,000 frames, x264's `veryfast`
 *   preset; a file already H.264/yuv420p with AAC or no audio is copied into MP4, not re-encoded
 *   (Mastodon's passthrough). Its `small` is a PNG of the first frame within 640×640, whose 4×4
 *   blurhash is the attachment's;
 * - an animated GIF becomes a silent H.264 MP4 of type `gifv` (Mastodon's GifTranscoder), in the
 *   request as for any image;
 * - audio becomes MP3 (LAME VBR quality 2), metadata and pictures dropped; no preview;
 * - `meta.original` is read from the output as Mastodon's VideoMetadataExtractor reads it:
 *   width, height, frame_rate ("30/1"), duration (seconds), bitrate (bits/s); audio: duration
 *   and bitrate.
 *
 * Work files live in a directory of their own under DATA_DIR/tmp/media, removed when the
 * processing ends, whatever way it ends; one left by a Roost that was killed goes at the next
 * start (sweepMediaWorkDirs).
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { encode as encodeBlurhash } from 'blurhash';
import type { Services } from '../context.ts';
import { RoostError } from '../lib/errors.ts';
import { Ffmpeg, FfmpegError } from '../lib/ffmpeg.ts';
import { mediaSize, type MediaMeta } from '../serializers/media-attachment.ts';

export type AvKind = 'video' | 'audio';

/** Mastodon's answer for a file it cannot read. */
export const UNVERIFIED_FILE = 'File type of uploaded media could not be verified';

/** Mastodon's MAX_VIDEO_FRAMES: about 5 minutes at 120 fps. */
export const MAX_VIDEO_FRAMES = 36_000;

/** Mastodon's vfr_frame_rate_threshold (its MAX_VIDEO_FRAME_RATE): a base rate above it keeps variable timing. */
const VFR_FRAME_RATE_THRESHOLD = 120;

/** What `file-type` calls some types, as Mastodon's list names them. */
const ALIASES: Record<string, string> = {
  'audio/x-flac': 'audio/flac',
  'audio/opus': 'audio/ogg',
  'audio/x-wav': 'audio/wav',
  'video/x-m4v': 'video/mp4',
  'application/vnd.ms-asf': 'video/x-ms-asf',
};

/** A sniffed type as Mastodon's list names it (parameters dropped). */
export function canonicalMime(mime: string | undefined): string | undefined {
  if (!mime) return undefined;
  const bare = mime.split(';')[0]!.trim().toLowerCase();
  return ALIASES[bare] ?? bare;
}

/** Whether an accepted type is video or audio (Mastodon counts ASF, its WMA, as audio); null: an image or unknown. */
export function avKindOf(mime: string): AvKind | null {
  if (mime === 'video/x-ms-asf') return 'audio';
  if (mime.startsWith('video/')) return 'video';
  if (mime.startsWith('audio/')) return 'audio';
  return null;
}

const runners = new WeakMap<Services, Ffmpeg>();

/** The instance's ffmpeg (its slots are per Roost: every upload of this instance shares them). */
export function ffmpegOf(services: Services): Ffmpeg {
  let f = runners.get(services);
  if (!f) {
    const m = services.config.media;
    f = new Ffmpeg({
      ffmpegPath: m.ffmpegPath,
      ffprobePath: m.ffprobePath,
      concurrency: m.transcodeConcurrency,
      timeoutMs: m.transcodeTimeoutSeconds * 1000,
      memoryBytes: m.transcodeMemoryMb * 1024 * 1024,
    });
    runners.set(services, f);
  }
  return f;
}

/** What ffprobe says of an upload, as far as processing needs it. */
export interface AvProbe {
  kind: AvKind;
  width: number | null;
  height: number | null;
  /** avg_frame_rate as ffprobe prints it ("30/1"). */
  frameRate: string | null;
  fps: number | null;
  /** r_frame_rate (the base rate: above the limit, the output keeps variable timing). */
  baseFps: number | null;
  duration: number | null;
  bitrate: number | null;
  videoCodec: string | null;
  audioCodec: string | null;
  pixFmt: string | null;
}

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  pix_fmt?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  disposition?: { attached_pic?: number };
}

function rate(text: string | undefined): number | null {
  if (!text) return null;
  const [n, d] = text.split('/').map(Number);
  if (!Number.isFinite(n) || !(d === undefined || Number.isFinite(d))) return null;
  const v = d === undefined ? n! : d === 0 ? NaN : n! / d;
  return Number.isFinite(v) && v > 0 ? v : null;
}

function num(text: unknown): number | null {
  const v = Number(text);
  return text !== undefined && text !== null && text !== '' && Number.isFinite(v) ? v : null;
}

/** ffprobe's JSON read as an AvProbe; null when it has no stream Roost can use. */
export function readProbe(json: unknown, sniffed: AvKind): AvProbe | null {
  const j = (json ?? {}) as { streams?: ProbeStream[]; format?: { duration?: string; bit_rate?: string } };
  const streams = Array.isArray(j.streams) ? j.streams : [];
  // A cover picture (an MP3's or M4A's attached picture) is not a video stream.
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic && (s.width ?? 0) > 0 && (s.height ?? 0) > 0);
  const audio = streams.find((s) => s.codec_type === 'audio');
  const kind: AvKind | null = sniffed === 'video' && video ? 'video' : audio ? 'audio' : null;
  if (!kind) return null;
  const v = kind === 'video' ? video! : null;
  return {
    kind,
    width: v?.width ?? null,
    height: v?.height ?? null,
    frameRate: v?.avg_frame_rate && rate(v.avg_frame_rate) ? v.avg_frame_rate : (v?.r_frame_rate ?? null),
    fps: v ? (rate(v.avg_frame_rate) ?? rate(v.r_frame_rate)) : null,
    baseFps: v ? rate(v.r_frame_rate) : null,
    duration: num(j.format?.duration),
    bitrate: num(j.format?.bit_rate),
    videoCodec: v?.codec_name ?? null,
    audioCodec: audio?.codec_name ?? null,
    pixFmt: v?.pix_fmt ?? null,
  };
}

/**
 * Probes an upload whose bytes say `sniffed`, and checks it against Mastodon's video limits;
 * throws Mastodon's 422 for what it cannot take. An ffmpeg that cannot run is an error (logged), not the file's fault.
 */
export async function probeAv(services: Services, file: string, sniffed: AvKind, opts: { gifv?: boolean } = {}): Promise<AvProbe> {
  let json: unknown;
  try {
    json = await ffmpegOf(services).probe(file);
  } catch (e) {
    if (e instanceof FfmpegError && e.reason === 'unavailable') throw e;
    throw new RoostError(422, UNVERIFIED_FILE);
  }
  const p = readProbe(json, sniffed);
  if (!p) throw new RoostError(422, UNVERIFIED_FILE);
  // (a GIF was checked as an image, its pixel bound included; Mastodon checks video limits on video only)
  if (p.kind === 'video' && !opts.gifv) {
    const limits = services.config.limits.mediaAttachments;
    if (p.width! * p.height! > limits.videoMatrixLimit) throw new RoostError(422, `${p.width}x${p.height} videos are not supported`);
    if (p.fps !== null && Math.floor(p.fps) > limits.videoFrameRateLimit) throw new RoostError(422, `${Math.floor(p.fps)}fps videos are not supported`);
  }
  return p;
}

/** Whether Mastodon would copy the streams instead of encoding them (VIDEO_PASSTHROUGH_OPTIONS). */
export function passthrough(p: AvProbe): boolean {
  return p.kind === 'video' && p.videoCodec === 'h264' && p.pixFmt === 'yuv420p' && (p.audioCodec === null || p.audioCodec === 'aac');
}

/** The ffmpeg arguments (after the common -nostdin/-loglevel ones) that turn `input` into `output`. */
export function transcodeArgs(p: AvProbe, input: string, output: string, gifv = false): string[] {
  if (p.kind === 'audio') {
    return ['-i', input, '-map', '0:a:0', '-vn', '-sn', '-dn', '-map_metadata', '-1', '-c:a', 'libmp3lame', '-q:a', '2', '-f', 'mp3', '-y', output];
  }
  // (an animated GIF has no sound, and Mastodon's gifv is silent)
  const streams = gifv ? ['-map', '0:v:0', '-an', '-sn', '-dn', '-map_metadata', '-1'] : ['-map', '0:v:0', '-map', '0:a:0?', '-sn', '-dn', '-map_metadata', '-1'];
  if (!gifv && passthrough(p)) return ['-i', input, ...streams, '-c:v', 'copy', '-c:a', 'copy', '-movflags', '+faststart', '-f', 'mp4', '-y', output];
  return [
    '-i', input, ...streams,
    '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-vf', 'crop=floor(iw/2)*2:floor(ih/2)*2',
    ...(p.baseFps !== null && p.baseFps > VFR_FRAME_RATE_THRESHOLD ? ['-vsync', 'vfr'] : []),
    ...(gifv ? [] : ['-c:a', 'aac', '-b:a', '192k']),
    '-frames:v', String(MAX_VIDEO_FRAMES), '-movflags', '+faststart', '-f', 'mp4', '-y', output,
  ];
}

/** The first frame of a video as a PNG within 640×640 (Mastodon's small style for video). */
export function thumbnailArgs(input: string, output: string): string[] {
  return ['-i', input, '-map', '0:v:0', '-frames:v', '1', '-vf', "scale='min(640,iw)':'min(640,ih)':force_original_aspect_ratio=decrease", '-c:v', 'png', '-f', 'image2', '-y', output];
}

/** A processed video or audio upload: files in the work directory, and what to store of them. */
export interface ProcessedAv {
  type: AvKind | 'gifv';
  contentType: string;
  ext: string;
  original: { path: string; size: number };
  small: { path: string; size: number; ext: string } | null;
  meta: MediaMeta;
  blurhash: string | null;
}

/** A new work directory (removed by the caller: `rm(dir, { recursive: true, force: true })`). */
export async function makeWorkDir(services: Services): Promise<string> {
  const root = path.join(services.config.dataDir, 'tmp', 'media');
  await mkdir(root, { recursive: true, mode: 0o700 });
  return mkdtemp(path.join(root, 'work-'));
}

/** Removes work directories older than an hour (a Roost killed mid-transcode left them). */
export async function sweepMediaWorkDirs(dataDir: string): Promise<void> {
  const root = path.join(dataDir, 'tmp', 'media');
  const cutoff = Date.now() - 3600_000;
  for (const name of await readdir(root).catch(() => [] as string[])) {
    if (!name.startsWith('work-')) continue;
    const dir = path.join(root, name);
    const st = await stat(dir).catch(() => null);
    if (st && st.mtimeMs < cutoff) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** A 4×4 blurhash (the attachment's components) of an image. */
export async function blurhashOf(services: Services, image: Buffer): Promise<string> {
  const c = services.config.limits.mediaAttachments.blurhashComponents;
  const pixels = await sharp(image, { limitInputPixels: false }).resize(32, 32, { fit: 'inside' }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return encodeBlurhash(new Uint8ClampedArray(pixels.data.buffer, pixels.data.byteOffset, pixels.data.byteLength), pixels.info.width, pixels.info.height, c.x, c.y);
}

/**
 * Transcodes a probed upload in `workDir`; throws Mastodon's 422 (PROCESSING_ERROR's words are
 * the caller's) as a RoostError when ffmpeg fails on the file, an FfmpegError when it timed out
 * or could not run.
 */
export async function transcodeAv(services: Services, input: string, p: AvProbe, workDir: string, opts: { gifv?: boolean } = {}): Promise<ProcessedAv> {
  const ff = ffmpegOf(services);
  const output = path.join(workDir, p.kind === 'video' ? 'original.mp4' : 'original.mp3');
  await ff.ffmpeg(transcodeArgs(p, input, output, opts.gifv && p.kind === 'video'));
  const out = readProbe(await ff.probe(output), p.kind);
  if (!out || out.kind !== p.kind) throw new FfmpegError('failed', 'the output has no usable stream');
  const size = (await stat(output)).size;
  const original: Record<string, number | string> = {};
  if (p.kind === 'video') {
    original.width = out.width!;
    original.height = out.height!;
    if (out.frameRate) original.frame_rate = out.frameRate;
  }
  if (out.duration !== null) original.duration = out.duration;
  if (out.bitrate !== null) original.bitrate = Math.round(out.bitrate);
  if (p.kind === 'audio') {
    return { type: 'audio', contentType: 'audio/mpeg', ext: 'mp3', original: { path: output, size }, small: null, meta: { original } as MediaMeta, blurhash: null };
  }
  const thumb = path.join(workDir, 'small.png');
  await ff.ffmpeg(thumbnailArgs(output, thumb));
  const png = await readFile(thumb);
  const info = await sharp(png, { limitInputPixels: false }).metadata();
  return {
    type: opts.gifv ? 'gifv' : 'video',
    contentType: 'video/mp4',
    ext: 'mp4',
    original: { path: output, size },
    small: { path: thumb, size: png.length, ext: 'png' },
    meta: { original, small: mediaSize(info.width!, info.height!) } as MediaMeta,
    blurhash: await blurhashOf(services, png),
  };
}
