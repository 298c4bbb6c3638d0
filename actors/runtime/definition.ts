/**
 * A machine definition: the machine plus the version of its definition and a migrate hook, so a
 * snapshot persisted under an older definition is brought up to date before it is stepped.
 *
 * The stored form of a snapshot is the runtime's persisted form plus `definition`, the version of
 * the definition that wrote it (absent = 1, the rows written before definitions were versioned):
 *
 *     { "context": { … }, "definition": 2, "value": "accepted", "version": 7 }
 *
 * Bump `version` when a change to the machine makes old snapshots wrong (a state renamed, a
 * context key split); `migrate` receives the stored snapshot and the version it was written
 * under (and, optionally, facts its caller read alongside), and returns the snapshot as the
 * current definition expects it (same actor version: a migration is not a step). Adding a region or a context key with a default needs no bump.
 */
import type { AnyStateMachine } from 'xstate';
import type { PersistedSnapshot, PersistedSnapshotOf } from './step.ts';
import { InvalidSnapshotError } from './step.ts';

export interface MachineDefinition<M extends AnyStateMachine> {
  readonly machine: M;
  /** The definition's version, ≥ 1. */
  readonly version: number;
  /**
   * Rewrites a snapshot stored under definition `from` (< version) into the current shape.
   * `facts` are what the caller read next to the snapshot (the actor store: its table's
   * `migrationFacts(row)`) when a new part of the state already lives in columns.
   */
  readonly migrate: (stored: PersistedSnapshot<unknown>, from: number, facts?: unknown) => PersistedSnapshot<unknown>;
}

/** A snapshot as stored in a row: the persisted form and the definition version that wrote it. */
export type StoredSnapshot<C = unknown> = PersistedSnapshot<C> & { readonly definition?: number };

export function defineMachine<M extends AnyStateMachine>(
  machine: M,
  opts: { version: number; migrate?: MachineDefinition<M>['migrate'] } = { version: 1 },
): MachineDefinition<M> {
  if (!Number.isSafeInteger(opts.version) || opts.version < 1) throw new TypeError(`${machine.id}: definition version must be an integer ≥ 1`);
  return {
    machine,
    version: opts.version,
    migrate:
      opts.migrate ??
      ((_stored, from) => {
        throw new InvalidSnapshotError(`${machine.id}: no migration from definition ${from} to ${opts.version}`);
      }),
  };
}

/**
 * The stored snapshot as the current definition reads it: migrated if an older definition wrote
 * it, the `definition` stamp removed. A snapshot from a newer definition than this code knows is
 * refused (a rolled-back deploy must not step, and so overwrite, what a newer one wrote).
 */
export function upgradeSnapshot<M extends AnyStateMachine>(def: MachineDefinition<M>, stored: StoredSnapshot, facts?: unknown): PersistedSnapshotOf<M> {
  const from = stored.definition ?? 1;
  if (!Number.isSafeInteger(from) || from < 1) throw new InvalidSnapshotError(`${def.machine.id}: bad definition version ${String(from)}`);
  if (from > def.version) {
    throw new InvalidSnapshotError(`${def.machine.id}: snapshot written by definition ${from}, this code knows ${def.version}`);
  }
  const { definition: _stamp, ...plain } = stored;
  if (from === def.version) return plain as PersistedSnapshotOf<M>;
  const migrated = def.migrate(plain, from, facts);
  if (migrated.version !== plain.version) throw new InvalidSnapshotError(`${def.machine.id}: a migration must keep the actor version`);
  return migrated as PersistedSnapshotOf<M>;
}

/**
 * The snapshot as stored: stamped with the definition version that wrote it. `snapshot` is one
 * the runtime returned (`step`, `create`: canonical, plain JSON), so it is not copied again; the
 * stamp's keys are in canonical (sorted) order.
 */
export function stampSnapshot<M extends AnyStateMachine>(def: MachineDefinition<M>, snapshot: PersistedSnapshot<unknown>): StoredSnapshot {
  return { context: snapshot.context, definition: def.version, value: snapshot.value, version: snapshot.version };
}
