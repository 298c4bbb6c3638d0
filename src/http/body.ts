// Request body → params, by Content-Type. JSON (application/json and any +json type), urlencoded
// forms and multipart forms all end in the same normalised Params shape (see params.ts). Other
// types leave `body` empty; the raw bytes stay available through ctx.request.

import { HttpError } from './errors.ts';
import { parseMultipart, type MultipartLimits, type UploadedFile } from './multipart.ts';
import { buildParams, normalizeJson, splitQuery, type Params } from './params.ts';

export type Files = Record<string, UploadedFile | UploadedFile[]>;

export interface ParsedBody {
  body: Params;
  files: Files;
}


/** Media type of a Content-Type header value, lowercased, without parameters. */
export function mediaType(contentType: string): string {
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

export function isMultipart(contentType: string): boolean {
  return mediaType(contentType) === 'multipart/form-data';
}

export function isJsonType(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

export function parseBody(contentType: string, bytes: Uint8Array, multipartLimits: MultipartLimits): ParsedBody {
  const type = mediaType(contentType);
  if (isJsonType(type)) {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
    if (text.trim() === '') return { body: {}, files: {} };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new HttpError(400, 'Error occurred while parsing request parameters', {
        error_description: `Malformed JSON in request body: ${(err as Error).message}`,
      });
    }
    return { body: normalizeJson(value), files: {} };
  }
  if (type === 'application/x-www-form-urlencoded') {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
    return { body: buildParams(splitQuery(text)), files: {} };
  }
  if (type === 'multipart/form-data') {
    const { fields, files } = parseMultipart(bytes, contentType, multipartLimits);
    return multipartBody(fields, files);
  }
  return { body: {}, files: {} };
}

/** A parsed multipart body as params and files by field name (`media[]` → `media`, an array). */
export function multipartBody(fields: Array<[string, string]>, files: UploadedFile[]): ParsedBody {
  const out: Files = {};
  for (const f of files) {
    const many = f.field.endsWith('[]');
    const key = many ? f.field.slice(0, -2) : f.field;
    const prev = out[key];
    if (prev === undefined) out[key] = many ? [f] : f;
    else if (Array.isArray(prev)) prev.push(f);
    else out[key] = [prev, f];
  }
  return { body: buildParams(fields), files: files.length ? out : {} };
}
