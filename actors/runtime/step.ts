/**
 * The actor runtime: pure functions that step a persisted machine snapshot with one event.
 *
 * No actor is started, no clock is read, nothing is executed. `step` restores the snapshot
 * with `machine.resolveState`, computes the transition with the machine's own `transition` in an
 * inert scope (what xstate's pure `transition()` does, with the scope made once per machine: see
 * `inertScope`), and collects the domain events the machine `emit(...)`s. The caller (a service)
 * writes the returned snapshot, its version and the emitted events in one transaction, then the
 * effects layer acts on the events after commit.
 *
 * Persisted form (stable and small, keys sorted recursively, JSON only):
 *
 *     { "context": { ... }, "value": "accepted" | { ... }, "version": 3 }
 *
 * `version` counts accepted events. A snapshot that was never written has version 0 (what
 * `create` returns); the first accepted event makes it 1. Optimistic concurrency in the
 * service:
 *
 *     const r = step(machine, row?.snapshot, event, input);
 *     if (!r.accepted) -> 422 (r.rejection.message), nothing to write
 *     row === undefined ? INSERT … (version = r.version)           -- unique key guards races
 *                       : UPDATE … SET snapshot = r.snapshot, version = r.version
 *                         WHERE id = … AND version = r.previousVersion  -- 0 rows: reload, retry
 *     INSERT outbox rows for r.emitted
 *
 * Acceptance: an event is accepted when the current state has an enabled transition for it
 * (xstate's `snapshot.can(event)`: a matching transition whose guard passes and that has a
 * target or actions). A transition may be accepted without changing anything (`changed:
 * false`, e.g. re-sending identical follow options); it still counts as a step and bumps the
 * version, so a service can always "write iff accepted".
 *
 * Rejection is a value, not an exception: `{ accepted: false, rejection }` with the snapshot and
 * version unchanged and no emitted events. `rejection.reason` is `not_accepted` (valid event,
 * wrong state: a 422 for the client, or an idempotent no-op when the service prefers, e.g.
 * unfollowing someone you do not follow) or `unknown_event` (no state of this machine knows the
 * event type: a programming error). `stepOrThrow` turns a rejection into `EventRejectedError`.
 *
 * Exceptions are reserved for bugs: a corrupt persisted snapshot (unknown state, bad version),
 * a context that is not plain JSON, or a machine that produces an action other than `emit`
 * (side effects do not belong in machines: see DESIGN principle 3).
 */
import { createActor } from 'xstate';
import type {
  AnyActorScope,
  AnyMachineSnapshot,
  AnyStateMachine,
  ContextFrom,
  EmittedFrom,
  EventFromLogic,
  InputFrom,
  StateValue,
} from 'xstate';

/** A domain event emitted by a machine: dotted past-tense type plus a JSON payload. */
export interface DomainEvent {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** The persisted form of a machine snapshot: state value, context, version. Plain JSON. */
export interface PersistedSnapshot<TContext = unknown> {
  readonly value: StateValue;
  readonly context: TContext;
  readonly version: number;
}

export type PersistedSnapshotOf<M extends AnyStateMachine> = PersistedSnapshot<ContextFrom<M>>;

export type RejectionReason = 'not_accepted' | 'unknown_event';

export interface Rejection {
  readonly reason: RejectionReason;
  readonly eventType: string;
  /** The state value the event was sent to. */
  readonly state: StateValue;
  /** For logs and 422 bodies: names the machine, the state and the event, nothing else. */
  readonly message: string;
}

interface StepResultBase<M extends AnyStateMachine> {
  /** The snapshot to persist (on rejection: the unchanged input, or the initial snapshot). */
  readonly snapshot: PersistedSnapshotOf<M>;
  /** The new version (= snapshot.version). */
  readonly version: number;
  /** The version the caller started from (0 when there was no persisted snapshot). */
  readonly previousVersion: number;
}

export interface StepAccepted<M extends AnyStateMachine> extends StepResultBase<M> {
  readonly accepted: true;
  /** Whether the state value or the context differ from before the event. */
  readonly changed: boolean;
  /** Domain events in the order the machine emitted them. */
  readonly emitted: EmittedFrom<M>[];
}

export interface StepRejected<M extends AnyStateMachine> extends StepResultBase<M> {
  readonly accepted: false;
  readonly changed: false;
  readonly emitted: [];
  readonly rejection: Rejection;
}

export type StepResult<M extends AnyStateMachine> = StepAccepted<M> | StepRejected<M>;

/** Thrown by `stepOrThrow` for a rejected event. Services map `not_accepted` to a 422. */
export class EventRejectedError extends Error {
  readonly rejection: Rejection;
  constructor(rejection: Rejection) {
    super(rejection.message);
    this.name = 'EventRejectedError';
    this.rejection = rejection;
  }
}

/** A persisted snapshot that cannot belong to this machine (corrupt row, wrong machine). */
export class InvalidSnapshotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidSnapshotError';
  }
}

/** A machine produced an action that would need executing: machines must only emit. */
export class ImpureMachineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImpureMachineError';
  }
}

/**
 * The inert actor scope of a machine, made once: xstate's pure `transition()` and
 * `initialTransition()` build one per call with `createActor`, which computes the machine's
 * initial snapshot eagerly — about 70 µs a step on a small machine, more than the step itself
 * (measured with `npm run bench -- polls`, where a vote is one step). Sharing it is safe for what
 * these machines may do: assign and emit (collectEmitted refuses every other action), so nothing
 * registers in the scope's system or defers work; each call gets its own action collector.
 */
const inertScopes = new WeakMap<AnyStateMachine, AnyActorScope>();

function inertScope(machine: AnyStateMachine, actions: ActionLike[]): AnyActorScope {
  let base = inertScopes.get(machine);
  if (!base) {
    const self = createActor(machine);
    const noop = () => {};
    base = { self, id: '', sessionId: '', system: self.system, logger: noop, defer: noop, stopChild: noop, emit: noop, actionExecutor: noop } as AnyActorScope;
    inertScopes.set(machine, base);
  }
  return { ...base, actionExecutor: (action: ActionLike) => void actions.push(action) } as AnyActorScope;
}

/** xstate's `initialTransition` in the machine's shared inert scope: the initial snapshot and the actions to execute. */
function initialTransition(machine: AnyStateMachine, input: unknown): [AnyMachineSnapshot, ActionLike[]] {
  const actions: ActionLike[] = [];
  return [machine.getInitialSnapshot(inertScope(machine, actions), input), actions];
}

/** xstate's pure `transition` in the machine's shared inert scope: the next snapshot and the actions to execute. */
function transition(machine: AnyStateMachine, snapshot: AnyMachineSnapshot, event: unknown): [AnyMachineSnapshot, ActionLike[]] {
  const actions: ActionLike[] = [];
  return [machine.transition(snapshot, event as never, inertScope(machine, actions)), actions];
}

/**
 * The initial snapshot of a machine for `input`, version 0 (not yet written), and any events
 * emitted by initial entry actions.
 */
export function create<M extends AnyStateMachine>(
  machine: M,
  input: InputFrom<M>,
): { snapshot: PersistedSnapshotOf<M>; emitted: EmittedFrom<M>[] } {
  const [initial, actions] = initialTransition(machine, input);
  assertHealthy(machine, initial);
  return {
    snapshot: persist(initial, 0) as PersistedSnapshotOf<M>,
    emitted: collectEmitted(machine, actions) as EmittedFrom<M>[],
  };
}

/**
 * Restores a persisted snapshot into an xstate snapshot (for `matches`, `hasTag`, `can`).
 * Throws `InvalidSnapshotError` if the value names a state the machine does not have.
 * Regions missing from a parallel state value are filled with their initial state, so adding
 * a region to a machine does not invalidate stored rows.
 */
export function restore<M extends AnyStateMachine>(
  machine: M,
  persisted: PersistedSnapshot<unknown>,
): AnyMachineSnapshot {
  if (persisted === null || typeof persisted !== 'object') {
    throw new InvalidSnapshotError(`${machine.id}: persisted snapshot must be an object`);
  }
  const { value, context, version } = persisted;
  if (!Number.isSafeInteger(version) || version < 0) {
    throw new InvalidSnapshotError(`${machine.id}: version must be a non-negative integer, got ${String(version)}`);
  }
  if (typeof value !== 'string' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new InvalidSnapshotError(`${machine.id}: state value must be a string or an object`);
  }
  if (context === null || typeof context !== 'object' || Array.isArray(context)) {
    throw new InvalidSnapshotError(`${machine.id}: context must be an object`);
  }
  try {
    // Deep copy through canonicalization: the caller's object is never aliased or mutated.
    return machine.resolveState({
      value: canonicalize(value, 'value') as StateValue,
      context: canonicalize(context, 'context'),
    });
  } catch (error) {
    throw new InvalidSnapshotError(`${machine.id}: ${(error as Error).message}`);
  }
}

/** Whether `event` would be accepted by the persisted snapshot (no result computed). */
export function accepts<M extends AnyStateMachine>(
  machine: M,
  persisted: PersistedSnapshotOf<M> | undefined,
  event: EventFromLogic<M>,
  input?: InputFrom<M>,
): boolean {
  const current = persisted === undefined ? initialTransition(machine, input as InputFrom<M>)[0] : restore(machine, persisted);
  return current.can(event);
}

/**
 * Applies one event to a persisted snapshot (or, when `persisted` is undefined, to the initial
 * snapshot built from `input`; `input` is ignored otherwise). Pure: same arguments, same result.
 */
export function step<M extends AnyStateMachine>(
  machine: M,
  persisted: PersistedSnapshotOf<M> | undefined,
  event: EventFromLogic<M>,
  input?: InputFrom<M>,
): StepResult<M> {
  const eventType = (event as { type?: unknown } | null)?.type;
  if (typeof eventType !== 'string') {
    throw new TypeError(`${machine.id}: an event must be an object with a string type`);
  }

  let current: AnyMachineSnapshot;
  let before: PersistedSnapshot<unknown>;
  let initialEmitted: DomainEvent[] = [];
  if (persisted === undefined) {
    const [initial, actions] = initialTransition(machine, input as InputFrom<M>);
    assertHealthy(machine, initial);
    current = initial;
    before = persist(initial, 0);
    initialEmitted = collectEmitted(machine, actions);
  } else {
    current = restore(machine, persisted);
    // restore's context is already a canonical copy of the caller's (xstate keeps it by
    // reference and never writes to it: assign makes a new object), so only the resolved value,
    // which may have gained regions, is copied.
    before = { context: current.context, value: canonicalize(current.value, 'value') as StateValue, version: persisted.version };
  }

  if (!current.can(event)) {
    const known = machine.root.events.includes(eventType);
    const reason: RejectionReason = known ? 'not_accepted' : 'unknown_event';
    const state = before.value;
    return {
      accepted: false,
      changed: false,
      emitted: [],
      snapshot: before as PersistedSnapshotOf<M>,
      version: before.version,
      previousVersion: before.version,
      rejection: {
        reason,
        eventType,
        state,
        message: known
          ? `${machine.id} in state ${describeState(state)} does not accept ${eventType}`
          : `${machine.id} has no event ${eventType}`,
      },
    };
  }

  const [next, actions] = transition(machine, current, event);
  assertHealthy(machine, next);
  const version = before.version + 1;
  const after = persist(next, version);
  const changed = !sameJson(after.value, before.value) || !sameJson(after.context, before.context);
  return {
    accepted: true,
    changed,
    emitted: [...initialEmitted, ...collectEmitted(machine, actions)] as EmittedFrom<M>[],
    snapshot: after as PersistedSnapshotOf<M>,
    version,
    previousVersion: before.version,
  };
}

/** `step`, but a rejected event throws `EventRejectedError`. */
export function stepOrThrow<M extends AnyStateMachine>(
  machine: M,
  persisted: PersistedSnapshotOf<M> | undefined,
  event: EventFromLogic<M>,
  input?: InputFrom<M>,
): StepAccepted<M> {
  const result = step(machine, persisted, event, input);
  if (!result.accepted) throw new EventRejectedError(result.rejection);
  return result;
}

/** `a.b.c` for nested values, `a` for atomic ones; parallel regions joined with `, `. */
export function describeState(value: StateValue): string {
  if (typeof value === 'string') return value;
  return Object.entries(value)
    .map(([key, child]) => {
      if (child === undefined) return key;
      const inner = describeState(child);
      return inner.includes(', ') ? `${key}.{${inner}}` : `${key}.${inner}`;
    })
    .join(', ');
}

function persist(snapshot: AnyMachineSnapshot, version: number): PersistedSnapshot<unknown> {
  return canonicalize({ context: snapshot.context, value: snapshot.value, version }, 'snapshot') as PersistedSnapshot<unknown>;
}

function assertHealthy(machine: AnyStateMachine, snapshot: AnyMachineSnapshot): void {
  if (snapshot.status === 'error') {
    throw snapshot.error instanceof Error ? snapshot.error : new Error(`${machine.id}: ${String(snapshot.error)}`);
  }
}

interface ActionLike {
  readonly type: string;
  readonly params: unknown;
}

function collectEmitted(machine: AnyStateMachine, actions: readonly ActionLike[]): DomainEvent[] {
  const emitted: DomainEvent[] = [];
  for (const action of actions) {
    if (action.type === 'xstate.emit') {
      const event = (action.params as { event: DomainEvent }).event;
      emitted.push(canonicalize(event, 'emitted event') as DomainEvent);
    } else if (action.type === 'xstate.raise' && (action.params as { delay?: unknown }).delay === undefined) {
      // An immediate raise was already processed inside the macrostep: nothing to execute.
    } else {
      throw new ImpureMachineError(
        `${machine.id}: action ${action.type} needs executing; persisted machines may only assign and emit`,
      );
    }
  }
  return emitted;
}

/** Whether two canonical JSON values (as `canonicalize` returns them: keys sorted, no undefined) are equal. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i] || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/**
 * A deep copy with object keys sorted, `undefined` members dropped; throws on anything that is
 * not plain JSON (functions, Dates, Maps, class instances, non-finite numbers).
 */
export function canonicalize(input: unknown, where: string): unknown {
  return canonicalizeAt(input, where, []);
}

/** The path to a member is a stack of keys, spelled out only in an error (a step canonicalizes every member of its snapshot twice). */
function canonicalizeAt(input: unknown, where: string, path: (string | number)[]): unknown {
  const at = () => where + path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
  if (input === null || typeof input === 'string' || typeof input === 'boolean') return input;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw new TypeError(`${at()}: non-finite number`);
    return input;
  }
  if (Array.isArray(input)) {
    const out = new Array<unknown>(input.length);
    for (let i = 0; i < input.length; i++) {
      path.push(i);
      out[i] = canonicalizeAt(input[i], where, path);
      path.pop();
    }
    return out;
  }
  if (typeof input === 'object') {
    const proto = Object.getPrototypeOf(input);
    if (proto !== Object.prototype && proto !== null) {
      throw new TypeError(`${at()}: only plain objects can be persisted`);
    }
    const out: Record<string, unknown> = {};
    const keys = Object.keys(input);
    // Most objects arrive sorted (written by this function before); sorting allocates.
    for (let i = 1; i < keys.length; i++) {
      if (keys[i - 1]! > keys[i]!) {
        keys.sort();
        break;
      }
    }
    for (const key of keys) {
      const member = (input as Record<string, unknown>)[key];
      if (member === undefined) continue;
      path.push(key);
      out[key] = canonicalizeAt(member, where, path);
      path.pop();
    }
    return out;
  }
  throw new TypeError(`${at()}: ${typeof input} cannot be persisted`);
}
