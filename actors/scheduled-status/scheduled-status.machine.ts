/**
 * The scheduled status actor: one per status a local user asked to publish later
 * (POST /api/v1/statuses with `scheduled_at`). Its table is SCHEDULED_STATUS_TABLE in
 * src/services/scheduled-statuses.ts; the status' parameters live in the row (`params`), not here.
 *
 * States (adjectives):
 *   scheduled   waiting for its time; the author may move the time or cancel it
 *   published   the status was created (context.statusId), in the transaction of this step
 *   cancelled   the author cancelled it (DELETE /api/v1/scheduled_statuses/:id)
 *   failed      its time came but the status could not be created: what createStatus refuses
 *               at publication (the post it replies to is gone, an attachment was deleted, the
 *               author's account is suspended or its login disabled). Mastodon drops such a
 *               scheduled status silently (PublishScheduledStatusWorker rescues RecordNotFound and
 *               RecordInvalid); Roost keeps the row with the reason, out of the API's list, and
 *               lets go of its attachments.
 *
 * Events (dotted imperatives) and what they emit (dotted past tense):
 *   create (input)                          → scheduled_status.scheduled {runAt}: the publish timer
 *   scheduled_status.reschedule {scheduledAt, now}
 *                                           → scheduled_status.rescheduled {runAt, previous}
 *                                             (the service moves the timer); refused when the new
 *                                             time is not more than 5 minutes after `now`
 *   scheduled_status.publish {due, now, statusId}
 *                                           → published; scheduled_status.published {statusId}
 *   scheduled_status.fail {due, now, reason} → failed; scheduled_status.failed {reason}
 *   scheduled_status.cancel                 → cancelled; scheduled_status.cancelled
 *
 * A timer names the time it was set for (`due`): publish and fail are accepted only when `due` is
 * the current scheduledAt and `now` is at or after it. A timer left from before a reschedule (one
 * already running when the time moved) is refused, and a timer delivered twice finds the actor
 * published: publication happens exactly once.
 */
import { emit, enqueueActions, setup } from 'xstate';
import type { PersistedSnapshot } from '../runtime/step.ts';
import { InvalidSnapshotError } from '../runtime/step.ts';
import { defineMachine } from '../runtime/definition.ts';

/** Mastodon's ScheduledStatus::MINIMUM_OFFSET: a time must be more than this far ahead. */
export const MINIMUM_SCHEDULE_OFFSET_MS = 5 * 60 * 1000;

export interface ScheduledStatusInput {
  scheduledStatusId: string;
  accountId: string;
  /** ISO instant. */
  scheduledAt: string;
}

export interface ScheduledStatusContext {
  scheduledStatusId: string;
  accountId: string;
  /** ISO instant, milliseconds kept. */
  scheduledAt: string;
  /** The status created at publication. */
  statusId: string | null;
  /** Why publication failed. */
  failure: string | null;
}

export type ScheduledStatusEvent =
  | { type: 'scheduled_status.reschedule'; scheduledAt: string; now: string }
  | { type: 'scheduled_status.publish'; due: string; now: string; statusId: string }
  | { type: 'scheduled_status.fail'; due: string; now: string; reason: string }
  | { type: 'scheduled_status.cancel' };

export type ScheduledStatusEmitted =
  | { type: 'scheduled_status.scheduled'; scheduledStatusId: string; accountId: string; runAt: string }
  | { type: 'scheduled_status.rescheduled'; scheduledStatusId: string; accountId: string; runAt: string; previous: string }
  | { type: 'scheduled_status.published'; scheduledStatusId: string; accountId: string; statusId: string }
  | { type: 'scheduled_status.failed'; scheduledStatusId: string; accountId: string; reason: string }
  | { type: 'scheduled_status.cancelled'; scheduledStatusId: string; accountId: string };

export type ScheduledStatusState = 'scheduled' | 'published' | 'cancelled' | 'failed';

export type ScheduledStatusSnapshot = PersistedSnapshot<ScheduledStatusContext>;

function ms(iso: unknown): number {
  return typeof iso === 'string' ? Date.parse(iso) : Number.NaN;
}

/**
 * Whether `scheduledAt` is far enough after `now` (Mastodon's validate_future_date: refused when
 * at or before now + 5 minutes). False for anything that is not an instant.
 */
export function scheduleTimeAcceptable(scheduledAt: string, now: string): boolean {
  const at = ms(scheduledAt);
  const n = ms(now);
  return Number.isFinite(at) && Number.isFinite(n) && at > n + MINIMUM_SCHEDULE_OFFSET_MS;
}

/** The timer is the current one and its time has come. */
function timerDue(context: ScheduledStatusContext, due: unknown, now: unknown): boolean {
  return typeof due === 'string' && ms(due) === ms(context.scheduledAt) && Number.isFinite(ms(now)) && ms(now) >= ms(context.scheduledAt);
}

export const scheduledStatusMachine = setup({
  types: {
    context: {} as ScheduledStatusContext,
    events: {} as ScheduledStatusEvent,
    input: {} as ScheduledStatusInput,
    emitted: {} as ScheduledStatusEmitted,
  },
  guards: {
    acceptableTime: ({ event }) => event.type === 'scheduled_status.reschedule' && scheduleTimeAcceptable(event.scheduledAt, event.now),
    publishable: ({ context, event }) =>
      event.type === 'scheduled_status.publish' && typeof event.statusId === 'string' && event.statusId !== '' && timerDue(context, event.due, event.now),
    failable: ({ context, event }) =>
      event.type === 'scheduled_status.fail' && typeof event.reason === 'string' && event.reason !== '' && timerDue(context, event.due, event.now),
  },
  actions: {
    announceScheduled: emit(({ context }) => ({
      type: 'scheduled_status.scheduled' as const,
      scheduledStatusId: context.scheduledStatusId,
      accountId: context.accountId,
      runAt: context.scheduledAt,
    })),
    reschedule: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'scheduled_status.reschedule') return;
      const runAt = new Date(event.scheduledAt).toISOString();
      enqueue.assign({ scheduledAt: runAt });
      enqueue.emit({ type: 'scheduled_status.rescheduled', scheduledStatusId: context.scheduledStatusId, accountId: context.accountId, runAt, previous: context.scheduledAt });
    }),
    publish: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'scheduled_status.publish') return;
      enqueue.assign({ statusId: event.statusId });
      enqueue.emit({ type: 'scheduled_status.published', scheduledStatusId: context.scheduledStatusId, accountId: context.accountId, statusId: event.statusId });
    }),
    fail: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'scheduled_status.fail') return;
      enqueue.assign({ failure: event.reason });
      enqueue.emit({ type: 'scheduled_status.failed', scheduledStatusId: context.scheduledStatusId, accountId: context.accountId, reason: event.reason });
    }),
    announceCancelled: emit(({ context }) => ({
      type: 'scheduled_status.cancelled' as const,
      scheduledStatusId: context.scheduledStatusId,
      accountId: context.accountId,
    })),
  },
}).createMachine({
  id: 'scheduled_status',
  context: ({ input }) => {
    if (typeof input?.scheduledStatusId !== 'string' || input.scheduledStatusId === '') {
      throw new TypeError('scheduled_status: input.scheduledStatusId must be a non-empty string');
    }
    if (typeof input.accountId !== 'string' || input.accountId === '') throw new TypeError('scheduled_status: input.accountId must be a non-empty string');
    if (!Number.isFinite(ms(input.scheduledAt))) throw new TypeError('scheduled_status: input.scheduledAt must be an ISO instant');
    return {
      scheduledStatusId: input.scheduledStatusId,
      accountId: input.accountId,
      scheduledAt: new Date(input.scheduledAt).toISOString(),
      statusId: null,
      failure: null,
    };
  },
  initial: 'scheduled',
  states: {
    scheduled: {
      entry: 'announceScheduled',
      on: {
        'scheduled_status.reschedule': { guard: 'acceptableTime', actions: 'reschedule' },
        'scheduled_status.publish': { guard: 'publishable', target: 'published', actions: 'publish' },
        'scheduled_status.fail': { guard: 'failable', target: 'failed', actions: 'fail' },
        'scheduled_status.cancel': { target: 'cancelled', actions: 'announceCancelled' },
      },
    },
    published: {},
    cancelled: {},
    failed: {},
  },
});

export type ScheduledStatusMachine = typeof scheduledStatusMachine;

/** The state of a persisted snapshot. */
export function scheduledStatusState(snapshot: ScheduledStatusSnapshot): ScheduledStatusState {
  return snapshot.value as ScheduledStatusState;
}

/** Definition 1: nothing was stored before it. */
export const scheduledStatusDefinition = defineMachine(scheduledStatusMachine, {
  version: 1,
  migrate: (_stored, from) => {
    throw new InvalidSnapshotError(`scheduled_status: no migration from definition ${from} to 1`);
  },
});
