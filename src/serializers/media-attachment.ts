/**
 * Mastodon's MediaAttachment entity (entities/MediaAttachment.md), pure: a row and the base URL of
 * the media storage in, JSON out.
 *
 * - `url` is null until the original is processed (a queued upload is answered before that);
 * - a remote attachment Roost has not stored (files are fetched lazily, not yet) is shown at its
 *   remote address: `url` and, for images, `preview_url` are the `remote_url`;
 * - `meta` holds the sizes (`original`, `small`) and the focal point when one was set, as
 *   Mastodon's, or null when there is nothing to say; a video's `original` has its frame rate,
 *   duration and bitrate instead of `size`/`aspect`, an audio's only duration and bitrate;
 * - `text_url` (removed in Mastodon 3.5) and `preview_remote_url` are null.
 */

export type MediaType = 'image' | 'gifv' | 'video' | 'audio' | 'unknown';
export type MediaProcessing = 'queued' | 'in_progress' | 'complete' | 'failed';

export interface MediaSize {
  width: number;
  height: number;
  size: string;
  aspect: number;
}

/** A video's or audio's `meta.original`, as Mastodon reads it from the processed file (audio: duration and bitrate only). */
export interface AvOriginal {
  width?: number;
  height?: number;
  /** "30/1" */
  frame_rate?: string;
  /** Seconds. */
  duration?: number;
  /** Bits per second. */
  bitrate?: number;
}

export interface MediaMeta {
  original?: MediaSize | AvOriginal;
  small?: MediaSize;
}

export interface MediaAttachmentRow {
  id: string;
  accountId: string;
  statusId: string | null;
  type: MediaType;
  processing: MediaProcessing;
  /** Storage key of the processed original (null: not processed, or remote). */
  fileKey: string | null;
  /** Storage key of the small preview. */
  smallKey: string | null;
  description: string | null;
  focus: { x: number; y: number } | null;
  meta: MediaMeta | null;
  blurhash: string | null;
  remoteUrl: string | null;
}

export interface MastodonMediaAttachment {
  id: string;
  type: MediaType;
  url: string | null;
  preview_url: string | null;
  remote_url: string | null;
  preview_remote_url: null;
  text_url: null;
  meta: (MediaMeta & { focus?: { x: number; y: number } }) | null;
  description: string | null;
  blurhash: string | null;
}

/** `{width, height, size, aspect}` as Mastodon's meta gives a size. */
export function mediaSize(width: number, height: number): MediaSize {
  return { width, height, size: `${width}x${height}`, aspect: width / height };
}

/** Mastodon's key order (the database's jsonb keeps its own). */
const META_KEY_ORDER = ['width', 'height', 'size', 'aspect', 'frame_rate', 'duration', 'bitrate'];

function inOrder<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const k of META_KEY_ORDER) if (k in o) out[k] = (o as Record<string, unknown>)[k];
  for (const [k, v] of Object.entries(o)) if (!(k in out)) out[k] = v;
  return out as T;
}

/** The attachment as a client sees it; `filesBaseUrl` is the storage's public base (MediaStorage.baseUrl). */
export function serializeMediaAttachment(m: MediaAttachmentRow, filesBaseUrl: string): MastodonMediaAttachment {
  const stored = (key: string | null) => (key ? `${filesBaseUrl}${key}` : null);
  const processed = m.processing === 'complete';
  let url = processed ? stored(m.fileKey) : null;
  let previewUrl = processed ? stored(m.smallKey) : null;
  if (m.remoteUrl && !m.fileKey) {
    url = m.remoteUrl;
    previewUrl = m.type === 'image' ? m.remoteUrl : null;
  }
  const meta: MastodonMediaAttachment['meta'] = { ...(m.meta?.original ? { original: inOrder(m.meta.original) } : {}), ...(m.meta?.small ? { small: inOrder(m.meta.small) } : {}) };
  if (m.focus) meta.focus = { x: m.focus.x, y: m.focus.y };
  return {
    id: m.id,
    type: m.type,
    url,
    preview_url: previewUrl,
    remote_url: m.remoteUrl,
    preview_remote_url: null,
    text_url: null,
    meta: Object.keys(meta).length ? meta : null,
    description: m.description,
    blurhash: m.blurhash,
  };
}
