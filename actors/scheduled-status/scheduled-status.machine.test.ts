import { describe, expect, it } from 'vitest';
import { create, step } from '../runtime/step.ts';
import { upgradeSnapshot } from '../runtime/definition.ts';
import {
  scheduleTimeAcceptable,
  scheduledStatusDefinition,
  scheduledStatusMachine,
  type ScheduledStatusContext,
  type ScheduledStatusEmitted,
  type ScheduledStatusEvent,
  type ScheduledStatusSnapshot,
  type ScheduledStatusState,
} from './scheduled-status.machine.ts';

const S = 'sched-1';
const A = 'acct-1';
const AT = '2026-01-01T12:00:00.123Z';
const LATER = '2026-01-01T13:00:00.456Z';
const BEFORE = '2026-01-01T11:59:59.999Z';
/** Five minutes before AT: AT is exactly 5 minutes ahead, which Mastodon refuses. */
const FIVE_BEFORE = '2026-01-01T11:55:00.123Z';
const JUST_OVER_FIVE_BEFORE = '2026-01-01T11:55:00.122Z';
const STATUS = 'status-9';

const BASE: ScheduledStatusContext = { scheduledStatusId: S, accountId: A, scheduledAt: AT, statusId: null, failure: null };
const STARTS = {
  scheduled: ['scheduled', BASE],
  published: ['published', { ...BASE, statusId: STATUS }],
  cancelled: ['cancelled', BASE],
  failed: ['failed', { ...BASE, failure: 'in_reply_to_gone' }],
} satisfies Record<string, [ScheduledStatusState, ScheduledStatusContext]>;
type Start = keyof typeof STARTS;

function at(start: Start): ScheduledStatusSnapshot {
  const [value, context] = STARTS[start];
  return { value, context, version: 4 };
}

const EVENTS = {
  reschedule: { type: 'scheduled_status.reschedule', scheduledAt: LATER, now: AT },
  'reschedule.exactly_5_min': { type: 'scheduled_status.reschedule', scheduledAt: AT, now: FIVE_BEFORE },
  'reschedule.just_over_5_min': { type: 'scheduled_status.reschedule', scheduledAt: AT, now: JUST_OVER_FIVE_BEFORE },
  'reschedule.past': { type: 'scheduled_status.reschedule', scheduledAt: BEFORE, now: AT },
  'reschedule.garbage': { type: 'scheduled_status.reschedule', scheduledAt: 'soon', now: AT },
  publish: { type: 'scheduled_status.publish', due: AT, now: AT, statusId: STATUS },
  'publish.late': { type: 'scheduled_status.publish', due: AT, now: LATER, statusId: STATUS },
  'publish.early': { type: 'scheduled_status.publish', due: AT, now: BEFORE, statusId: STATUS },
  'publish.stale_timer': { type: 'scheduled_status.publish', due: BEFORE, now: AT, statusId: STATUS },
  'publish.no_status': { type: 'scheduled_status.publish', due: AT, now: AT, statusId: '' },
  fail: { type: 'scheduled_status.fail', due: AT, now: AT, reason: 'in_reply_to_gone' },
  'fail.stale_timer': { type: 'scheduled_status.fail', due: LATER, now: LATER, reason: 'in_reply_to_gone' },
  cancel: { type: 'scheduled_status.cancel' },
} satisfies Record<string, ScheduledStatusEvent>;
type Label = keyof typeof EVENTS;

const rescheduled = (runAt: string, previous = AT): ScheduledStatusEmitted => ({ type: 'scheduled_status.rescheduled', scheduledStatusId: S, accountId: A, runAt, previous });
const published: ScheduledStatusEmitted = { type: 'scheduled_status.published', scheduledStatusId: S, accountId: A, statusId: STATUS };
const failed: ScheduledStatusEmitted = { type: 'scheduled_status.failed', scheduledStatusId: S, accountId: A, reason: 'in_reply_to_gone' };
const cancelled: ScheduledStatusEmitted = { type: 'scheduled_status.cancelled', scheduledStatusId: S, accountId: A };

type Refused = { refused: string };
type Outcome = Refused | [ScheduledStatusState, ScheduledStatusEmitted[], Partial<ScheduledStatusContext>];
const no = (refused: string): Refused => ({ refused });

const ENDED = (why: string): Record<Label, Outcome> =>
  Object.fromEntries((Object.keys(EVENTS) as Label[]).map((label) => [label, no(why)])) as Record<Label, Outcome>;

const TABLE: Record<Start, Record<Label, Outcome>> = {
  scheduled: {
    reschedule: ['scheduled', [rescheduled(LATER)], { scheduledAt: LATER }],
    'reschedule.exactly_5_min': no('not more than 5 minutes ahead'),
    'reschedule.just_over_5_min': ['scheduled', [rescheduled(AT)], {}],
    'reschedule.past': no('in the past'),
    'reschedule.garbage': no('not an instant'),
    publish: ['published', [published], { statusId: STATUS }],
    'publish.late': ['published', [published], { statusId: STATUS }],
    'publish.early': no('its time has not come'),
    'publish.stale_timer': no('a timer set for another time'),
    'publish.no_status': no('no status'),
    fail: ['failed', [failed], { failure: 'in_reply_to_gone' }],
    'fail.stale_timer': no('a timer set for another time'),
    cancel: ['cancelled', [cancelled], {}],
  },
  // Ended states accept nothing: a timer delivered twice publishes once.
  published: ENDED('published'),
  cancelled: ENDED('cancelled'),
  failed: ENDED('failed'),
};

const ROWS = (Object.keys(STARTS) as Start[]).flatMap((start) =>
  (Object.keys(EVENTS) as Label[]).map((label) => {
    const outcome = TABLE[start][label];
    const expected = 'refused' in outcome ? `refused (${outcome.refused})` : `${outcome[0]} [${outcome[1].map((e) => e.type).join(', ')}]`;
    return { start, label, outcome, expected };
  }),
);

describe('scheduled status machine: every state × every event', () => {
  it("the table covers exactly the machine's states and event types", () => {
    expect(Object.keys(scheduledStatusMachine.root.states).sort()).toEqual(['cancelled', 'failed', 'published', 'scheduled']);
    expect(Object.keys(STARTS).sort()).toEqual(['cancelled', 'failed', 'published', 'scheduled']);
    const types = new Set(Object.values(EVENTS).map((e) => e.type));
    expect([...types].sort()).toEqual([...new Set(scheduledStatusMachine.root.events)].sort());
    expect(ROWS).toHaveLength(4 * Object.keys(EVENTS).length);
  });

  it.each(ROWS)('$start + $label → $expected', ({ start, label, outcome }) => {
    const before = at(start);
    const result = step(scheduledStatusMachine, before, EVENTS[label]);
    if ('refused' in outcome) {
      expect(result.accepted).toBe(false);
      expect(!result.accepted && result.rejection.reason).toBe('not_accepted');
      expect(result.snapshot).toEqual(before);
      expect(result.version).toBe(4);
      expect(result.emitted).toEqual([]);
      return;
    }
    const [next, emitted, changes] = outcome;
    expect(result.accepted).toBe(true);
    expect(result.snapshot).toEqual({ value: next, context: { ...before.context, ...changes }, version: 5 });
    expect(result.emitted).toEqual(emitted);
  });
});

describe('scheduled status machine: rules', () => {
  it('created: scheduled, version 0, asks for its publish timer at the time (milliseconds kept)', () => {
    const r = create(scheduledStatusMachine, { scheduledStatusId: S, accountId: A, scheduledAt: AT });
    expect(r.snapshot).toEqual({ value: 'scheduled', context: BASE, version: 0 });
    expect(r.emitted).toEqual([{ type: 'scheduled_status.scheduled', scheduledStatusId: S, accountId: A, runAt: AT }]);
  });

  it('an offset time is kept as the same instant in UTC', () => {
    const r = create(scheduledStatusMachine, { scheduledStatusId: S, accountId: A, scheduledAt: '2026-01-01T14:00:00.123+02:00' });
    expect(r.snapshot.context.scheduledAt).toBe(AT);
  });

  it('refuses a creation without ids or time (a bug, not a client error)', () => {
    expect(() => create(scheduledStatusMachine, { scheduledStatusId: '', accountId: A, scheduledAt: AT })).toThrow(TypeError);
    expect(() => create(scheduledStatusMachine, { scheduledStatusId: S, accountId: A, scheduledAt: 'tomorrow' })).toThrow(TypeError);
  });

  it('after a reschedule the old timer is refused and the new one publishes', () => {
    const moved = step(scheduledStatusMachine, at('scheduled'), EVENTS.reschedule);
    expect(moved.accepted).toBe(true);
    const old = step(scheduledStatusMachine, moved.snapshot, { type: 'scheduled_status.publish', due: AT, now: LATER, statusId: STATUS });
    expect(old.accepted).toBe(false);
    const current = step(scheduledStatusMachine, moved.snapshot, { type: 'scheduled_status.publish', due: LATER, now: LATER, statusId: STATUS });
    expect(current.accepted).toBe(true);
    expect(current.snapshot.value).toBe('published');
  });

  it('the 5-minute rule, as Mastodon: more than 5 minutes ahead', () => {
    expect(scheduleTimeAcceptable(AT, FIVE_BEFORE)).toBe(false);
    expect(scheduleTimeAcceptable(AT, JUST_OVER_FIVE_BEFORE)).toBe(true);
    expect(scheduleTimeAcceptable('nope', AT)).toBe(false);
  });

  it('definition 1 reads its own snapshots and refuses newer ones', () => {
    const snap = at('scheduled');
    expect(upgradeSnapshot(scheduledStatusDefinition, { ...snap, definition: 1 })).toEqual(snap);
    expect(() => upgradeSnapshot(scheduledStatusDefinition, { ...snap, definition: 2 })).toThrow();
  });
});
