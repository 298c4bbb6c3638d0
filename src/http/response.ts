// Responses. Handlers return WHATWG Responses; `json()` builds one whose body is kept as the
// serialized string so the uWS bridge can hand that string straight to uWS (no stream, no copy
// through an ArrayBuffer). It is still a genuine `Response` (instanceof, headers, status,
// text()/json()/arrayBuffer()/bytes()/blob()/body/clone() all work), so tests and any caller can use
// it like any other.

import { stringifyJson } from '../lib/json-integers.ts';

const STRING_BODY = Symbol('roost.http.stringBody');

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

const encoder = new TextEncoder();

/**
 * A Response whose body is a string known up front. Created by `json()` and `stringResponse()`.
 * The accessors that Response defines on its prototype (body, bodyUsed, text…) are overridden below
 * with Object.defineProperties, since the base object was built with a null body.
 */
const responseHeaders = Object.getOwnPropertyDescriptor(Response.prototype, 'headers')!.get!;

export class StringResponse extends Response {
  declare [STRING_BODY]: string;
  #used = false;
  /** Content-Type still to be added to `headers` on first access (fast path), else null. */
  #pendingType: string | null = null;
  #headersTouched = false;

  constructor(body: string, init?: ResponseInit) {
    super(null, init);
    this[STRING_BODY] = body;
  }

  /**
   * Fast path used by json(): only a status and a content type, the Headers object is not even
   * filled until someone reads `headers`.
   */
  static withType(body: string, contentType: string, status?: number): StringResponse {
    const r = status === undefined ? new StringResponse(body) : new StringResponse(body, { status });
    r.#pendingType = contentType;
    return r;
  }

  /** The body string, without marking the body used (for the server bridge). */
  static peek(res: Response): string | undefined {
    return res instanceof StringResponse ? res[STRING_BODY] : undefined;
  }

  /**
   * For the server bridge: the only header of a fast-path response whose headers nobody has
   * touched (so nobody can have changed them), else null (then iterate `headers`).
   */
  static untouchedType(res: StringResponse): string | null {
    return res.#headersTouched ? null : res.#pendingType;
  }

  #take(): string {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read');
    this.#used = true;
    return this[STRING_BODY];
  }

  static {
    const proto = StringResponse.prototype as unknown as Record<string, unknown>;
    const take = (self: StringResponse) => self.#take();
    const isUsed = (self: StringResponse) => self.#used;
    const headersOf = (self: StringResponse): Headers => {
      const h = responseHeaders.call(self) as Headers;
      if (!self.#headersTouched) {
        self.#headersTouched = true;
        if (self.#pendingType !== null) h.set('content-type', self.#pendingType);
      }
      return h;
    };
    Object.defineProperties(proto, {
      headers: { configurable: true, get(this: StringResponse) { return headersOf(this); } },
      body: {
        configurable: true,
        get(this: StringResponse) {
          if (isUsed(this)) return null;
          const self = this;
          return new ReadableStream<Uint8Array>({
            pull(controller) {
              controller.enqueue(encoder.encode(take(self)));
              controller.close();
            },
          });
        },
      },
      bodyUsed: { configurable: true, get(this: StringResponse) { return isUsed(this); } },
      text: { configurable: true, writable: true, value(this: StringResponse) { try { return Promise.resolve(take(this)); } catch (e) { return Promise.reject(e); } } },
      json: { configurable: true, writable: true, value(this: StringResponse) { try { return Promise.resolve(JSON.parse(take(this))); } catch (e) { return Promise.reject(e); } } },
      bytes: { configurable: true, writable: true, value(this: StringResponse) { try { return Promise.resolve(encoder.encode(take(this))); } catch (e) { return Promise.reject(e); } } },
      arrayBuffer: { configurable: true, writable: true, value(this: StringResponse) { try { return Promise.resolve(encoder.encode(take(this)).buffer); } catch (e) { return Promise.reject(e); } } },
      blob: {
        configurable: true, writable: true,
        value(this: StringResponse) {
          try { return Promise.resolve(new Blob([take(this)], { type: this.headers.get('content-type') ?? '' })); } catch (e) { return Promise.reject(e); }
        },
      },
      formData: { configurable: true, writable: true, value() { return Promise.reject(new TypeError('formData() is not supported on this response')); } },
      clone: {
        configurable: true, writable: true,
        value(this: StringResponse) {
          if (isUsed(this)) throw new TypeError('Response.clone: Body has already been consumed.');
          return new StringResponse(this[STRING_BODY], { status: this.status, statusText: this.statusText, headers: this.headers });
        },
      },
    });
  }
}

/**
 * A JSON response (`application/json; charset=utf-8`). `init.headers` may override the type. A
 * bigint in `data` is written as a JSON integer (lib/json-integers.ts).
 */
export function json(data: unknown, init?: ResponseInit): Response {
  const body = stringifyJson(data);
  if (init === undefined) return StringResponse.withType(body, JSON_CONTENT_TYPE);
  if (init.headers === undefined && init.statusText === undefined) return StringResponse.withType(body, JSON_CONTENT_TYPE, init.status);
  const headers = new Headers(init.headers);
  if (!headers.has('content-type')) headers.set('content-type', JSON_CONTENT_TYPE);
  return new StringResponse(body, { status: init.status, statusText: init.statusText, headers });
}

/** A JSON response from an already-serialised JSON string (cached documents). */
export function jsonText(body: string, status?: number): Response {
  return StringResponse.withType(body, JSON_CONTENT_TYPE, status);
}

/** A response with a string body of any type (HTML, XML, plain text…), on the same fast path as json(). */
export function stringResponse(body: string, init?: ResponseInit): Response {
  return new StringResponse(body, init);
}

/** A file on disk the server streams with backpressure (see Exchange.sendFile); Content-Length is `size`. */
export class FileResponse extends Response {
  /** `size` bytes of the file from byte `start` (a 206 sends a part). */
  readonly file: { path: string; size: number; start: number };

  constructor(file: { path: string; size: number; start?: number }, init?: ResponseInit) {
    super(null, init);
    this.file = { start: 0, ...file };
  }
}

/**
 * `return fileResponse(path, size, { headers })`: served from disk without reading it whole;
 * `start` sends `size` bytes from that offset (a Range answer).
 */
export function fileResponse(path: string, size: number, init?: ResponseInit, start = 0): Response {
  return new FileResponse({ path, size, start }, init);
}
