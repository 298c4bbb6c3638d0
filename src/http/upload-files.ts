// The temporary files of one request's multipart uploads: each file part is written to its own
// file under the server's upload directory as it arrives (MultipartParser's sink), with
// backpressure (`onPressure` pauses the upload while the disk is behind), and every file goes once
// the exchange ends, whatever way it ends (answered, failed, aborted, timed out).

import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FilePartInfo, FileSink, UploadedFile } from './multipart.ts';

/** Bytes a file's write queue may hold before the upload is paused. */
const HIGH_WATER = 256 * 1024;

export class UploadFiles {
  readonly dir: string;
  readonly #streams: WriteStream[] = [];
  readonly #paths: string[] = [];
  #waiting = 0;
  #error: Error | null = null;
  #removed = false;
  /** Called with true when a write queue is full (pause the upload), false when all drained. */
  readonly #onPressure: (full: boolean) => void;

  constructor(dir: string, onPressure: (full: boolean) => void) {
    this.dir = dir;
    this.#onPressure = onPressure;
  }

  /** A sink for one file part (MultipartParser's openFile). */
  open = (info: FilePartInfo): FileSink => {
    const file = path.join(this.dir, `upload-${process.pid}-${randomBytes(12).toString('hex')}`);
    this.#paths.push(file);
    const stream = createWriteStream(file, { flags: 'wx', mode: 0o600, highWaterMark: HIGH_WATER });
    this.#streams.push(stream);
    // Whether this file's writes are behind (the upload paused for it); released by 'drain', and
    // by the part's end: an ended stream emits no 'drain', and the rest of the body (the closing
    // delimiter) must still arrive.
    let behind = false;
    const release = () => {
      if (!behind) return;
      behind = false;
      if (--this.#waiting === 0) this.#onPressure(false);
    };
    stream.on('error', (err) => {
      this.#error ??= err;
      // (no drain comes after an error: let the body arrive, written() reports the error)
      release();
    });
    return {
      write: (chunk) => {
        if (this.#removed || stream.destroyed) return;
        if (!stream.write(chunk) && !behind) {
          behind = true;
          if (this.#waiting++ === 0) this.#onPressure(true);
          stream.once('drain', release);
        }
      },
      finish: (size): UploadedFile => {
        stream.end();
        release();
        return { ...info, size, path: file, bytes: () => readFile(file) };
      },
    };
  };

  /** Resolves once every file is written whole; rejects with the first write error. */
  async written(): Promise<void> {
    await Promise.all(
      this.#streams.map(
        (s) =>
          new Promise<void>((resolve, reject) => {
            if (s.closed) return this.#error ? reject(this.#error) : resolve();
            s.once('close', () => (this.#error ? reject(this.#error) : resolve()));
            s.end();
          }),
      ),
    );
    if (this.#error) throw this.#error;
  }

  /** Remove every file (idempotent; errors are ignored). */
  remove(): void {
    if (this.#removed) return;
    this.#removed = true;
    this.#streams.forEach((s, i) => {
      const file = this.#paths[i];
      const go = () => void rm(file, { force: true }).catch(() => {});
      // (after the close: a stream still opening would create the file after an early rm)
      if (s.closed) go();
      else {
        s.once('close', go);
        s.destroy();
      }
    });
  }
}

/**
 * Make the upload directory, and remove what a process that died mid-upload left in it (files
 * older than an hour: another process sharing the directory may be writing newer ones).
 */
export async function prepareUploadDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const cutoff = Date.now() - 3600_000;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith('upload-')) continue;
    const file = path.join(dir, name);
    const st = await stat(file).catch(() => null);
    if (st && st.mtimeMs < cutoff) await rm(file, { force: true }).catch(() => {});
  }
}
