import { describe, expect, it } from 'vitest';
import { accountMachine, accountSnapshot } from '../account/account.machine.ts';
import { create, step, stepOrThrow } from '../runtime/step.ts';
import { followMachine } from './follow.machine.ts';
import type {
  FollowAcceptedVia,
  FollowContext,
  FollowEmitted,
  FollowEvent,
  FollowOptions,
  FollowRequestFacts,
  FollowSnapshot,
  FollowState,
} from './follow.machine.ts';

const F = 'follower-1';
const T = 'target-1';

// ── Starting snapshots: one per state, at version 7, with non-default options so that a
// restart (fresh options) and a patch (kept options) are distinguishable. ──────────────────
const START_OPTIONS: FollowOptions = { reblogs: false, notify: false, languages: ['en'] };
/** After a (re)start with `{ notify: true }`: defaults + patch. */
const FRESH: FollowOptions = { reblogs: true, notify: true, languages: null };
/** After patching START_OPTIONS with `{ notify: true }`. */
const PATCHED: FollowOptions = { reblogs: false, notify: true, languages: ['en'] };

const STATES: FollowState[] = ['idle', 'requested', 'accepted', 'rejected', 'cancelled', 'undone', 'removed', 'blocked'];

function at(state: FollowState): FollowSnapshot {
  return { value: state, context: { followerId: F, targetId: T, ...START_OPTIONS }, version: 7 };
}

// ── Events, each under a label used by the table ──────────────────────────────────────────
const OPEN: FollowRequestFacts = { targetLocked: false, targetRemote: false, requesterSilenced: false, requesterMutedByTarget: false };
const EVENTS = {
  'request.open': { type: 'follow.request', ...OPEN, options: { notify: true } },
  'request.locked': { type: 'follow.request', ...OPEN, targetLocked: true, options: { notify: true } },
  'request.remote': { type: 'follow.request', ...OPEN, targetRemote: true, options: { notify: true } },
  'request.silenced': { type: 'follow.request', ...OPEN, requesterSilenced: true, options: { notify: true } },
  'request.muted': { type: 'follow.request', ...OPEN, requesterMutedByTarget: true, options: { notify: true } },
  'update.changed': { type: 'follow.update', options: { notify: true } },
  'update.same': { type: 'follow.update', options: { reblogs: false, languages: ['en'] } },
  accept: { type: 'follow.accept' },
  reject: { type: 'follow.reject' },
  cancel: { type: 'follow.cancel' },
  undo: { type: 'follow.undo' },
  remove: { type: 'follow.remove' },
  'unlocked.normal': { type: 'target.unlocked', requesterSilenced: false, requesterMutedByTarget: false },
  'unlocked.silenced': { type: 'target.unlocked', requesterSilenced: true, requesterMutedByTarget: false },
  'unlocked.muted': { type: 'target.unlocked', requesterSilenced: false, requesterMutedByTarget: true },
  'block.follower': { type: 'follow.block', by: 'follower' },
  'block.target': { type: 'follow.block', by: 'target' },
} satisfies Record<string, FollowEvent>;
type Label = keyof typeof EVENTS;

// ── Expected emitted events, with exact payloads ──────────────────────────────────────────
const requested: FollowEmitted = { type: 'follow.requested', followerId: F, targetId: T };
const accepted = (via: FollowAcceptedVia): FollowEmitted => ({ type: 'follow.accepted', followerId: F, targetId: T, via });
const rejected: FollowEmitted = { type: 'follow.rejected', followerId: F, targetId: T };
const cancelled: FollowEmitted = { type: 'follow.cancelled', followerId: F, targetId: T };
const undone: FollowEmitted = { type: 'follow.undone', followerId: F, targetId: T };
const removed: FollowEmitted = { type: 'follow.removed', followerId: F, targetId: T };
const blocked = (by: 'follower' | 'target', previous: 'requested' | 'accepted'): FollowEmitted => ({
  type: 'follow.blocked', followerId: F, targetId: T, by, previous,
});
const updated: FollowEmitted = { type: 'follow.updated', followerId: F, targetId: T, ...PATCHED };

// ── The table: every state × every event ──────────────────────────────────────────────────
// [next state, emitted events, options afterwards] or NO (the event is not accepted).
const NO = 'not accepted' as const;
type Outcome = typeof NO | [FollowState, FollowEmitted[], FollowOptions];
const KEPT = START_OPTIONS;

/** From idle and from every ended state: a new relationship under the mission rules. */
const START_ROWS = {
  'request.open': ['accepted', [accepted('automatic')], FRESH],
  'request.locked': ['requested', [requested], FRESH],
  'request.remote': ['requested', [requested], FRESH],
  'request.silenced': ['requested', [requested], FRESH],
  'request.muted': ['requested', [requested], FRESH],
  'update.changed': NO,
  'update.same': NO,
  accept: NO,
  reject: NO,
  cancel: NO,
  undo: NO,
  remove: NO,
  'unlocked.normal': NO,
  'unlocked.silenced': NO,
  'unlocked.muted': NO,
  'block.follower': NO,
  'block.target': NO,
} satisfies Record<Label, Outcome>;

const TABLE: Record<FollowState, Record<Label, Outcome>> = {
  idle: START_ROWS,
  requested: {
    // Re-POST of /follow while pending: only the options change; facts are not re-evaluated.
    'request.open': ['requested', [updated], PATCHED],
    'request.locked': ['requested', [updated], PATCHED],
    'request.remote': ['requested', [updated], PATCHED],
    'request.silenced': ['requested', [updated], PATCHED],
    'request.muted': ['requested', [updated], PATCHED],
    'update.changed': ['requested', [updated], PATCHED],
    'update.same': ['requested', [], KEPT],
    accept: ['accepted', [accepted('approval')], KEPT],
    reject: ['rejected', [rejected], KEPT],
    cancel: ['cancelled', [cancelled], KEPT],
    undo: ['cancelled', [cancelled], KEPT],
    remove: NO,
    'unlocked.normal': ['accepted', [accepted('unlock')], KEPT],
    'unlocked.silenced': ['requested', [], KEPT],
    'unlocked.muted': ['requested', [], KEPT],
    'block.follower': ['blocked', [blocked('follower', 'requested')], KEPT],
    'block.target': ['blocked', [blocked('target', 'requested')], KEPT],
  },
  accepted: {
    'request.open': ['accepted', [updated], PATCHED],
    'request.locked': ['accepted', [updated], PATCHED],
    'request.remote': ['accepted', [updated], PATCHED],
    'request.silenced': ['accepted', [updated], PATCHED],
    'request.muted': ['accepted', [updated], PATCHED],
    'update.changed': ['accepted', [updated], PATCHED],
    'update.same': ['accepted', [], KEPT],
    accept: NO,
    reject: NO,
    cancel: NO,
    undo: ['undone', [undone], KEPT],
    remove: ['removed', [removed], KEPT],
    'unlocked.normal': NO,
    'unlocked.silenced': NO,
    'unlocked.muted': NO,
    'block.follower': ['blocked', [blocked('follower', 'accepted')], KEPT],
    'block.target': ['blocked', [blocked('target', 'accepted')], KEPT],
  },
  rejected: START_ROWS,
  cancelled: START_ROWS,
  undone: START_ROWS,
  removed: START_ROWS,
  blocked: START_ROWS,
};

const ROWS = STATES.flatMap((state) =>
  (Object.keys(EVENTS) as Label[]).map((label) => {
    const outcome = TABLE[state][label];
    const expected = outcome === NO ? NO : `${outcome[0]} [${outcome[1].map((e) => e.type).join(', ')}]`;
    return { state, label, outcome, expected };
  }),
);

function sameOptions(a: FollowOptions, b: FollowOptions): boolean {
  return JSON.stringify([a.reblogs, a.notify, a.languages]) === JSON.stringify([b.reblogs, b.notify, b.languages]);
}

describe('follow machine: every state × every event', () => {
  it('the table covers exactly the machine\'s states and event types', () => {
    expect(Object.keys(followMachine.root.states).sort()).toEqual([...STATES].sort());
    expect(Object.keys(TABLE).sort()).toEqual([...STATES].sort());
    const tableEventTypes = new Set(Object.values(EVENTS).map((event) => event.type));
    expect([...tableEventTypes].sort()).toEqual([...new Set(followMachine.root.events)].sort());
    expect(ROWS).toHaveLength(STATES.length * Object.keys(EVENTS).length);
  });

  it.each(ROWS)('$state + $label → $expected', ({ state, label, outcome }) => {
    const start = at(state);
    const result = step(followMachine, start, EVENTS[label]);
    if (outcome === NO) {
      expect(result.accepted).toBe(false);
      expect(!result.accepted && result.rejection.reason).toBe('not_accepted');
      expect(!result.accepted && result.rejection.state).toBe(state);
      expect(result.snapshot).toEqual(start);
      expect(result.version).toBe(7);
      expect(result.emitted).toEqual([]);
      return;
    }
    const [next, emitted, options] = outcome;
    const expectedContext: FollowContext = { followerId: F, targetId: T, ...options };
    expect(result.accepted).toBe(true);
    expect(result.snapshot).toEqual({ value: next, context: expectedContext, version: 8 });
    expect(result.previousVersion).toBe(7);
    expect(result.version).toBe(8);
    expect(result.emitted).toEqual(emitted);
    expect(result.changed).toBe(next !== state || !sameOptions(options, START_OPTIONS));
  });
});

describe('follow machine: mission rules', () => {
  it('a follow from a silenced requester, or one muted by the target, becomes a pending request even when the target is unlocked', () => {
    for (const facts of [
      { ...OPEN, requesterSilenced: true },
      { ...OPEN, requesterMutedByTarget: true },
      { ...OPEN, requesterSilenced: true, requesterMutedByTarget: true },
    ]) {
      const result = stepOrThrow(followMachine, undefined, { type: 'follow.request', ...facts }, { followerId: F, targetId: T });
      expect(result.snapshot.value).toBe('requested');
      expect(result.emitted).toEqual([requested]);
    }
    // …and the control: the same unlocked target accepts a normal requester at once.
    const normal = stepOrThrow(followMachine, undefined, { type: 'follow.request', ...OPEN }, { followerId: F, targetId: T });
    expect(normal.snapshot.value).toBe('accepted');
    expect(normal.emitted).toEqual([accepted('automatic')]);
  });

  it('when the target switches from locked to unlocked, pending requests are accepted, except those from silenced or muted requesters, which stay pending', () => {
    // The target is locked: three requests go pending.
    const target = accountSnapshot({ accountId: T, locked: true });
    const requesters = {
      normal: { requesterSilenced: false, requesterMutedByTarget: false },
      silenced: { requesterSilenced: true, requesterMutedByTarget: false },
      muted: { requesterSilenced: false, requesterMutedByTarget: true },
    };
    const follows = Object.fromEntries(
      Object.entries(requesters).map(([name, facts]) => {
        const r = stepOrThrow(
          followMachine,
          undefined,
          { type: 'follow.request', ...OPEN, ...facts, targetLocked: true },
          { followerId: `${name}-1`, targetId: T },
        );
        expect(r.snapshot.value).toBe('requested');
        return [name, r.snapshot];
      }),
    ) as Record<keyof typeof requesters, FollowSnapshot>;

    // The target unlocks: the account emits account.unlocked …
    const unlock = stepOrThrow(accountMachine, target, { type: 'account.unlock' });
    expect(unlock.emitted).toEqual([{ type: 'account.unlocked', accountId: T }]);

    // … and the follow service relays target.unlocked, with facts, to each pending request.
    const after = Object.fromEntries(
      (Object.keys(requesters) as (keyof typeof requesters)[]).map((name) => [
        name,
        stepOrThrow(followMachine, follows[name], { type: 'target.unlocked', ...requesters[name] }),
      ]),
    ) as Record<keyof typeof requesters, ReturnType<typeof stepOrThrow<typeof followMachine>>>;

    expect(after.normal.snapshot.value).toBe('accepted');
    expect(after.normal.emitted).toEqual([{ type: 'follow.accepted', followerId: 'normal-1', targetId: T, via: 'unlock' }]);
    for (const name of ['silenced', 'muted'] as const) {
      expect(after[name].snapshot.value).toBe('requested');
      expect(after[name].changed).toBe(false);
      expect(after[name].emitted).toEqual([]);
    }

    // No leaking: nothing any actor emitted mentions a mute or a silence.
    const everything = JSON.stringify([unlock.emitted, ...Object.values(after).map((r) => r.emitted)]);
    expect(everything).not.toMatch(/mute|silence/i);

    // The muted requester is accepted only through the normal approval.
    const approved = stepOrThrow(followMachine, after.muted.snapshot, { type: 'follow.accept' });
    expect(approved.snapshot.value).toBe('accepted');
    expect(approved.emitted).toEqual([{ type: 'follow.accepted', followerId: 'muted-1', targetId: T, via: 'approval' }]);
  });

  it('otherwise: an unlocked local target + normal requester → accepted at once; a locked or remote target → requested', () => {
    const input = { followerId: F, targetId: T };
    expect(step(followMachine, undefined, EVENTS['request.open'], input).snapshot.value).toBe('accepted');
    expect(step(followMachine, undefined, EVENTS['request.locked'], input).snapshot.value).toBe('requested');
    expect(step(followMachine, undefined, EVENTS['request.remote'], input).snapshot.value).toBe('requested');
  });
});

describe('follow machine: lifecycle', () => {
  it('starts idle with default options at version 0', () => {
    expect(create(followMachine, { followerId: F, targetId: T }).snapshot).toEqual({
      value: 'idle',
      context: { followerId: F, languages: null, notify: false, reblogs: true, targetId: T },
      version: 0,
    });
  });

  it('reaches every state from idle through events alone', () => {
    const seen = new Set<string>(['idle']);
    let frontier: FollowSnapshot[] = [create(followMachine, { followerId: F, targetId: T }).snapshot];
    while (frontier.length > 0) {
      const next: FollowSnapshot[] = [];
      for (const snapshot of frontier) {
        for (const event of Object.values(EVENTS)) {
          const result = step(followMachine, snapshot, event);
          const value = result.snapshot.value as string;
          if (result.accepted && !seen.has(value)) {
            seen.add(value);
            next.push(result.snapshot);
          }
        }
      }
      frontier = next;
    }
    expect([...seen].sort()).toEqual([...STATES].sort());
  });

  it('the same actor restarts after the relationship ended, with fresh options and a growing version', () => {
    const input = { followerId: F, targetId: T };
    const a = stepOrThrow(followMachine, undefined, { type: 'follow.request', ...OPEN, options: { reblogs: false, languages: ['de'] } }, input);
    const b = stepOrThrow(followMachine, a.snapshot, { type: 'follow.undo' });
    const c = stepOrThrow(followMachine, b.snapshot, { type: 'follow.request', ...OPEN, targetLocked: true });
    expect([a.snapshot.value, b.snapshot.value, c.snapshot.value]).toEqual(['accepted', 'undone', 'requested']);
    expect([a.version, b.version, c.version]).toEqual([1, 2, 3]);
    expect(c.snapshot.context).toEqual({ followerId: F, targetId: T, reblogs: true, notify: false, languages: null });
    expect(c.emitted).toEqual([requested]);
  });

  it('keeps options a patch does not mention, clears languages with null, normalises an empty list to null and drops duplicates', () => {
    const start: FollowSnapshot = { value: 'accepted', context: { followerId: F, targetId: T, reblogs: false, notify: true, languages: ['en', 'de'] }, version: 1 };
    const dedup = stepOrThrow(followMachine, start, { type: 'follow.update', options: { languages: ['fr', 'fr', 'en'] } });
    expect(dedup.snapshot.context).toEqual({ followerId: F, targetId: T, reblogs: false, notify: true, languages: ['fr', 'en'] });
    expect(dedup.emitted).toEqual([{ type: 'follow.updated', followerId: F, targetId: T, reblogs: false, notify: true, languages: ['fr', 'en'] }]);
    const emptied = stepOrThrow(followMachine, dedup.snapshot, { type: 'follow.update', options: { languages: [] } });
    expect(emptied.snapshot.context.languages).toBeNull();
    const sameAsNull = stepOrThrow(followMachine, emptied.snapshot, { type: 'follow.update', options: { languages: null } });
    expect(sameAsNull.changed).toBe(false);
    expect(sameAsNull.emitted).toEqual([]);
    // An inbound duplicate Follow carries no options: accepted, nothing changes.
    const duplicate = stepOrThrow(followMachine, sameAsNull.snapshot, { type: 'follow.request', ...OPEN });
    expect(duplicate.changed).toBe(false);
    expect(duplicate.emitted).toEqual([]);
  });

  it('never says why a request is pending', () => {
    for (const label of ['request.locked', 'request.remote', 'request.silenced', 'request.muted'] as const) {
      const result = stepOrThrow(followMachine, undefined, EVENTS[label], { followerId: F, targetId: T });
      expect(result.emitted).toEqual([requested]);
    }
  });

  it.each([
    ['an empty follower id', { followerId: '', targetId: T }, 'follow: input.followerId must be a non-empty string'],
    ['an empty target id', { followerId: F, targetId: '' }, 'follow: input.targetId must be a non-empty string'],
    ['a self-follow', { followerId: F, targetId: F }, 'follow: an account cannot follow itself'],
  ])('refuses %s as input', (_label, input, message) => {
    expect(() => step(followMachine, undefined, EVENTS['request.open'], input)).toThrow(message);
  });
});
