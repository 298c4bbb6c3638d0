/**
 * The one source of "now" for Roost's logic. Code that needs the time takes a Clock (never
 * Date.now()/new Date() inside logic), so tests and the federation lab can control time.
 */
export interface Clock {
  now(): Date;
  /**
   * Clocks that jump (a test's or the lab's manual clock) call `listener` after each jump, so
   * whoever sleeps until a time (the job pools) looks again. Wall clocks do not have it.
   */
  onJump?(listener: () => void): () => void;
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
  const listeners = new Set<() => void>();
  const jumped = () => {
    for (const listener of listeners) listener();
  };
  return {
    now: () => new Date(current),
    advance(ms: number) {
      current += ms;
      jumped();
      return new Date(current);
    },
    set(time: Date) {
      current = time.getTime();
      jumped();
    },
    onJump(listener: () => void) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}
