/**
 * Errors a service raises for the client: an HTTP status, Mastodon's `error` message, and for
 * validation failures Mastodon's `details` ({"email":[{"error":"ERR_TAKEN","description":"…"}]}).
 * The HTTP layer renders them; the CLI prints them.
 */
export type ErrorDetails = Record<string, { error: string; description: string }[]>;

export class RoostError extends Error {
  override name = 'RoostError';
  readonly status: number;
  readonly details?: ErrorDetails;
  readonly extra?: Record<string, unknown>;
  constructor(status: number, message: string, opts: { details?: ErrorDetails; extra?: Record<string, unknown> } = {}) {
    super(message);
    this.status = status;
    this.details = opts.details;
    this.extra = opts.extra;
  }
  get body(): Record<string, unknown> {
    return { error: this.message, ...(this.details ? { details: this.details } : {}), ...this.extra };
  }
}

export const notFound = (what = 'Record not found') => new RoostError(404, what);
export const forbidden = (msg = 'This action is not allowed') => new RoostError(403, msg);
export const unprocessable = (msg: string) => new RoostError(422, msg);

/** Collects field errors and throws one 422 "Validation failed: …" as Mastodon words it. */
export class Validation {
  private readonly details: ErrorDetails = {};
  add(field: string, error: string, description: string): this {
    (this.details[field] ??= []).push({ error, description });
    return this;
  }
  /** Whether `field` has a problem already. */
  has(field: string): boolean {
    return Object.hasOwn(this.details, field);
  }
  get ok(): boolean {
    return Object.keys(this.details).length === 0;
  }
  throwIfInvalid(): void {
    if (this.ok) return;
    const summary = Object.entries(this.details)
      .map(([field, errs]) => errs.map((e) => `${humanize(field)} ${e.description}`).join(', '))
      .join(', ');
    throw new RoostError(422, `Validation failed: ${summary}`, { details: this.details });
  }
}

function humanize(field: string): string {
  // `poll.options` (a nested record's attribute, as Rails names it) reads "Poll options".
  const s = field.replace(/[_.]/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}
