import { describe, expect, it } from 'vitest';
import { create, restore, step, stepOrThrow } from '../runtime/step.ts';
import { accountDefinition, accountFlags, accountMachine, accountSnapshot } from './account.machine.ts';
import { stampSnapshot, upgradeSnapshot } from '../runtime/definition.ts';
import type { AccountEmitted, AccountEvent, AccountSnapshot } from './account.machine.ts';

const A = 'account-1';

type Regions = {
  locking: 'unlocked' | 'locked';
  silencing: 'unsilenced' | 'silenced';
  suspension: 'unsuspended' | 'suspended';
  login: 'enabled' | 'disabled';
  migration: 'unmoved' | 'moved';
  approval: 'approved' | 'pending';
  confirmation: 'confirmed' | 'unconfirmed';
  sensitizing: 'unsensitized' | 'sensitized';
};
const ACTIVE: Regions = {
  locking: 'unlocked', silencing: 'unsilenced', suspension: 'unsuspended', login: 'enabled', migration: 'unmoved',
  approval: 'approved', confirmation: 'confirmed', sensitizing: 'unsensitized',
};
/** The state value of an existing account: every region at its first state unless overridden. */
const v = (overrides: Partial<Regions> = {}) => ({ existing: { ...ACTIVE, ...overrides } });
type Value = ReturnType<typeof v> | 'deleted';

// ── The named states of the issue, as starting snapshots at version 5 ────────────────────
const NAMED = ['active', 'locked', 'silenced', 'suspended', 'disabled', 'moved', 'pending', 'unconfirmed', 'sensitized', 'deleted'] as const;
type Named = (typeof NAMED)[number];
const START: Record<Named, AccountSnapshot> = {
  active: { value: v(), context: { accountId: A, movedToAccountId: null }, version: 5 },
  locked: { value: v({ locking: 'locked' }), context: { accountId: A, movedToAccountId: null }, version: 5 },
  silenced: { value: v({ silencing: 'silenced' }), context: { accountId: A, movedToAccountId: null }, version: 5 },
  suspended: { value: v({ suspension: 'suspended' }), context: { accountId: A, movedToAccountId: null }, version: 5 },
  disabled: { value: v({ login: 'disabled' }), context: { accountId: A, movedToAccountId: null }, version: 5 },
  moved: { value: v({ migration: 'moved' }), context: { accountId: A, movedToAccountId: 'b1' }, version: 5 },
  pending: { value: v({ approval: 'pending' }), context: { accountId: A, movedToAccountId: null }, version: 5 },
  unconfirmed: { value: v({ confirmation: 'unconfirmed' }), context: { accountId: A, movedToAccountId: null }, version: 5 },
  sensitized: { value: v({ sensitizing: 'sensitized' }), context: { accountId: A, movedToAccountId: null }, version: 5 },
  deleted: { value: 'deleted', context: { accountId: A, movedToAccountId: null }, version: 5 },
};

const EVENTS = {
  lock: { type: 'account.lock' },
  unlock: { type: 'account.unlock' },
  silence: { type: 'account.silence' },
  unsilence: { type: 'account.unsilence' },
  suspend: { type: 'account.suspend' },
  unsuspend: { type: 'account.unsuspend' },
  disable: { type: 'account.disable' },
  enable: { type: 'account.enable' },
  move: { type: 'account.move', targetAccountId: 'b2' },
  'move.current': { type: 'account.move', targetAccountId: 'b1' },
  'move.self': { type: 'account.move', targetAccountId: A },
  'move.empty': { type: 'account.move', targetAccountId: '' },
  unmove: { type: 'account.unmove' },
  approve: { type: 'account.approve' },
  confirm: { type: 'account.confirm' },
  sensitize: { type: 'account.sensitize' },
  unsensitize: { type: 'account.unsensitize' },
  delete: { type: 'account.delete' },
} satisfies Record<string, AccountEvent>;
type Label = keyof typeof EVENTS;

const e = (type: Exclude<AccountEmitted['type'], 'account.moved' | 'account.unmoved'>): AccountEmitted =>
  ({ type, accountId: A }) as AccountEmitted;
const moved = (targetAccountId: string, previousTargetAccountId: string | null): AccountEmitted => ({
  type: 'account.moved', accountId: A, targetAccountId, previousTargetAccountId,
});
const unmoved = (previousTargetAccountId: string): AccountEmitted => ({ type: 'account.unmoved', accountId: A, previousTargetAccountId });

// ── The table: every named state × every event ─────────────────────────────────────────────
// [next state value, emitted events, movedToAccountId afterwards] or NO.
const NO = 'not accepted' as const;
type Outcome = typeof NO | [Value, AccountEmitted[], string | null];

const TABLE: Record<Named, Record<Label, Outcome>> = {
  active: {
    lock: [v({ locking: 'locked' }), [e('account.locked')], null],
    unlock: NO,
    silence: [v({ silencing: 'silenced' }), [e('account.silenced')], null],
    unsilence: NO,
    suspend: [v({ suspension: 'suspended' }), [e('account.suspended')], null],
    unsuspend: NO,
    disable: [v({ login: 'disabled' }), [e('account.disabled')], null],
    enable: NO,
    move: [v({ migration: 'moved' }), [moved('b2', null)], 'b2'],
    'move.current': [v({ migration: 'moved' }), [moved('b1', null)], 'b1'],
    'move.self': NO,
    'move.empty': NO,
    unmove: NO,
    approve: NO,
    confirm: NO,
    delete: ['deleted', [e('account.deleted')], null],
    sensitize: [v({ sensitizing: 'sensitized' }), [e('account.sensitized')], null],
    unsensitize: NO,
  },
  locked: {
    lock: NO,
    unlock: [v(), [e('account.unlocked')], null],
    silence: [v({ locking: 'locked', silencing: 'silenced' }), [e('account.silenced')], null],
    unsilence: NO,
    suspend: [v({ locking: 'locked', suspension: 'suspended' }), [e('account.suspended')], null],
    unsuspend: NO,
    disable: [v({ locking: 'locked', login: 'disabled' }), [e('account.disabled')], null],
    enable: NO,
    move: [v({ locking: 'locked', migration: 'moved' }), [moved('b2', null)], 'b2'],
    'move.current': [v({ locking: 'locked', migration: 'moved' }), [moved('b1', null)], 'b1'],
    'move.self': NO,
    'move.empty': NO,
    unmove: NO,
    approve: NO,
    confirm: NO,
    delete: ['deleted', [e('account.deleted')], null],
    sensitize: [v({ locking: 'locked', sensitizing: 'sensitized' }), [e('account.sensitized')], null],
    unsensitize: NO,
  },
  silenced: {
    lock: [v({ silencing: 'silenced', locking: 'locked' }), [e('account.locked')], null],
    unlock: NO,
    silence: NO,
    unsilence: [v(), [e('account.unsilenced')], null],
    suspend: [v({ silencing: 'silenced', suspension: 'suspended' }), [e('account.suspended')], null],
    unsuspend: NO,
    disable: [v({ silencing: 'silenced', login: 'disabled' }), [e('account.disabled')], null],
    enable: NO,
    move: [v({ silencing: 'silenced', migration: 'moved' }), [moved('b2', null)], 'b2'],
    'move.current': [v({ silencing: 'silenced', migration: 'moved' }), [moved('b1', null)], 'b1'],
    'move.self': NO,
    'move.empty': NO,
    unmove: NO,
    approve: NO,
    confirm: NO,
    delete: ['deleted', [e('account.deleted')], null],
    sensitize: [v({ silencing: 'silenced', sensitizing: 'sensitized' }), [e('account.sensitized')], null],
    unsensitize: NO,
  },
  suspended: {
    // A suspended account's owner cannot act: no lock/unlock, no move/unmove.
    lock: NO,
    unlock: NO,
    silence: [v({ suspension: 'suspended', silencing: 'silenced' }), [e('account.silenced')], null],
    unsilence: NO,
    suspend: NO,
    unsuspend: [v(), [e('account.unsuspended')], null],
    disable: [v({ suspension: 'suspended', login: 'disabled' }), [e('account.disabled')], null],
    enable: NO,
    move: NO,
    'move.current': NO,
    'move.self': NO,
    'move.empty': NO,
    unmove: NO,
    approve: NO,
    confirm: NO,
    delete: ['deleted', [e('account.deleted')], null],
    sensitize: [v({ suspension: 'suspended', sensitizing: 'sensitized' }), [e('account.sensitized')], null],
    unsensitize: NO,
  },
  disabled: {
    lock: [v({ login: 'disabled', locking: 'locked' }), [e('account.locked')], null],
    unlock: NO,
    silence: [v({ login: 'disabled', silencing: 'silenced' }), [e('account.silenced')], null],
    unsilence: NO,
    suspend: [v({ login: 'disabled', suspension: 'suspended' }), [e('account.suspended')], null],
    unsuspend: NO,
    disable: NO,
    enable: [v(), [e('account.enabled')], null],
    move: [v({ login: 'disabled', migration: 'moved' }), [moved('b2', null)], 'b2'],
    'move.current': [v({ login: 'disabled', migration: 'moved' }), [moved('b1', null)], 'b1'],
    'move.self': NO,
    'move.empty': NO,
    unmove: NO,
    approve: NO,
    confirm: NO,
    delete: ['deleted', [e('account.deleted')], null],
    sensitize: [v({ login: 'disabled', sensitizing: 'sensitized' }), [e('account.sensitized')], null],
    unsensitize: NO,
  },
  moved: {
    lock: [v({ migration: 'moved', locking: 'locked' }), [e('account.locked')], 'b1'],
    unlock: NO,
    silence: [v({ migration: 'moved', silencing: 'silenced' }), [e('account.silenced')], 'b1'],
    unsilence: NO,
    suspend: [v({ migration: 'moved', suspension: 'suspended' }), [e('account.suspended')], 'b1'],
    unsuspend: NO,
    disable: [v({ migration: 'moved', login: 'disabled' }), [e('account.disabled')], 'b1'],
    enable: NO,
    // Moving again to a different target is allowed; a duplicate Move to the same one is not.
    move: [v({ migration: 'moved' }), [moved('b2', 'b1')], 'b2'],
    'move.current': NO,
    'move.self': NO,
    'move.empty': NO,
    unmove: [v(), [unmoved('b1')], null],
    approve: NO,
    confirm: NO,
    delete: ['deleted', [e('account.deleted')], 'b1'],
    sensitize: [v({ migration: 'moved', sensitizing: 'sensitized' }), [e('account.sensitized')], 'b1'],
    unsensitize: NO,
  },
  pending: {
    // A sign-up awaiting approval: the other regions work as for an active account.
    lock: [v({ approval: 'pending', locking: 'locked' }), [e('account.locked')], null],
    unlock: NO,
    silence: [v({ approval: 'pending', silencing: 'silenced' }), [e('account.silenced')], null],
    unsilence: NO,
    suspend: [v({ approval: 'pending', suspension: 'suspended' }), [e('account.suspended')], null],
    unsuspend: NO,
    disable: [v({ approval: 'pending', login: 'disabled' }), [e('account.disabled')], null],
    enable: NO,
    move: [v({ approval: 'pending', migration: 'moved' }), [moved('b2', null)], 'b2'],
    'move.current': [v({ approval: 'pending', migration: 'moved' }), [moved('b1', null)], 'b1'],
    'move.self': NO,
    'move.empty': NO,
    unmove: NO,
    approve: [v(), [e('account.approved')], null],
    confirm: NO,
    delete: ['deleted', [e('account.deleted')], null],
    sensitize: [v({ approval: 'pending', sensitizing: 'sensitized' }), [e('account.sensitized')], null],
    unsensitize: NO,
  },
  unconfirmed: {
    lock: [v({ confirmation: 'unconfirmed', locking: 'locked' }), [e('account.locked')], null],
    unlock: NO,
    silence: [v({ confirmation: 'unconfirmed', silencing: 'silenced' }), [e('account.silenced')], null],
    unsilence: NO,
    suspend: [v({ confirmation: 'unconfirmed', suspension: 'suspended' }), [e('account.suspended')], null],
    unsuspend: NO,
    disable: [v({ confirmation: 'unconfirmed', login: 'disabled' }), [e('account.disabled')], null],
    enable: NO,
    move: [v({ confirmation: 'unconfirmed', migration: 'moved' }), [moved('b2', null)], 'b2'],
    'move.current': [v({ confirmation: 'unconfirmed', migration: 'moved' }), [moved('b1', null)], 'b1'],
    'move.self': NO,
    'move.empty': NO,
    unmove: NO,
    approve: NO,
    confirm: [v(), [e('account.confirmed')], null],
    delete: ['deleted', [e('account.deleted')], null],
    sensitize: [v({ confirmation: 'unconfirmed', sensitizing: 'sensitized' }), [e('account.sensitized')], null],
    unsensitize: NO,
  },
  sensitized: {
    lock: [v({ sensitizing: 'sensitized', locking: 'locked' }), [e('account.locked')], null],
    unlock: NO,
    silence: [v({ sensitizing: 'sensitized', silencing: 'silenced' }), [e('account.silenced')], null],
    unsilence: NO,
    suspend: [v({ sensitizing: 'sensitized', suspension: 'suspended' }), [e('account.suspended')], null],
    unsuspend: NO,
    disable: [v({ sensitizing: 'sensitized', login: 'disabled' }), [e('account.disabled')], null],
    enable: NO,
    move: [v({ sensitizing: 'sensitized', migration: 'moved' }), [moved('b2', null)], 'b2'],
    'move.current': [v({ sensitizing: 'sensitized', migration: 'moved' }), [moved('b1', null)], 'b1'],
    'move.self': NO,
    'move.empty': NO,
    unmove: NO,
    approve: NO,
    confirm: NO,
    delete: ['deleted', [e('account.deleted')], null],
    sensitize: NO,
    unsensitize: [v(), [e('account.unsensitized')], null],
  },
  deleted: {
    lock: NO,
    unlock: NO,
    silence: NO,
    unsilence: NO,
    suspend: NO,
    unsuspend: NO,
    disable: NO,
    enable: NO,
    move: NO,
    'move.current': NO,
    'move.self': NO,
    'move.empty': NO,
    unmove: NO,
    approve: NO,
    confirm: NO,
    delete: NO,
    sensitize: NO,
    unsensitize: NO,
  },
};

const ROWS = NAMED.flatMap((state) =>
  (Object.keys(EVENTS) as Label[]).map((label) => {
    const outcome = TABLE[state][label];
    const expected = outcome === NO ? NO : `${outcome[0] === 'deleted' ? 'deleted' : describeValue(outcome[0])} [${outcome[1].map((x) => x.type).join(', ')}]`;
    return { state, label, outcome, expected };
  }),
);

/** "active" or the non-default regions, e.g. "locked+silenced". */
function describeValue(value: ReturnType<typeof v>): string {
  const set = (Object.keys(ACTIVE) as (keyof Regions)[]).filter((k) => value.existing[k] !== ACTIVE[k]).map((k) => value.existing[k]);
  return set.length === 0 ? 'active' : set.join('+');
}

describe('account machine: every named state × every event', () => {
  it('the table covers every event type and every state of every region', () => {
    expect([...new Set(Object.values(EVENTS).map((x) => x.type))].sort()).toEqual([...new Set(accountMachine.root.events)].sort());
    const regions = accountMachine.root.states.existing!.states;
    const machineStates = Object.entries(regions).flatMap(([region, node]) => Object.keys(node.states).map((s) => `${region}.${s}`));
    const covered = new Set<string>();
    for (const start of Object.values(START)) {
      if (start.value === 'deleted') continue;
      for (const [region, s] of Object.entries((start.value as ReturnType<typeof v>).existing)) covered.add(`${region}.${s}`);
    }
    expect([...covered].sort()).toEqual(machineStates.sort());
    expect(Object.keys(accountMachine.root.states).sort()).toEqual(['deleted', 'existing']);
    expect(ROWS).toHaveLength(NAMED.length * Object.keys(EVENTS).length);
  });

  it.each(ROWS)('$state + $label → $expected', ({ state, label, outcome }) => {
    const start = START[state];
    const result = step(accountMachine, start, EVENTS[label]);
    if (outcome === NO) {
      expect(result.accepted).toBe(false);
      expect(!result.accepted && result.rejection.reason).toBe('not_accepted');
      expect(result.snapshot).toEqual(start);
      expect(result.version).toBe(5);
      expect(result.emitted).toEqual([]);
      return;
    }
    const [next, emitted, movedTo] = outcome;
    expect(result.accepted).toBe(true);
    expect(result.changed).toBe(true);
    expect(result.snapshot).toEqual({ value: next, context: { accountId: A, movedToAccountId: movedTo }, version: 6 });
    expect(result.previousVersion).toBe(5);
    expect(result.emitted).toEqual(emitted);
  });
});

describe('account machine: orthogonal regions', () => {
  const both = (overrides: Partial<Regions>, movedToAccountId: string | null = null): AccountSnapshot => ({
    value: v(overrides),
    context: { accountId: A, movedToAccountId },
    version: 1,
  });

  it('lifting a suspension gives back the silenced, locked, disabled, moved account it was', () => {
    const start = both({ locking: 'locked', silencing: 'silenced', suspension: 'suspended', login: 'disabled', migration: 'moved' }, 'b1');
    const result = stepOrThrow(accountMachine, start, { type: 'account.unsuspend' });
    expect(result.snapshot.value).toEqual(v({ locking: 'locked', silencing: 'silenced', login: 'disabled', migration: 'moved' }));
    expect(result.snapshot.context.movedToAccountId).toBe('b1');
    expect(result.emitted).toEqual([e('account.unsuspended')]);
  });

  it('a locked, suspended account can unlock only after the suspension is lifted, and then announces it', () => {
    const start = both({ locking: 'locked', suspension: 'suspended' });
    expect(step(accountMachine, start, { type: 'account.unlock' }).accepted).toBe(false);
    const unsuspended = stepOrThrow(accountMachine, start, { type: 'account.unsuspend' });
    const unlocked = stepOrThrow(accountMachine, unsuspended.snapshot, { type: 'account.unlock' });
    expect(unlocked.snapshot.value).toEqual(v());
    expect(unlocked.emitted).toEqual([e('account.unlocked')]);
    expect(unlocked.version).toBe(3);
  });

  it('a moved, suspended account keeps its redirect and can still be deleted', () => {
    const start = both({ migration: 'moved', suspension: 'suspended' }, 'b1');
    expect(step(accountMachine, start, { type: 'account.unmove' }).accepted).toBe(false);
    expect(step(accountMachine, start, { type: 'account.move', targetAccountId: 'b2' }).accepted).toBe(false);
    const deleted = stepOrThrow(accountMachine, start, { type: 'account.delete' });
    expect(deleted.snapshot).toEqual({ value: 'deleted', context: { accountId: A, movedToAccountId: 'b1' }, version: 2 });
  });

  it('a deleted account accepts nothing, whatever it was before', () => {
    const rich = both({ locking: 'locked', silencing: 'silenced', suspension: 'suspended', login: 'disabled' });
    const deleted = stepOrThrow(accountMachine, rich, { type: 'account.delete' }).snapshot;
    for (const event of Object.values(EVENTS)) {
      const result = step(accountMachine, deleted, event);
      expect(result.accepted).toBe(false);
      expect(result.snapshot).toEqual(deleted);
    }
  });

  it('a chain of moves reports each previous target', () => {
    const one = stepOrThrow(accountMachine, START.active, { type: 'account.move', targetAccountId: 'b1' });
    const two = stepOrThrow(accountMachine, one.snapshot, { type: 'account.move', targetAccountId: 'b2' });
    const back = stepOrThrow(accountMachine, two.snapshot, { type: 'account.unmove' });
    expect([one.emitted, two.emitted, back.emitted]).toEqual([[moved('b1', null)], [moved('b2', 'b1')], [unmoved('b2')]]);
    expect(back.snapshot).toEqual({ value: v(), context: { accountId: A, movedToAccountId: null }, version: 8 });
  });
});

describe('account snapshots for services', () => {
  it('a new account starts active, unlocked, at version 0', () => {
    expect(create(accountMachine, { accountId: A }).snapshot).toEqual({
      value: v(),
      context: { accountId: A, movedToAccountId: null },
      version: 0,
    });
  });

  it('accountSnapshot seeds known flags without events and restores as a valid snapshot', () => {
    const seeded = accountSnapshot({ accountId: A, locked: true, silenced: true, movedToAccountId: 'b1' });
    expect(seeded).toEqual({
      value: v({ locking: 'locked', silencing: 'silenced', migration: 'moved' }),
      context: { accountId: A, movedToAccountId: 'b1' },
      version: 0,
    });
    expect(restore(accountMachine, seeded).matches({ existing: { locking: 'locked' } })).toBe(true);
    const unlocked = stepOrThrow(accountMachine, seeded, { type: 'account.unlock' });
    expect(unlocked.version).toBe(1);
    expect(unlocked.emitted).toEqual([e('account.unlocked')]);
  });

  it.each([
    ['an empty id', { accountId: '' }, 'account: accountId must be a non-empty string'],
    ['a redirect to itself', { accountId: A, movedToAccountId: A }, 'account: movedToAccountId must be another account'],
  ])('accountSnapshot refuses %s', (_label, seed, message) => {
    expect(() => accountSnapshot(seed)).toThrow(message);
  });

  it('refuses an input without an account id', () => {
    expect(() => step(accountMachine, undefined, { type: 'account.lock' }, { accountId: '' })).toThrow(
      'account: input.accountId must be a non-empty string',
    );
  });

  it.each([
    ['active', { locked: false, silenced: false, suspended: false, disabled: false, moved: false, movedToAccountId: null, approved: true, confirmed: true, sensitized: false, deleted: false }],
    ['locked', { locked: true, silenced: false, suspended: false, disabled: false, moved: false, movedToAccountId: null, approved: true, confirmed: true, sensitized: false, deleted: false }],
    ['silenced', { locked: false, silenced: true, suspended: false, disabled: false, moved: false, movedToAccountId: null, approved: true, confirmed: true, sensitized: false, deleted: false }],
    ['suspended', { locked: false, silenced: false, suspended: true, disabled: false, moved: false, movedToAccountId: null, approved: true, confirmed: true, sensitized: false, deleted: false }],
    ['disabled', { locked: false, silenced: false, suspended: false, disabled: true, moved: false, movedToAccountId: null, approved: true, confirmed: true, sensitized: false, deleted: false }],
    ['moved', { locked: false, silenced: false, suspended: false, disabled: false, moved: true, movedToAccountId: 'b1', approved: true, confirmed: true, sensitized: false, deleted: false }],
    ['pending', { locked: false, silenced: false, suspended: false, disabled: false, moved: false, movedToAccountId: null, approved: false, confirmed: true, sensitized: false, deleted: false }],
    ['unconfirmed', { locked: false, silenced: false, suspended: false, disabled: false, moved: false, movedToAccountId: null, approved: true, confirmed: false, sensitized: false, deleted: false }],
    ['sensitized', { locked: false, silenced: false, suspended: false, disabled: false, moved: false, movedToAccountId: null, approved: true, confirmed: true, sensitized: true, deleted: false }],
    ['deleted', { locked: false, silenced: false, suspended: false, disabled: false, moved: false, movedToAccountId: null, approved: false, confirmed: false, sensitized: false, deleted: true }],
  ] as const)('accountFlags(%s)', (named, flags) => {
    expect(accountFlags(START[named])).toEqual(flags);
  });
});

describe('account machine: sensitizing (definition 3)', () => {
  it('a definition-2 snapshot gets the region from accounts.sensitized_at, and the pair steps once each', () => {
    const { sensitizing: _s, ...v2Regions } = v({ locking: 'locked' }).existing;
    const stored = { value: { existing: v2Regions }, context: { accountId: A, movedToAccountId: null }, version: 7, definition: 2 };
    expect(upgradeSnapshot(accountDefinition, stored, { approved: true, confirmed: true }).value).toEqual(v({ locking: 'locked' }));
    const sensitized = upgradeSnapshot(accountDefinition, stored, { sensitized: true });
    expect(sensitized).toEqual({ value: v({ locking: 'locked', sensitizing: 'sensitized' }), context: { accountId: A, movedToAccountId: null }, version: 7 });
    expect(step(accountMachine, sensitized, { type: 'account.sensitize' }).accepted).toBe(false);
    const lifted = stepOrThrow(accountMachine, sensitized, { type: 'account.unsensitize' });
    expect(lifted.emitted).toEqual([e('account.unsensitized')]);
    expect(accountFlags(lifted.snapshot).sensitized).toBe(false);
    expect(accountSnapshot({ accountId: A, sensitized: true }).value).toEqual(v({ sensitizing: 'sensitized' }));
  });
});

describe('account machine: approval and confirmation (definition 2)', () => {
  it('a new sign-up awaiting approval and confirmation is seeded so, and each gate opens once', () => {
    const seeded = accountSnapshot({ accountId: A, approved: false, confirmed: false });
    expect(seeded.value).toEqual(v({ approval: 'pending', confirmation: 'unconfirmed' }));
    const approved = stepOrThrow(accountMachine, seeded, { type: 'account.approve' });
    expect(approved.emitted).toEqual([e('account.approved')]);
    expect(accountFlags(approved.snapshot)).toMatchObject({ approved: true, confirmed: false });
    // Approving twice is refused, as disabling twice is: nothing is written, nothing emitted.
    const again = step(accountMachine, approved.snapshot, { type: 'account.approve' });
    expect(again.accepted).toBe(false);
    expect(again.emitted).toEqual([]);
    const confirmed = stepOrThrow(accountMachine, approved.snapshot, { type: 'account.confirm' });
    expect(confirmed.emitted).toEqual([e('account.confirmed')]);
    expect(confirmed.snapshot).toEqual({ value: v(), context: { accountId: A, movedToAccountId: null }, version: 2 });
    expect(step(accountMachine, confirmed.snapshot, { type: 'account.confirm' }).accepted).toBe(false);
  });

  it('a suspended, pending sign-up can still be approved, and stays suspended', () => {
    const start: AccountSnapshot = { value: v({ approval: 'pending', suspension: 'suspended' }), context: { accountId: A, movedToAccountId: null }, version: 3 };
    const r = stepOrThrow(accountMachine, start, { type: 'account.approve' });
    expect(r.snapshot.value).toEqual(v({ suspension: 'suspended' }));
    expect(r.emitted).toEqual([e('account.approved')]);
  });

  // The shape definition 1 stored: five regions, no approval or confirmation.
  const V1 = {
    value: { existing: { locking: 'locked', login: 'enabled', migration: 'moved', silencing: 'unsilenced', suspension: 'unsuspended' } },
    context: { accountId: A, movedToAccountId: 'b1' },
    version: 4,
  };

  it('is definition 2, and a definition-1 snapshot of a pending, unconfirmed user migrates from the facts', () => {
    expect(accountDefinition.version).toBe(3);
    const migrated = upgradeSnapshot(accountDefinition, { ...V1, definition: 1 }, { approved: false, confirmed: false });
    expect(migrated).toEqual({
      value: v({ locking: 'locked', migration: 'moved', approval: 'pending', confirmation: 'unconfirmed' }),
      context: { accountId: A, movedToAccountId: 'b1' },
      version: 4,
    });
    const approved = stepOrThrow(accountMachine, migrated, { type: 'account.approve' });
    expect(approved.version).toBe(5);
    expect(approved.emitted).toEqual([e('account.approved')]);
    expect(accountFlags(approved.snapshot)).toMatchObject({ locked: true, moved: true, movedToAccountId: 'b1', approved: true, confirmed: false });
  });

  it('a definition-1 snapshot without facts (no definition stamp, a remote account) migrates approved and confirmed', () => {
    const migrated = upgradeSnapshot(accountDefinition, V1);
    expect(migrated.value).toEqual(v({ locking: 'locked', migration: 'moved' }));
    expect(step(accountMachine, migrated, { type: 'account.approve' }).accepted).toBe(false);
    expect(stepOrThrow(accountMachine, migrated, { type: 'account.unlock' }).emitted).toEqual([e('account.unlocked')]);
  });

  it('a deleted definition-1 snapshot stays deleted; a definition-2 snapshot is read as stored', () => {
    const deleted = { value: 'deleted', context: { accountId: A, movedToAccountId: null }, version: 9, definition: 1 };
    expect(upgradeSnapshot(accountDefinition, deleted, { approved: false })).toEqual({ value: 'deleted', context: { accountId: A, movedToAccountId: null }, version: 9 });
    const current = stampSnapshot(accountDefinition, START.pending);
    expect(current.definition).toBe(3);
    expect(upgradeSnapshot(accountDefinition, current, { approved: true })).toEqual(START.pending);
  });
});
