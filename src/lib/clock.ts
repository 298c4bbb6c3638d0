/**
 * The one source of "now" for Roost's logic. Code that needs the time takes a Clock (never
 * Date.now()/new Date() inside logic), so tests and the federation lab can control time.
 */
export interface Clock {
  now(): Date;
}

/** Wall-clock time. */
export const systemClock: Clock = {
  now: () => new Date(),
};

/** A clock that only moves when told to: for tests and the federation lab. */
export interface ManualClock extends Clock {
  /** Moves the clock forward by ms milliseconds (negative moves it back). */
  advance(ms: number): Date;
  /** Sets the clock to an absolute time. */
  set(time: Date): void;
}

export function createManualClock(start: Date = new Date('2026-01-01T00:00:00.000Z')): ManualClock {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    advance(ms: number) {
      current += ms;
      return new Date(current);
    },
    set(time: Date) {
      current = time.getTime();
    },
  };
}
