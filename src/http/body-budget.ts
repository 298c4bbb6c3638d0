// What requests nobody has vouched for yet may hold while their bodies arrive.
//
// A body is "unauthenticated" until a check before the body (RequestContext.markAuthenticated,
// called by the API's bearer-token check) vouched for it: the inbox (its signature is checked
// only once the body is in), OAuth app creation, sign-up, the token endpoint, any request without
// a valid token. Such a body reserves its announced Content-Length (a chunked one grows its
// reservation as bytes arrive) from one process-wide budget before a byte is buffered, and holds it
// until its exchange ends (answered, aborted, timed out); and one client address may have only so
// many of them arriving at once. Past either, the request is refused (503 for the budget, 429 for
// the address, each with Retry-After) and its connection closed, instead of memory growing.

export interface BodyBudgetOptions {
  /** Bytes all unauthenticated bodies together may hold; default 16 MiB. */
  unauthenticatedBytes?: number;
  /** Unauthenticated bodies one client address may have arriving at once; default 16. */
  perAddress?: number;
}

export const DEFAULT_UNAUTHENTICATED_BUDGET = 16 * 1024 * 1024;
export const DEFAULT_BODIES_PER_ADDRESS = 16;

export class BodyBudget {
  readonly limit: number;
  readonly perAddress: number;
  #used = 0;
  #byAddress = new Map<string, number>();
  /** Refusals so far, by cause (exposed for tests and metrics). */
  refusedBudget = 0;
  refusedAddress = 0;

  constructor(opts: BodyBudgetOptions = {}) {
    this.limit = opts.unauthenticatedBytes ?? DEFAULT_UNAUTHENTICATED_BUDGET;
    this.perAddress = opts.perAddress ?? DEFAULT_BODIES_PER_ADDRESS;
  }

  /** Bytes reserved right now. */
  get used(): number {
    return this.#used;
  }

  /** Bodies arriving right now from `address`. */
  inFlight(address: string): number {
    return this.#byAddress.get(address) ?? 0;
  }

  /** Reserve `bytes`; false (nothing reserved) when the budget cannot take them. */
  reserve(bytes: number): boolean {
    if (bytes <= 0) return true;
    if (this.#used + bytes > this.limit) {
      this.refusedBudget++;
      return false;
    }
    this.#used += bytes;
    return true;
  }

  release(bytes: number): void {
    if (bytes > 0) this.#used = Math.max(0, this.#used - bytes);
  }

  /** Take one of `address`'s slots; false when it has perAddress bodies arriving already. */
  enter(address: string): boolean {
    const n = this.#byAddress.get(address) ?? 0;
    if (n >= this.perAddress) {
      this.refusedAddress++;
      return false;
    }
    this.#byAddress.set(address, n + 1);
    return true;
  }

  leave(address: string): void {
    const n = this.#byAddress.get(address) ?? 0;
    if (n <= 1) this.#byAddress.delete(address);
    else this.#byAddress.set(address, n - 1);
  }
}
