// multipart/form-data (RFC 7578) parser, fed the body chunk by chunk as it arrives.
//
// Field values are kept (UTF-8, each bounded by maxFieldBytes); file contents go to a sink as they
// arrive: the server's sinks write temporary files (upload-files.ts), so an upload is never held
// whole in memory; parseMultipart (a whole body at once) keeps them in memory. Boundaries are found
// with Buffer.indexOf, no regex over binary data; only the few bytes that might start a delimiter
// are held back between chunks. Parts with an empty filename (a file input left empty) are
// skipped, as Rack does. Limits on part count, file count and sizes give 413s as soon as they are
// passed; a malformed body gives a 400.

import { HttpError } from './errors.ts';

export interface UploadedFile {
  /** Form field name, as sent (e.g. `file` or `media[]`). */
  field: string;
  /** Base name of the client's file name (any directory part removed). */
  filename: string;
  /** The part's Content-Type, `application/octet-stream` when absent. */
  type: string;
  size: number;
  /** The temporary file holding it (removed once the response is sent), or null when in memory. */
  path: string | null;
  /** Its bytes (read from the temporary file, if any). */
  bytes(): Promise<Uint8Array>;
}

/** Where the contents of one file part go. */
export interface FileSink {
  write(chunk: Buffer): void;
  /** The part is complete: the file as handlers see it. */
  finish(size: number): UploadedFile;
}

export interface FilePartInfo {
  field: string;
  filename: string;
  type: string;
}

/** File parts kept in memory (parseMultipart). */
export function memorySink(info: FilePartInfo): FileSink {
  const chunks: Buffer[] = [];
  return {
    write: (c) => void chunks.push(c),
    finish: (size) => {
      const data = Buffer.concat(chunks, size);
      return { ...info, size, path: null, bytes: async () => data };
    },
  };
}

export interface MultipartLimits {
  /** Most parts (fields + files) in one body. */
  maxParts: number;
  /** Most files in one body. */
  maxFiles: number;
  /** Largest single file. */
  maxFileBytes: number;
  /** Largest non-file field value. */
  maxFieldBytes: number;
}

export const DEFAULT_MULTIPART_LIMITS: MultipartLimits = {
  maxParts: 1000,
  maxFiles: 32,
  maxFileBytes: 100 * 1024 * 1024,
  maxFieldBytes: 1024 * 1024,
};

export interface MultipartResult {
  fields: Array<[string, string]>;
  files: UploadedFile[];
}

const MAX_HEADER_BYTES = 16 * 1024;
const CRLFCRLF = Buffer.from('\r\n\r\n');

/** The boundary parameter of a multipart Content-Type, or null. */
export function multipartBoundary(contentType: string): string | null {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^;,\s]{1,70}))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : null;
}

function bad(message: string): HttpError {
  return new HttpError(400, `Malformed multipart body: ${message}`);
}

function tooLarge(message: string): HttpError {
  return new HttpError(413, message);
}

interface Disposition {
  name: string | null;
  filename: string | null;
}

/** Parse `form-data; name="a"; filename="b.png"; filename*=UTF-8''b%C3%A9.png`. */
function parseDisposition(value: string): Disposition {
  const out: Disposition = { name: null, filename: null };
  let filenameStar: string | null = null;
  const re = /;\s*([a-zA-Z0-9_*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(value)) !== null) {
    const key = m[1].toLowerCase();
    // Browsers send backslashes raw (Windows paths) and %22 for quotes; curl escapes \" and \\.
    const raw = m[2] !== undefined ? m[2].replace(/\\(["\\])/g, '$1') : m[3].trim();
    if (key === 'name') out.name = raw;
    else if (key === 'filename') out.filename = raw;
    else if (key === 'filename*') filenameStar = raw;
  }
  if (filenameStar !== null) {
    const star = /^([\w-]+)'[^']*'(.*)$/.exec(filenameStar);
    if (star) {
      try {
        out.filename = decodeURIComponent(star[2]);
      } catch {
        // keep the plain filename
      }
    }
  }
  return out;
}

function basename(name: string): string {
  const i = Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\'));
  return i === -1 ? name : name.slice(i + 1);
}

const Phase = {
  START: 0,
  AFTER_DELIMITER: 1,
  HEADERS: 2,
  CONTENT: 3,
  DONE: 4,
} as const;

/**
 * A multipart body parsed as it arrives: push() each chunk (the parser keeps what it needs, the
 * caller may reuse nothing it pushed), end() once the body is complete. Both throw HttpErrors.
 */
export class MultipartParser {
  readonly fields: Array<[string, string]> = [];
  readonly files: UploadedFile[] = [];
  readonly #limits: MultipartLimits;
  readonly #openFile: (info: FilePartInfo) => FileSink;
  readonly #delim: Buffer;
  readonly #nextDelim: Buffer;
  #phase: number = Phase.START;
  #pending: Buffer | null = null;
  #parts = 0;
  #fileCount = 0;
  // the part being read
  #size = 0;
  #sink: FileSink | null = null;
  #field: string | null = null;
  #fieldChunks: Buffer[] = [];
  #skip = false;

  constructor(contentType: string, limits: MultipartLimits, openFile: (info: FilePartInfo) => FileSink) {
    const boundary = multipartBoundary(contentType);
    if (!boundary) throw bad('no boundary in Content-Type');
    this.#limits = limits;
    this.#openFile = openFile;
    this.#delim = Buffer.from(`--${boundary}`, 'latin1');
    this.#nextDelim = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  push(chunk: Buffer): void {
    if (this.#phase === Phase.DONE || chunk.length === 0) return;
    const buf = this.#pending === null ? chunk : Buffer.concat([this.#pending, chunk]);
    this.#pending = null;
    const pos = this.#run(buf);
    if (pos < buf.length && this.#phase !== Phase.DONE) this.#pending = Buffer.from(buf.subarray(pos));
  }

  end(): MultipartResult {
    if (this.#phase === Phase.START) throw bad('boundary not found');
    if (this.#phase === Phase.HEADERS) throw bad('part headers not terminated');
    if (this.#phase !== Phase.DONE) throw bad(this.#phase === Phase.CONTENT ? 'part not terminated by a boundary' : 'expected CRLF after boundary');
    return { fields: this.fields, files: this.files };
  }

  /** Consume what can be consumed of `buf`; returns where the unconsumed rest starts. */
  #run(buf: Buffer): number {
    let pos = 0;
    const delim = this.#delim;
    const nextDelim = this.#nextDelim;
    for (;;) {
      switch (this.#phase) {
        case Phase.START: {
          // The first delimiter may start the body or follow a preamble line.
          if (buf.length < delim.length) return delim.subarray(0, buf.length).equals(buf) ? 0 : this.#preamble(buf);
          if (buf.subarray(0, delim.length).equals(delim)) {
            pos = delim.length;
            this.#phase = Phase.AFTER_DELIMITER;
            break;
          }
          return this.#preamble(buf);
        }
        case Phase.AFTER_DELIMITER: {
          let p = pos;
          if (buf.length - p < 2) return pos;
          if (buf[p] === 45 && buf[p + 1] === 45) {
            // "--": the close delimiter (an epilogue after it is ignored)
            this.#phase = Phase.DONE;
            return buf.length;
          }
          while (p < buf.length && (buf[p] === 32 || buf[p] === 9)) p++; // transport padding
          if (p - pos > 1024) throw bad('expected CRLF after boundary');
          if (buf.length - p < 2) return pos;
          if (buf[p] !== 13 || buf[p + 1] !== 10) throw bad('expected CRLF after boundary');
          pos = p + 2;
          if (++this.#parts > this.#limits.maxParts) throw tooLarge(`Too many multipart parts (limit ${this.#limits.maxParts})`);
          this.#phase = Phase.HEADERS;
          break;
        }
        case Phase.HEADERS: {
          if (buf.length - pos < 2) return pos;
          let headersText: string;
          if (buf[pos] === 13 && buf[pos + 1] === 10) {
            // A part with no headers at all.
            headersText = '';
            pos += 2;
          } else {
            const headerEnd = buf.indexOf(CRLFCRLF, pos);
            if (headerEnd === -1) {
              if (buf.length - pos > MAX_HEADER_BYTES) throw bad('part headers not terminated');
              return pos;
            }
            if (headerEnd - pos > MAX_HEADER_BYTES) throw bad('part headers not terminated');
            headersText = buf.toString('utf8', pos, headerEnd);
            pos = headerEnd + 4;
          }
          this.#startPart(headersText);
          this.#phase = Phase.CONTENT;
          break;
        }
        case Phase.CONTENT: {
          const end = buf.indexOf(nextDelim, pos);
          if (end === -1) {
            // Keep back what could be the start of a delimiter split across chunks.
            const safe = buf.length - (nextDelim.length - 1);
            if (safe > pos) {
              this.#content(buf.subarray(pos, safe));
              pos = safe;
            }
            return pos;
          }
          this.#content(buf.subarray(pos, end));
          this.#endPart();
          pos = end + nextDelim.length;
          this.#phase = Phase.AFTER_DELIMITER;
          break;
        }
        case Phase.DONE:
          return buf.length;
      }
    }
  }

  /** Before the first delimiter: look for "\r\n--boundary", keeping a possible partial one. */
  #preamble(buf: Buffer): number {
    const at = buf.indexOf(this.#nextDelim);
    if (at === -1) return Math.max(0, buf.length - (this.#nextDelim.length - 1));
    this.#phase = Phase.AFTER_DELIMITER;
    return at + this.#nextDelim.length + this.#run(buf.subarray(at + this.#nextDelim.length));
  }

  #startPart(headersText: string): void {
    let disposition: Disposition | null = null;
    let type = '';
    for (const line of headersText.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon === -1) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'content-disposition') disposition = parseDisposition(value);
      else if (name === 'content-type') type = value;
    }
    if (disposition === null || disposition.name === null) throw bad('part without Content-Disposition name');
    this.#size = 0;
    this.#sink = null;
    this.#field = null;
    this.#fieldChunks = [];
    this.#skip = false;
    if (disposition.filename !== null) {
      if (disposition.filename === '') {
        this.#skip = true;
        return;
      }
      if (this.#fileCount >= this.#limits.maxFiles) throw tooLarge(`Too many files (limit ${this.#limits.maxFiles})`);
      this.#fileCount++;
      this.#sink = this.#openFile({ field: disposition.name, filename: basename(disposition.filename), type: type || 'application/octet-stream' });
    } else this.#field = disposition.name;
  }

  #content(bytes: Buffer): void {
    if (bytes.length === 0 || this.#skip) return;
    this.#size += bytes.length;
    if (this.#sink !== null) {
      if (this.#size > this.#limits.maxFileBytes) throw tooLarge(`File too large (limit ${this.#limits.maxFileBytes} bytes)`);
      this.#sink.write(Buffer.from(bytes));
    } else {
      if (this.#size > this.#limits.maxFieldBytes) throw tooLarge(`Form field too large (limit ${this.#limits.maxFieldBytes} bytes)`);
      this.#fieldChunks.push(Buffer.from(bytes));
    }
  }

  #endPart(): void {
    if (this.#sink !== null) this.files.push(this.#sink.finish(this.#size));
    else if (this.#field !== null) this.fields.push([this.#field, Buffer.concat(this.#fieldChunks, this.#size).toString('utf8')]);
    this.#sink = null;
    this.#field = null;
    this.#fieldChunks = [];
  }
}

/** A whole multipart body at once, files kept in memory. */
export function parseMultipart(body: Uint8Array, contentType: string, limits: MultipartLimits = DEFAULT_MULTIPART_LIMITS): MultipartResult {
  const parser = new MultipartParser(contentType, limits, memorySink);
  parser.push(Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  return parser.end();
}
