import { randomInt } from 'node:crypto';

/**
 * Time-sortable 64-bit ids, as Mastodon makes them: milliseconds since the epoch in the high 48
 * bits, 16 low bits that keep ids from one process strictly increasing within a millisecond and
 * make collisions between processes unlikely (they start from a random point each millisecond).
 * Returned as decimal strings, which is how the API serialises ids.
 */
export interface IdGenerator {
  next(at?: Date): string;
}

export function createIdGenerator(now: () => Date): IdGenerator {
  let lastMs = -1;
  let seq = 0;
  return {
    next(at?: Date) {
      const ms = (at ?? now()).getTime();
      if (at) {
        // An id for a given moment (a remote post's published time): random low bits.
        return ((BigInt(ms) << 16n) | BigInt(randomInt(0, 0x10000))).toString();
      }
      if (ms > lastMs) {
        lastMs = ms;
        seq = randomInt(0, 0x8000);
      } else {
        seq += 1;
        if (seq > 0xffff) {
          // More than 32k ids in one millisecond: borrow the next millisecond.
          lastMs += 1;
          seq = 0;
        }
      }
      return ((BigInt(lastMs) << 16n) | BigInt(seq)).toString();
    },
  };
}

/** The moment an id was made. */
export function idTime(id: string): Date {
  return new Date(Number(BigInt(id) >> 16n));
}

/** The smallest id for a moment: for time-range queries (since/until) on id columns. */
export function minIdAt(at: Date): string {
  return (BigInt(at.getTime()) << 16n).toString();
}
