/** Machine definitions: a stored snapshot is read under the definition that wrote it, migrated when older. */
import { describe, it, expect } from 'vitest';
import { setup } from 'xstate';
import { defineMachine, stampSnapshot, upgradeSnapshot } from './definition.ts';
import { InvalidSnapshotError, step } from './step.ts';

const lamp = setup({ types: { context: {} as { watts: number } } }).createMachine({
  id: 'lamp',
  context: { watts: 40 },
  initial: 'dark',
  states: { dark: { on: { 'lamp.switch': 'lit' } }, lit: { on: { 'lamp.switch': 'dark' } } },
});

describe('machine definitions', () => {
  it('stamps a snapshot with its definition version and reads it back unchanged', () => {
    const v1 = defineMachine(lamp, { version: 1 });
    const r = step(lamp, undefined, { type: 'lamp.switch' });
    const stored = stampSnapshot(v1, r.snapshot);
    expect(JSON.stringify(stored)).toBe('{"context":{"watts":40},"definition":1,"value":"lit","version":1}');
    expect(upgradeSnapshot(v1, stored)).toEqual(r.snapshot);
    // Rows from before definitions were versioned carry no stamp: definition 1.
    expect(upgradeSnapshot(v1, r.snapshot)).toEqual(r.snapshot);
  });

  it('migrates a snapshot an older definition wrote, keeping its actor version', () => {
    const seen: number[] = [];
    const v3 = defineMachine(lamp, {
      version: 3,
      migrate: (stored, from) => {
        seen.push(from);
        const context = stored.context as { power?: number; watts?: number };
        return { ...stored, value: stored.value === 'on' ? 'lit' : stored.value, context: { watts: context.power ?? context.watts ?? 40 } };
      },
    });
    const old = { value: 'on', context: { power: 60 }, version: 7, definition: 2 };
    expect(upgradeSnapshot(v3, old)).toEqual({ value: 'lit', context: { watts: 60 }, version: 7 });
    expect(seen).toEqual([2]);
    const next = step(lamp, upgradeSnapshot(v3, old), { type: 'lamp.switch' });
    expect([next.snapshot.value, next.version]).toEqual(['dark', 8]);
  });

  it('hands the caller\'s facts to the migration (state an older definition left in columns)', () => {
    const v2 = defineMachine(lamp, {
      version: 2,
      migrate: (stored, _from, facts) => ({ ...stored, context: { watts: (facts as { watts?: number } | undefined)?.watts ?? 40 } }),
    });
    const old = { value: 'dark', context: {}, version: 3 };
    expect(upgradeSnapshot(v2, old, { watts: 75 })).toEqual({ value: 'dark', context: { watts: 75 }, version: 3 });
    expect(upgradeSnapshot(v2, old)).toEqual({ value: 'dark', context: { watts: 40 }, version: 3 });
  });

  it('refuses a snapshot from a newer definition, a migration that changes the version, and a missing migration', () => {
    const v1 = defineMachine(lamp, { version: 1 });
    expect(() => upgradeSnapshot(v1, { value: 'lit', context: { watts: 1 }, version: 2, definition: 2 })).toThrow(InvalidSnapshotError);
    const bad = defineMachine(lamp, { version: 2, migrate: (s) => ({ ...s, version: s.version + 1 }) });
    expect(() => upgradeSnapshot(bad, { value: 'lit', context: { watts: 1 }, version: 2 })).toThrow(/keep the actor version/);
    const none = defineMachine(lamp, { version: 2 });
    expect(() => upgradeSnapshot(none, { value: 'lit', context: { watts: 1 }, version: 2 })).toThrow(/no migration from definition 1 to 2/);
    expect(() => defineMachine(lamp, { version: 0 })).toThrow(TypeError);
  });
});
