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
