/**
 * Where media files live: a small key → bytes interface, so object storage can take the place of
 * the local disk later without touching the media service. Keys are relative paths of lowercase
 * letters, digits, `_`, `-`, `.` and `/` (no `..`), e.g.
 * `media_attachments/files/000/123/456/original/3f6c….png`.
 *
 * The local implementation keeps files under DATA_DIR/media — the directory account images use
 * (services/media-store.ts) — and they are served from there at `/system/<key>` with streaming
 * reads (api/media-files.ts): `publicUrl(key)` is that address.
 */
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readFile, rm, rmdir, stat, writeFile, rename } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Services } from '../context.ts';
import { mediaRoot } from './media-store.ts';

export interface MediaStorage {
  /** Stores bytes under a key (replacing what was there). */
  put(key: string, data: Uint8Array): Promise<void>;
  /** Stores a local file's bytes under a key (the file stays where it is). */
  putFile(key: string, file: string): Promise<void>;
  /** Writes a stored file to a local path; false when there is none. */
  copyOut(key: string, file: string): Promise<boolean>;
  /** The whole file, or null when there is none. */
  read(key: string): Promise<Buffer | null>;
  /** A stream of the file (from byte `start` to `end` inclusive), or null when there is none. */
  stream(key: string, range?: { start: number; end: number }): Promise<ReadableStream<Uint8Array> | null>;
  /** Size of a stored file, or null. */
  size(key: string): Promise<number | null>;
  /** Removes a file (none: nothing). */
  delete(key: string): Promise<void>;
  /** The public URL of a stored file. */
  publicUrl(key: string): string;
  /** The base that `publicUrl` puts before a key (what serializers are given). */
  readonly baseUrl: string;
}

const KEY = /^[a-z0-9_-]+(\/[a-z0-9_.-]+)*$/;

export function isStorageKey(key: string): boolean {
  return KEY.test(key) && !key.split('/').some((part) => part === '..' || part === '.');
}

function checkKey(key: string): void {
  if (!isStorageKey(key)) throw new RangeError(`not a media storage key: ${JSON.stringify(key)}`);
}

/** Files on the local disk under `root`, served at `${baseUrl}<key>`. */
export class LocalDiskStorage implements MediaStorage {
  readonly root: string;
  readonly baseUrl: string;

  constructor(root: string, baseUrl: string) {
    this.root = root;
    this.baseUrl = baseUrl;
  }

  /** The file of a key on disk. */
  pathOf(key: string): string {
    checkKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    // Written aside, then renamed: a reader never sees half a file.
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(tmp, data);
      await rename(tmp, file);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  async putFile(key: string, source: string): Promise<void> {
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await copyFile(source, tmp);
      await rename(tmp, file);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  async copyOut(key: string, dest: string): Promise<boolean> {
    try {
      await copyFile(this.pathOf(key), dest);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw e;
    }
  }

  async read(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.pathOf(key));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async stream(key: string, range?: { start: number; end: number }): Promise<ReadableStream<Uint8Array> | null> {
    const file = this.pathOf(key);
    if ((await this.size(key)) === null) return null;
    return Readable.toWeb(createReadStream(file, range)) as ReadableStream<Uint8Array>;
  }

  async size(key: string): Promise<number | null> {
    const st = await stat(this.pathOf(key)).catch(() => null);
    return st && st.isFile() ? st.size : null;
  }

  async delete(key: string): Promise<void> {
    const file = this.pathOf(key);
    await rm(file, { force: true });
    // Empty directories up to the root go too (a directory still holding files stays).
    let dir = path.dirname(file);
    while (dir.startsWith(`${this.root}${path.sep}`)) {
      const removed = await rmdir(dir).then(() => true, () => false);
      if (!removed) break;
      dir = path.dirname(dir);
    }
  }

  publicUrl(key: string): string {
    checkKey(key);
    return `${this.baseUrl}${key}`;
  }
}

const storages = new WeakMap<Services, MediaStorage>();

/** The instance's media storage (the local disk under DATA_DIR/media, served at /system/). */
export function mediaStorage(services: Services): MediaStorage {
  let s = storages.get(services);
  if (!s) {
    s = new LocalDiskStorage(mediaRoot(services), `${services.config.publicUrl}/system/`);
    storages.set(services, s);
  }
  return s;
}
