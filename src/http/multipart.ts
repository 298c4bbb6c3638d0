// multipart/form-data (RFC 7578) parser over a fully buffered body.
//
// The server buffers the body first (bounded by the route's body limit, checked before and while
// reading) and this walks it once with
// Buffer.indexOf: no regex over binary data, no copy of file contents (files are views into the
// body buffer). Field values are UTF-8. Parts with an empty filename (a file input left empty)
// are skipped, as Rack does. Limits on part count, file count and sizes give 413s; a malformed
// body gives a 400.

import { HttpError } from './errors.ts';

export interface UploadedFile {
  /** Form field name, as sent (e.g. `file` or `media[]`). */
  field: string;
  /** Base name of the client's file name (any directory part removed). */
  filename: string;
  /** The part's Content-Type, `application/octet-stream` when absent. */
  type: string;
  size: number;
  data: Uint8Array;
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

export function parseMultipart(body: Uint8Array, contentType: string, limits: MultipartLimits = DEFAULT_MULTIPART_LIMITS): MultipartResult {
  const boundary = multipartBoundary(contentType);
  if (!boundary) throw bad('no boundary in Content-Type');
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const delim = Buffer.from(`--${boundary}`, 'latin1');
  const nextDelim = Buffer.from(`\r\n--${boundary}`, 'latin1');
  const fields: Array<[string, string]> = [];
  const files: UploadedFile[] = [];

  // The first delimiter may start the body or follow a preamble line.
  let pos: number;
  if (buf.length >= delim.length && buf.subarray(0, delim.length).equals(delim)) pos = 0;
  else {
    pos = buf.indexOf(nextDelim);
    if (pos === -1) throw bad('boundary not found');
    pos += 2;
  }
  let parts = 0;
  for (;;) {
    pos += delim.length;
    if (buf[pos] === 45 && buf[pos + 1] === 45) break; // "--": close delimiter
    while (buf[pos] === 32 || buf[pos] === 9) pos++; // transport padding
    if (buf[pos] !== 13 || buf[pos + 1] !== 10) throw bad('expected CRLF after boundary');
    pos += 2;
    if (++parts > limits.maxParts) throw tooLarge(`Too many multipart parts (limit ${limits.maxParts})`);

    let headersText: string;
    let contentStart: number;
    if (buf[pos] === 13 && buf[pos + 1] === 10) {
      // A part with no headers at all.
      headersText = '';
      contentStart = pos + 2;
    } else {
      const headerEnd = buf.indexOf(CRLFCRLF, pos);
      if (headerEnd === -1 || headerEnd - pos > MAX_HEADER_BYTES) throw bad('part headers not terminated');
      headersText = buf.toString('utf8', pos, headerEnd);
      contentStart = headerEnd + 4;
    }
    const end = buf.indexOf(nextDelim, contentStart);
    if (end === -1) throw bad('part not terminated by a boundary');

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
    const size = end - contentStart;
    if (disposition.filename !== null) {
      if (disposition.filename !== '') {
        if (files.length >= limits.maxFiles) throw tooLarge(`Too many files (limit ${limits.maxFiles})`);
        if (size > limits.maxFileBytes) throw tooLarge(`File too large (limit ${limits.maxFileBytes} bytes)`);
        files.push({
          field: disposition.name,
          filename: basename(disposition.filename),
          type: type || 'application/octet-stream',
          size,
          data: buf.subarray(contentStart, end),
        });
      }
    } else {
      if (size > limits.maxFieldBytes) throw tooLarge(`Form field too large (limit ${limits.maxFieldBytes} bytes)`);
      fields.push([disposition.name, buf.toString('utf8', contentStart, end)]);
    }
    pos = end + 2; // at the next "--boundary"
  }
  return { fields, files };
}

