// Errors in Mastodon's shape: the status code carries the meaning, the body is
// `{"error": "…"}` plus optional extra fields (`error_description` for OAuth, `details` for 422).
// Throw an HttpError anywhere below a handler and the server turns it into that response.

import { json } from './response.ts';

export type ErrorBody = { error: string } & Record<string, unknown>;

export class HttpError extends Error {
  readonly status: number;
  readonly body: ErrorBody;
  readonly headers: Record<string, string> | undefined;

  constructor(status: number, message: string, extra?: Record<string, unknown>, headers?: Record<string, string>) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    const body: ErrorBody = { error: message, ...extra };
    body.error = message;
    this.body = body;
    this.headers = headers;
  }

  toResponse(): Response {
    return json(this.body, { status: this.status, headers: this.headers });
  }
}

/** `throw httpError(404, 'Record not found')` → 404 `{"error":"Record not found"}`. */
export function httpError(status: number, message: string, extra?: Record<string, unknown>, headers?: Record<string, string>): HttpError {
  return new HttpError(status, message, extra, headers);
}

export type ValidationDetails = Record<string, Array<{ error: string; description: string }>>;

/** 'display_name' → 'Display name', 'keywords.keyword' → 'Keywords keyword' (Rails' humanize). */
function humanize(attr: string): string {
  const s = attr.replace(/[._]/g, ' ').replace(/\s+/g, ' ').trim();
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * 422 as Mastodon renders a failed validation:
 * `{"error": "Validation failed: Username has already been taken", "details": {"username": [{"error": "ERR_TAKEN", "description": "has already been taken"}]}}`.
 * `message` may be the full sentence, the part after "Validation failed: ", or '' to derive it
 * from `details` ("<Attribute> <description>, …").
 */
export function validationError(message: string, details: ValidationDetails): HttpError {
  let text = message;
  if (!text) {
    const parts: string[] = [];
    for (const [attr, errs] of Object.entries(details)) {
      for (const e of errs) parts.push(`${humanize(attr)} ${e.description}`);
    }
    text = parts.join(', ');
  }
  if (!text.startsWith('Validation failed')) text = `Validation failed: ${text}`;
  return new HttpError(422, text, { details });
}

// ---------------------------------------------------------------------------------------------
// The database (or another backing service) unreachable: 503, not 500

/** Node's socket errors: nobody listening, the connection cut or never made. */
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/**
 * PostgreSQL's SQLSTATEs of a server going away or not taking connections: 57P01 admin shutdown,
 * 57P02 crash shutdown, 57P03 cannot connect now (starting up, shutting down, recovering), class 08
 * (connection exceptions), 53300 too many connections.
 */
const UNAVAILABLE_SQLSTATE = /^(57P0[123]|08[0-9A-Z]{3}|53300)$/;
/** The pg client's and pool's own messages, which carry no code. */
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|Cannot use a pool after calling end on the pool)/;

/**
 * Whether `err` (or an error it wraps, through `cause`, MikroORM's `previous` or an
 * AggregateError's `errors`) says the database could not be reached: the connection was refused,
 * cut, timed out, or the server is shutting down or not accepting connections yet. Such a request
 * failed through no fault of its own and can be retried: the server answers 503.
 */
export function isUnavailableError(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 5) return false;
  const { code, message, cause, previous, errors } = err as { code?: unknown; message?: unknown; cause?: unknown; previous?: unknown; errors?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_ERRNO.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
  if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return true;
  if (cause !== undefined && isUnavailableError(cause, depth + 1)) return true;
  if (previous !== undefined && isUnavailableError(previous, depth + 1)) return true;
  if (Array.isArray(errors)) return errors.some((e) => isUnavailableError(e, depth + 1));
  return false;
}

/** Seconds a client is asked to wait (Retry-After) when the database is unreachable. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** 503 as Mastodon answers a temporary failure, with Retry-After. */
export function unavailableError(): HttpError {
  return new HttpError(503, 'There was a temporary problem serving your request, please try again', undefined, {
    'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
  });
}
