import { describe, expect, it } from 'vitest';
import { assign, emit, raise, setup } from 'xstate';
import {
  EventRejectedError,
  ImpureMachineError,
  InvalidSnapshotError,
  accepts,
  canonicalize,
  create,
  describeState,
  restore,
  step,
  stepOrThrow,
} from './step.ts';
import type { PersistedSnapshot } from './step.ts';

// A small machine exercising what step() must handle: input, guards, assign, emit, a
// targetless transition, a guarded self-target (accepted, inert), and a final state.
type DoorEvent =
  | { type: 'door.open' }
  | { type: 'door.close' }
  | { type: 'door.knock'; loud: boolean }
  | { type: 'door.paint'; colour: string }
  | { type: 'door.burn' };
type DoorEmitted =
  | { type: 'door.opened'; doorId: string; opens: number }
  | { type: 'door.closed'; doorId: string }
  | { type: 'door.knocked'; doorId: string }
  | { type: 'door.painted'; doorId: string; colour: string }
  | { type: 'door.burnt'; doorId: string };

const door = setup({
  types: {
    context: {} as { zeta: string; doorId: string; opens: number; colour: string | null },
    events: {} as DoorEvent,
    input: {} as { doorId: string },
    emitted: {} as DoorEmitted,
  },
}).createMachine({
  id: 'door',
  // Keys deliberately not in alphabetical order: the persisted form must sort them.
  context: ({ input }) => ({ zeta: 'z', doorId: input.doorId, opens: 0, colour: null }),
  initial: 'closed',
  states: {
    closed: {
      on: {
        'door.open': {
          target: 'open',
          actions: [
            assign({ opens: ({ context }) => context.opens + 1 }),
            emit(({ context }) => ({ type: 'door.opened' as const, doorId: context.doorId, opens: context.opens })),
          ],
        },
        'door.knock': [
          { guard: ({ event }) => event.loud, target: 'closed' },
          { actions: emit(({ context }) => ({ type: 'door.knocked' as const, doorId: context.doorId })) },
        ],
        'door.paint': {
          actions: [
            assign({ colour: ({ event }) => event.colour }),
            emit(({ context, event }) => ({ type: 'door.painted' as const, doorId: context.doorId, colour: event.colour })),
          ],
        },
        'door.burn': {
          target: 'ashes',
          actions: emit(({ context }) => ({ type: 'door.burnt' as const, doorId: context.doorId })),
        },
      },
    },
    open: {
      on: {
        'door.close': {
          target: 'closed',
          actions: emit(({ context }) => ({ type: 'door.closed' as const, doorId: context.doorId })),
        },
      },
    },
    ashes: { type: 'final' },
  },
});

const closedAt3: PersistedSnapshot<{ zeta: string; doorId: string; opens: number; colour: string | null }> = {
  value: 'closed',
  context: { zeta: 'z', doorId: 'd1', opens: 2, colour: 'red' },
  version: 3,
};

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

describe('create', () => {
  it('builds the initial snapshot from input at version 0 with sorted keys', () => {
    const { snapshot, emitted } = create(door, { doorId: 'd1' });
    expect(snapshot).toEqual({ value: 'closed', context: { colour: null, doorId: 'd1', opens: 0, zeta: 'z' }, version: 0 });
    expect(JSON.stringify(snapshot)).toBe(
      '{"context":{"colour":null,"doorId":"d1","opens":0,"zeta":"z"},"value":"closed","version":0}',
    );
    expect(emitted).toEqual([]);
  });
});

describe('step: accepted events', () => {
  it('starts from the initial snapshot when nothing is persisted, and ends at version 1', () => {
    const result = step(door, undefined, { type: 'door.open' }, { doorId: 'd9' });
    expect(result).toEqual({
      accepted: true,
      changed: true,
      emitted: [{ type: 'door.opened', doorId: 'd9', opens: 1 }],
      snapshot: { value: 'open', context: { colour: null, doorId: 'd9', opens: 1, zeta: 'z' }, version: 1 },
      version: 1,
      previousVersion: 0,
    });
  });

  it('ignores input when a snapshot is persisted', () => {
    const result = step(door, closedAt3, { type: 'door.open' }, { doorId: 'other' });
    expect(result.snapshot.context.doorId).toBe('d1');
  });

  it('increments the version by exactly one per accepted event', () => {
    const a = stepOrThrow(door, closedAt3, { type: 'door.open' });
    const b = stepOrThrow(door, a.snapshot, { type: 'door.close' });
    const c = stepOrThrow(door, b.snapshot, { type: 'door.open' });
    expect([a.previousVersion, a.version, b.version, c.version]).toEqual([3, 4, 5, 6]);
    expect(c.snapshot).toEqual({ value: 'open', context: { colour: 'red', doorId: 'd1', opens: 4, zeta: 'z' }, version: 6 });
    expect(c.emitted).toEqual([{ type: 'door.opened', doorId: 'd1', opens: 4 }]);
  });

  it('reports changed=false for an accepted event that changes nothing, and still bumps the version', () => {
    // A guarded self-target: accepted (not a rejection), inert.
    const result = step(door, closedAt3, { type: 'door.knock', loud: true });
    expect(result).toEqual({
      accepted: true,
      changed: false,
      emitted: [],
      snapshot: { ...closedAt3, version: 4 },
      version: 4,
      previousVersion: 3,
    });
  });

  it('reports changed=false when only events are emitted (targetless transition)', () => {
    const result = step(door, closedAt3, { type: 'door.knock', loud: false });
    expect(result.accepted).toBe(true);
    expect(result.changed).toBe(false);
    expect(result.emitted).toEqual([{ type: 'door.knocked', doorId: 'd1' }]);
    expect(result.version).toBe(4);
  });

  it('reports changed=true for a context-only change', () => {
    const result = step(door, closedAt3, { type: 'door.paint', colour: 'blue' });
    expect(result.changed).toBe(true);
    expect(result.snapshot.value).toBe('closed');
    expect(result.snapshot.context.colour).toBe('blue');
    expect(result.emitted).toEqual([{ type: 'door.painted', doorId: 'd1', colour: 'blue' }]);
  });

  it('compares the context by value: rewritten with equal values is no change, one nested element is', () => {
    // door.paint's assign makes a new context object even when the colour is the same.
    const red = { ...closedAt3, context: { ...closedAt3.context, colour: 'red' } };
    expect(step(door, red, { type: 'door.paint', colour: 'red' }).changed).toBe(false);
    const tally = setup({ types: { context: {} as { votes: number[]; meta: { at: string | null } }, events: {} as { type: 'tally.set'; votes: number[] } } }).createMachine({
      id: 'tally',
      context: { votes: [0, 0], meta: { at: null } },
      on: { 'tally.set': { actions: assign({ votes: ({ event }) => [...event.votes], meta: () => ({ at: null }) }) } },
    });
    const stored = { value: {}, context: { meta: { at: null }, votes: [1, 2] }, version: 1 };
    expect(step(tally, stored, { type: 'tally.set', votes: [1, 2] }).changed).toBe(false);
    expect(step(tally, stored, { type: 'tally.set', votes: [1, 3] }).changed).toBe(true);
    expect(step(tally, stored, { type: 'tally.set', votes: [1, 2, 0] }).changed).toBe(true);
  });

  it('reaches a final state', () => {
    const result = stepOrThrow(door, closedAt3, { type: 'door.burn' });
    expect(result.snapshot.value).toBe('ashes');
    expect(result.emitted).toEqual([{ type: 'door.burnt', doorId: 'd1' }]);
    expect(step(door, result.snapshot, { type: 'door.open' }).accepted).toBe(false);
  });

  it('is pure: does not mutate its input and gives equal results for equal arguments', () => {
    const frozen = deepFreeze(structuredClone(closedAt3));
    const first = step(door, frozen, { type: 'door.paint', colour: 'green' });
    const second = step(door, frozen, { type: 'door.paint', colour: 'green' });
    expect(frozen).toEqual(closedAt3);
    expect(second).toEqual(first);
    expect(first.snapshot).not.toBe(second.snapshot);
  });

  it('persists the same JSON whatever the key order of the stored snapshot', () => {
    const shuffled = { version: 3, context: { opens: 2, zeta: 'z', colour: 'red', doorId: 'd1' }, value: 'closed' as const };
    const a = step(door, closedAt3, { type: 'door.open' });
    const b = step(door, shuffled, { type: 'door.open' });
    expect(JSON.stringify(b.snapshot)).toBe(JSON.stringify(a.snapshot));
    expect(JSON.stringify(a.snapshot)).toBe(
      '{"context":{"colour":"red","doorId":"d1","opens":3,"zeta":"z"},"value":"open","version":4}',
    );
  });
});

describe('step: rejected events', () => {
  it('returns the stored snapshot in canonical form on a rejection too', () => {
    const shuffled = { version: 3, context: { zeta: 'z', opens: 2, doorId: 'd1', colour: 'red' }, value: 'closed' as const };
    const result = step(door, shuffled, { type: 'door.close' });
    expect(result.accepted).toBe(false);
    expect(JSON.stringify(result.snapshot)).toBe('{"context":{"colour":"red","doorId":"d1","opens":2,"zeta":"z"},"value":"closed","version":3}');
    expect(result.snapshot.context).not.toBe(shuffled.context);
  });

  it('rejects an event the current state does not accept, leaving snapshot and version unchanged', () => {
    const result = step(door, closedAt3, { type: 'door.close' });
    expect(result).toEqual({
      accepted: false,
      changed: false,
      emitted: [],
      snapshot: closedAt3,
      version: 3,
      previousVersion: 3,
      rejection: {
        reason: 'not_accepted',
        eventType: 'door.close',
        state: 'closed',
        message: 'door in state closed does not accept door.close',
      },
    });
  });

  it('rejects on a fresh actor with the initial snapshot at version 0 (nothing to insert)', () => {
    const result = step(door, undefined, { type: 'door.close' }, { doorId: 'd2' });
    expect(result.accepted).toBe(false);
    expect(result.version).toBe(0);
    expect(result.snapshot).toEqual({ value: 'closed', context: { colour: null, doorId: 'd2', opens: 0, zeta: 'z' }, version: 0 });
  });

  it('tells an event no state knows (unknown_event) from one this state refuses', () => {
    const result = step(door, closedAt3, { type: 'door.fly' } as unknown as DoorEvent);
    expect(result.accepted).toBe(false);
    expect(!result.accepted && result.rejection).toEqual({
      reason: 'unknown_event',
      eventType: 'door.fly',
      state: 'closed',
      message: 'door has no event door.fly',
    });
  });

  it('stepOrThrow throws EventRejectedError carrying the rejection', () => {
    let caught: unknown;
    try {
      stepOrThrow(door, closedAt3, { type: 'door.close' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EventRejectedError);
    expect((caught as EventRejectedError).rejection.reason).toBe('not_accepted');
    expect((caught as EventRejectedError).message).toBe('door in state closed does not accept door.close');
  });

  it('throws TypeError for something that is not an event', () => {
    expect(() => step(door, closedAt3, {} as DoorEvent)).toThrow(TypeError);
  });

  it('accepts() answers without stepping', () => {
    expect(accepts(door, closedAt3, { type: 'door.open' })).toBe(true);
    expect(accepts(door, closedAt3, { type: 'door.close' })).toBe(false);
    expect(accepts(door, undefined, { type: 'door.open' }, { doorId: 'd1' })).toBe(true);
  });
});

describe('restore: corrupt snapshots are bugs, not rejections', () => {
  it.each([
    ['an unknown state', { value: 'ajar', context: closedAt3.context, version: 1 }, /State 'ajar' does not exist/],
    ['a negative version', { value: 'closed', context: closedAt3.context, version: -1 }, /version must be a non-negative integer/],
    ['a fractional version', { value: 'closed', context: closedAt3.context, version: 1.5 }, /version must be a non-negative integer/],
    ['a missing version', { value: 'closed', context: closedAt3.context }, /version must be a non-negative integer/],
    ['an array context', { value: 'closed', context: [], version: 1 }, /context must be an object/],
    ['a numeric value', { value: 7, context: closedAt3.context, version: 1 }, /state value must be a string or an object/],
  ])('throws InvalidSnapshotError for %s', (_label, persisted, message) => {
    expect(() => step(door, persisted as never, { type: 'door.open' })).toThrow(InvalidSnapshotError);
    expect(() => restore(door, persisted as never)).toThrow(message);
  });
});

describe('purity is enforced', () => {
  it('refuses a machine whose transition runs a custom side-effecting action', () => {
    let called = 0;
    const impure = setup({ types: { events: {} as { type: 'go' } } }).createMachine({
      id: 'impure',
      initial: 'a',
      states: { a: { on: { go: { target: 'b', actions: () => { called += 1; } } } }, b: {} },
    });
    expect(() => step(impure, { value: 'a', context: {}, version: 0 }, { type: 'go' })).toThrow(ImpureMachineError);
    expect(called).toBe(0);
  });

  it('refuses a delayed transition (timers are jobs that send the event back)', () => {
    const timed = setup({ types: { events: {} as { type: 'go' } } }).createMachine({
      id: 'timed',
      initial: 'a',
      states: { a: { on: { go: 'b' } }, b: { after: { 1000: 'a' } } },
    });
    expect(() => step(timed, { value: 'a', context: {}, version: 0 }, { type: 'go' })).toThrow(
      /action xstate\.raise needs executing/,
    );
  });

  it('allows an immediate raise (processed within the same step)', () => {
    const chained = setup({
      types: { events: {} as { type: 'go' } | { type: 'next' }, emitted: {} as { type: 'went' } },
    }).createMachine({
      id: 'chained',
      initial: 'a',
      states: {
        a: { on: { go: { target: 'b', actions: raise({ type: 'next' }) } } },
        b: { on: { next: { target: 'c', actions: emit({ type: 'went' }) } } },
        c: {},
      },
    });
    const result = stepOrThrow(chained, { value: 'a', context: {}, version: 0 }, { type: 'go' });
    expect(result.snapshot.value).toBe('c');
    expect(result.emitted).toEqual([{ type: 'went' }]);
  });

  it('refuses a context that is not plain JSON', () => {
    const dated = setup({ types: { events: {} as { type: 'go' }, context: {} as { at: unknown } } }).createMachine({
      id: 'dated',
      context: { at: null },
      initial: 'a',
      states: { a: { on: { go: { target: 'b', actions: assign({ at: () => new Date(0) }) } } }, b: {} },
    });
    expect(() => step(dated, { value: 'a', context: { at: null }, version: 0 }, { type: 'go' })).toThrow(
      'snapshot.context.at: only plain objects can be persisted',
    );
  });
});

describe('parallel machines', () => {
  const lamp = setup({
    types: { events: {} as { type: 'all.on' } | { type: 'left.off' }, emitted: {} as { type: 'left.lit' } | { type: 'right.lit' } },
  }).createMachine({
    id: 'lamp',
    type: 'parallel',
    states: {
      right: { initial: 'dark', states: { dark: { on: { 'all.on': { target: 'lit', actions: emit({ type: 'right.lit' }) } } }, lit: {} } },
      left: {
        initial: 'dark',
        states: {
          dark: { on: { 'all.on': { target: 'lit', actions: emit({ type: 'left.lit' }) } } },
          lit: { on: { 'left.off': 'dark' } },
        },
      },
    },
  });

  it('collects events emitted by several regions, in document order', () => {
    const result = stepOrThrow(lamp, undefined, { type: 'all.on' });
    expect(result.snapshot.value).toEqual({ left: 'lit', right: 'lit' });
    expect(result.emitted).toEqual([{ type: 'right.lit' }, { type: 'left.lit' }]);
    expect(JSON.stringify(result.snapshot.value)).toBe('{"left":"lit","right":"lit"}');
  });

  it('fills a region missing from a stored value with its initial state (adding a region keeps old rows valid)', () => {
    const result = stepOrThrow(lamp, { value: { left: 'lit' }, context: {}, version: 2 }, { type: 'left.off' });
    expect(result.snapshot).toEqual({ value: { left: 'dark', right: 'dark' }, context: {}, version: 3 });
  });

  it('describes parallel values for messages', () => {
    expect(describeState({ left: 'lit', right: 'dark' })).toBe('left.lit, right.dark');
    expect(describeState({ outer: { a: 'x', b: 'y' } })).toBe('outer.{a.x, b.y}');
    expect(describeState({ outer: { inner: 'x' } })).toBe('outer.inner.x');
    expect(describeState('idle')).toBe('idle');
  });
});

describe('canonicalize', () => {
  it('sorts keys recursively, keeps array order, drops undefined members', () => {
    expect(JSON.stringify(canonicalize({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } }, 'x'))).toBe(
      '{"a":{"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it.each([
    ['a function', { f: () => 1 }, 'x.f: function cannot be persisted'],
    ['NaN', { n: Number.NaN }, 'x.n: non-finite number'],
    ['a Map', { m: new Map() }, 'x.m: only plain objects can be persisted'],
    ['a bigint', { b: 1n }, 'x.b: bigint cannot be persisted'],
  ])('rejects %s', (_label, input, message) => {
    expect(() => canonicalize(input, 'x')).toThrow(message);
  });
});
