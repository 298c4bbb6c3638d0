/**
 * Scheduled statuses (Mastodon's ScheduledStatus), each stepped through its actor
 * (actors/scheduled-status) by the actor store:
 *
 *   scheduleStatus           POST /api/v1/statuses with `scheduled_at`: the same checks as a status
 *                            (checkNewStatus), then the 5-minute rule and the limits; the row, its
 *                            actor, its reserved attachments and its publish timer in one
 *                            transaction. A time already past posts the status now (Mastodon's
 *                            PostStatusService drops such a scheduled_at).
 *   rescheduleStatus         PUT /api/v1/scheduled_statuses/:id: a new time (same rules); the timer
 *                            moves with it
 *   cancelScheduledStatus    DELETE /api/v1/scheduled_statuses/:id: cancelled, timer dropped,
 *                            attachments let go
 *   publishScheduledStatus   the publish timer (services/timers.ts): createStatus with the stored
 *                            parameters, its attachments and poll, and the actor's `published`
 *                            step in the status' own transaction; what createStatus refuses
 *                            (reply target gone, an attachment deleted, the account suspended)
 *                            ends the actor `failed` and lets go of the attachments
 *
 * The rules as Mastodon words them (app/models/scheduled_status.rb, config/locales/en.yml):
 *   - the time must be more than 5 minutes ahead: 422 "Validation failed: Scheduled at The scheduled
 *     date must be in the future" (the text of Mastodon's docs; its newest locale file says
 *     "date must be in the future");
 *   - at most `limits.scheduledStatuses.total` (300) pending per account: "You have exceeded the
 *     limit of 300 scheduled posts";
 *   - at most `limits.scheduledStatuses.daily` (25, Mastodon's DAILY_LIMIT) pending on one UTC day:
 *     "You have exceeded the limit of 25 scheduled posts for today".
 * One account's schedulings are serialised by a transaction-scoped advisory lock, so two requests
 * at once cannot both take the last place.
 */
import type { EntityManager } from '@mikro-orm/core';
import type { PersistedSnapshotOf } from '../../actors/runtime/step.ts';
import {
  MINIMUM_SCHEDULE_OFFSET_MS,
  scheduledStatusDefinition,
  scheduledStatusState,
  type ScheduledStatusMachine,
  type ScheduledStatusSnapshot,
} from '../../actors/scheduled-status/scheduled-status.machine.ts';
import type { Services } from '../context.ts';
import { AccountSchema, ScheduledStatusSchema, UserSchema, type ScheduledStatus } from '../db/entities/index.ts';
import { sqlFromEm, type Sql } from '../db/sql.ts';
import { RoostError, notFound, type ErrorDetails } from '../lib/errors.ts';
import type { ScheduledStatusParams } from '../serializers/scheduled-status.ts';
import { createActor, stepActor, type ActorTable, type Origin, type TimerChange } from './actor-store.ts';
import { mediaForNewStatus } from './media.ts';
import { isId } from './reads/page.ts';
import { IDEMPOTENCY_TTL_MS, checkNewStatus, createStatus, type CreateStatusInput, type StatusAuthor } from './statuses.ts';

/** Mastodon's 422 texts. */
export const TOO_SOON = 'The scheduled date must be in the future';
export const INVALID_TIME = 'is invalid';
export const overTotalLimit = (n: number) => `You have exceeded the limit of ${n} scheduled posts`;
export const overDailyLimit = (n: number) => `You have exceeded the limit of ${n} scheduled posts for today`;

const publishKey = (id: string) => `scheduled_status.publish:${id}`;

/** The publish timer at `runAt`, in place of any earlier one. */
const publishAt = (id: string, runAt: string): TimerChange[] => [
  { cancel: [publishKey(id)] },
  { schedule: { type: 'scheduled_status.publish', scheduledStatusId: id, scheduledAt: runAt }, runAt: new Date(runAt), key: publishKey(id) },
];

/**
 * The scheduled status lifecycle's table: one row per scheduled status, created by
 * scheduleStatus (no `insert`: a missing one is a 404), its state columns projected from the
 * snapshot, its publish timer declared (moved on a reschedule, dropped on cancel).
 */
export const SCHEDULED_STATUS_TABLE: ActorTable<ScheduledStatusMachine, string, ScheduledStatus> = {
  kind: 'scheduled_status',
  table: 'scheduled_statuses',
  entity: ScheduledStatusSchema,
  definition: scheduledStatusDefinition,
  locate: (id) => ({ where: 'id = $1', params: [id] }),
  // Only read when a row has no snapshot, which scheduleStatus never leaves behind.
  input: (id) => ({ scheduledStatusId: id }) as never,
  casts: { params: 'jsonb' },
  project: (snapshot, { now }) => columnsOf(snapshot, now),
  timers: {
    'scheduled_status.scheduled': (e) => publishAt(e.scheduledStatusId, e.runAt),
    'scheduled_status.rescheduled': (e) => publishAt(e.scheduledStatusId, e.runAt),
    'scheduled_status.cancelled': (e) => [{ cancel: [publishKey(e.scheduledStatusId)] }],
  },
};

function columnsOf(snapshot: PersistedSnapshotOf<ScheduledStatusMachine>, now: Date): Record<string, unknown> {
  const c = snapshot.context;
  return {
    state: scheduledStatusState(snapshot as ScheduledStatusSnapshot),
    scheduled_at: new Date(c.scheduledAt),
    status_id: c.statusId,
    failure: c.failure,
    updated_at: now,
  };
}

/**
 * Locks the attachments a scheduled status reserved, before its row: publication locks them first
 * too (createStatus' mediaForNewStatus, then the actor's row), so a cancel racing the timer waits
 * rather than deadlocks.
 */
async function lockReservedMedia(sql: Sql, id: string): Promise<void> {
  await sql.query(`select id from media_attachments where scheduled_status_id = $1 order by id for update`, [id]);
}

/** A cancelled or failed scheduled status lets go of its attachments (they may be posted again). */
async function releaseReservedMedia(sql: Sql, id: string, now: Date): Promise<void> {
  await sql.query(`update media_attachments set scheduled_status_id = null, position = null, updated_at = $2 where scheduled_status_id = $1`, [id, now]);
}

// ── The time ─────────────────────────────────────────────────────────────────────────────

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * An ISO 8601 time as clients send `scheduled_at` ("2026-03-01T12:00:00.123Z", an offset, or a
 * bare date, which is midnight UTC; no offset means UTC, as Ruby's to_datetime reads it).
 * Milliseconds are kept (finer digits dropped). Null for anything else.
 */
export function parseScheduledAt(raw: string): Date | null {
  const m = ISO.exec(raw.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone = 'Z'] = m;
  const year = Number(y), month = Number(mo), day = Number(d), hour = Number(h), minute = Number(mi), second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const millis = Number(frac.padEnd(3, '0').slice(0, 3));
  let t = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  if (new Date(Date.UTC(year, month - 1, day)).getUTCDate() !== day) return null;
  if (zone.toUpperCase() !== 'Z') {
    const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
    const offset = (Number(z[2]) * 60 + Number(z[3] ?? '0')) * 60_000;
    if (Number(z[2]) > 23 || Number(z[3] ?? '0') > 59) return null;
    t += z[1] === '+' ? -offset : offset;
  }
  return Number.isFinite(t) ? new Date(t) : null;
}

function timeRefusal(description: string): RoostError {
  return new RoostError(422, `Validation failed: Scheduled at ${description}`, {
    details: { scheduled_at: [{ error: 'ERR_INVALID', description }] },
  });
}

/**
 * Mastodon's three validations of a ScheduledStatus, as one 422 with every failed rule: the time
 * (more than 5 minutes ahead), the account's total and that day's count (`others`: the pending
 * ones besides the one being written).
 */
async function checkSchedule(services: Services, sql: Sql, accountId: string, at: Date, now: Date, exceptId: string | null): Promise<void> {
  const limits = services.config.limits.scheduledStatuses;
  const [counts] = await sql.query<{ total: number; day: number }>(
    `select count(*)::int as total,
            count(*) filter (where (scheduled_at at time zone 'UTC')::date = ($2::timestamptz at time zone 'UTC')::date)::int as day
       from scheduled_statuses where account_id = $1 and state = 'scheduled' and id <> coalesce($3::bigint, 0)`,
    [accountId, at, exceptId],
  );
  const messages: string[] = [];
  const details: ErrorDetails = {};
  if (at.getTime() <= now.getTime() + MINIMUM_SCHEDULE_OFFSET_MS) {
    messages.push(`Scheduled at ${TOO_SOON}`);
    details.scheduled_at = [{ error: 'ERR_INVALID', description: TOO_SOON }];
  }
  const base: { error: string; description: string }[] = [];
  if (counts!.total >= limits.total) base.push({ error: 'ERR_INVALID', description: overTotalLimit(limits.total) });
  if (counts!.day >= limits.daily) base.push({ error: 'ERR_INVALID', description: overDailyLimit(limits.daily) });
  if (base.length) {
    messages.push(...base.map((b) => b.description));
    details.base = base;
  }
  if (messages.length) throw new RoostError(422, `Validation failed: ${messages.join(', ')}`, { details });
}

/** One account's schedulings, one at a time (the limits are counted under it). */
async function lockAccountSchedule(sql: Sql, accountId: string): Promise<void> {
  await sql.query(`select pg_advisory_xact_lock(hashtextextended('scheduled_statuses:' || $1::text, 0))`, [accountId]);
}

// ── Scheduling ───────────────────────────────────────────────────────────────────────────

/** The parameters kept for publication, as Mastodon's PostStatusService#scheduled_options keeps them. */
function paramsOf(input: CreateStatusInput, applicationId: string | null): ScheduledStatusParams {
  const mediaIds = (input.mediaIds ?? []).filter((m) => m.trim() !== '');
  return {
    text: input.status ?? null,
    poll: input.poll
      ? {
          options: [...input.poll.options],
          expires_in: Number.isFinite(input.poll.expiresIn) ? input.poll.expiresIn : null,
          ...(input.poll.multiple !== undefined ? { multiple: input.poll.multiple } : {}),
          ...(input.poll.hideTotals !== undefined ? { hide_totals: input.poll.hideTotals } : {}),
        }
      : null,
    media_ids: mediaIds.length ? mediaIds : null,
    sensitive: input.sensitive ?? null,
    spoiler_text: input.spoilerText ?? null,
    visibility: input.visibility || null,
    scheduled_at: null,
    in_reply_to_id: input.inReplyToId ?? null,
    language: input.language ?? null,
    application_id: applicationId,
    idempotency: null,
    with_rate_limit: false,
    ...(input.quotedStatusId ? { quoted_status_id: input.quotedStatusId } : {}),
    ...(input.quoteApprovalPolicy ? { quote_approval_policy: input.quoteApprovalPolicy } : {}),
  };
}

/** What createStatus is given at publication, from the kept parameters. */
function inputOf(params: ScheduledStatusParams): CreateStatusInput {
  return {
    status: params.text ?? undefined,
    spoilerText: params.spoiler_text ?? undefined,
    sensitive: params.sensitive ?? undefined,
    visibility: params.visibility ?? undefined,
    language: params.language,
    inReplyToId: params.in_reply_to_id,
    mediaIds: params.media_ids ?? [],
    poll: params.poll
      ? { options: params.poll.options, expiresIn: params.poll.expires_in ?? Number.NaN, multiple: params.poll.multiple, hideTotals: params.poll.hide_totals }
      : null,
    idempotencyKey: null,
    quotedStatusId: params.quoted_status_id ?? null,
    quoteApprovalPolicy: params.quote_approval_policy,
  };
}

export type ScheduleResult = { scheduledStatusId: string } | { statusId: string };

/**
 * POST /api/v1/statuses with `scheduled_at`. Returns the scheduled status, or the status posted at
 * once when the time is already past (as Mastodon). The same Idempotency-Key within an hour names
 * the scheduled status it created then.
 */
export async function scheduleStatus(services: Services, author: StatusAuthor, input: CreateStatusInput, scheduledAtRaw: string): Promise<ScheduleResult> {
  const at = parseScheduledAt(scheduledAtRaw);
  if (!at) throw timeRefusal(INVALID_TIME);
  const now = services.clock.now();
  if (at.getTime() <= now.getTime()) return { statusId: await createStatus(services, author, input) };
  const accountId = author.account.id;
  const key = input.idempotencyKey ? input.idempotencyKey.slice(0, 255) : null;
  const known = async (sql: Sql) =>
    key
      ? (
          await sql.query<{ id: string }>(
            `select id::text from scheduled_statuses where account_id = $1 and idempotency_key = $2 and created_at > $3 order by scheduled_statuses.id desc limit 1`,
            [accountId, key, new Date(now.getTime() - IDEMPOTENCY_TTL_MS)],
          )
        )[0]
      : undefined;
  const earlier = await known(services.db.sql);
  if (earlier) return { scheduledStatusId: earlier.id };
  // The status' own checks first (Mastodon validates the status before the ScheduledStatus).
  const checked = await checkNewStatus(services, author, input);
  const id = services.ids.next();
  return services.db.em().transactional(async (em) => {
    const sql = sqlFromEm(em);
    await lockAccountSchedule(sql, accountId);
    const raced = await known(sql);
    if (raced) return { scheduledStatusId: raced.id };
    await checkSchedule(services, sql, accountId, at, now, null);
    // The author's own free, processed attachments, reserved for this one until it is published.
    const media = await mediaForNewStatus(sql, accountId, checked.mediaIds, services.config.limits.statuses.maxMediaAttachments);
    await createActor(services, sql, SCHEDULED_STATUS_TABLE, id, {
      origin: 'client',
      input: { scheduledStatusId: id, accountId, scheduledAt: at.toISOString() },
      columns: {
        account_id: accountId,
        application_id: author.applicationId,
        params: JSON.stringify(paramsOf(input, author.applicationId)),
        idempotency_key: key,
      },
    });
    if (media.length) {
      await sql.query(
        `update media_attachments m set scheduled_status_id = $1, position = x.position, updated_at = $3
           from unnest($2::bigint[]) with ordinality as x(id, position) where m.id = x.id`,
        [id, media, now],
      );
    }
    return { scheduledStatusId: id };
  });
}

/** The account's pending scheduled status, locked in `em`'s transaction, or 404. */
async function lockOwn(em: EntityManager, accountId: string, id: string): Promise<void> {
  if (!isId(id)) throw notFound();
  const [row] = await sqlFromEm(em).query(`select id from scheduled_statuses where id = $1 and account_id = $2 and state = 'scheduled' for update`, [id, accountId]);
  if (!row) throw notFound();
}

/**
 * PUT /api/v1/scheduled_statuses/:id: a new time, under the same rules (the one being moved is
 * not counted against the limits). Without a time: nothing changes.
 */
export async function rescheduleStatus(services: Services, accountId: string, id: string, scheduledAtRaw: string | undefined): Promise<void> {
  const at = scheduledAtRaw === undefined || scheduledAtRaw.trim() === '' ? null : parseScheduledAt(scheduledAtRaw);
  const now = services.clock.now();
  await services.db.em().transactional(async (em) => {
    const sql = sqlFromEm(em);
    await lockAccountSchedule(sql, accountId);
    await lockOwn(em, accountId, id);
    if (scheduledAtRaw === undefined || scheduledAtRaw.trim() === '') return;
    if (!at) throw timeRefusal(INVALID_TIME);
    await checkSchedule(services, sql, accountId, at, now, id);
    const r = await stepActor(services, SCHEDULED_STATUS_TABLE, id, { type: 'scheduled_status.reschedule', scheduledAt: at.toISOString(), now: now.toISOString() }, { origin: 'client', em });
    if (!r.accepted) throw timeRefusal(TOO_SOON);
  });
}

/** DELETE /api/v1/scheduled_statuses/:id: cancelled, its timer dropped, its attachments free again. */
export async function cancelScheduledStatus(services: Services, accountId: string, id: string): Promise<void> {
  const now = services.clock.now();
  await services.db.em().transactional(async (em) => {
    const sql = sqlFromEm(em);
    if (isId(id)) await lockReservedMedia(sql, id);
    await lockOwn(em, accountId, id);
    const r = await stepActor(services, SCHEDULED_STATUS_TABLE, id, { type: 'scheduled_status.cancel' }, { origin: 'client', em });
    if (!r.accepted) throw notFound();
    await releaseReservedMedia(sql, id, now);
  });
}

// ── Publication ──────────────────────────────────────────────────────────────────────────

/** The actor refused the publish step (published already, cancelled, moved): nothing to do. */
class NotPublishable extends Error {}

export type PublishOutcome = 'published' | 'failed' | 'refused';

/** The author as createStatus takes it, or why there is none to post as. */
async function authorOf(services: Services, accountId: string, applicationId: string | null): Promise<StatusAuthor | string> {
  const em = services.db.em();
  const account = await em.findOne(AccountSchema, { id: accountId });
  const user = account ? await em.findOne(UserSchema, { accountId }) : null;
  if (!account || !user) return 'The account is gone';
  if (account.suspendedAt) return 'The account is suspended';
  if (user.disabled) return 'The login is disabled';
  return { account, user, applicationId };
}

/**
 * The publish timer came: the status is created with the kept parameters (its attachments, its
 * poll, the application that scheduled it), and the actor steps `published` in the status' own
 * transaction, so both commit or neither does. A timer that is not the current one (the time was
 * moved), comes early, or comes twice is refused by the actor: nothing is written. What
 * createStatus refuses ends the actor `failed` with its reason.
 */
export async function publishScheduledStatus(services: Services, id: string, due: string): Promise<PublishOutcome> {
  const log = services.log.child({ module: 'scheduled-statuses' });
  const [row] = await services.db.sql.query<{ account_id: string; application_id: string | null; state: string; scheduled_at: Date; params: unknown }>(
    `select account_id::text, application_id::text, state, scheduled_at, params from scheduled_statuses where id = $1`,
    [id],
  );
  const now = services.clock.now();
  if (!row || row.state !== 'scheduled' || new Date(row.scheduled_at).getTime() !== Date.parse(due) || now.getTime() < Date.parse(due)) return 'refused';
  const params = (typeof row.params === 'string' ? JSON.parse(row.params) : row.params) as ScheduledStatusParams;
  const author = await authorOf(services, row.account_id, row.application_id);
  try {
    if (typeof author === 'string') throw new RoostError(422, author);
    const statusId = await createStatus(services, author, inputOf(params), {
      origin: 'timer',
      reservedFor: id,
      inTransaction: async (em, createdId) => {
        const r = await stepActor(services, SCHEDULED_STATUS_TABLE, id, { type: 'scheduled_status.publish', due, now: now.toISOString(), statusId: createdId }, { origin: 'timer', em });
        if (!r.accepted) throw new NotPublishable();
      },
    });
    log.info({ scheduledStatusId: id, statusId, accountId: row.account_id }, 'scheduled status published');
    return 'published';
  } catch (e) {
    if (e instanceof NotPublishable) return 'refused';
    // A refusal of the status itself (4xx) ends it; anything else is retried by the queue.
    if (!(e instanceof RoostError) || e.status >= 500 || e.status === 409) throw e;
    const failed = await failScheduledStatus(services, id, due, e.message, 'timer');
    if (failed) log.warn({ scheduledStatusId: id, accountId: row.account_id, reason: e.message }, 'scheduled status could not be published');
    return failed ? 'failed' : 'refused';
  }
}

async function failScheduledStatus(services: Services, id: string, due: string, reason: string, origin: Origin): Promise<boolean> {
  const now = services.clock.now();
  return services.db.em().transactional(async (em) => {
    await lockReservedMedia(sqlFromEm(em), id);
    const r = await stepActor(services, SCHEDULED_STATUS_TABLE, id, { type: 'scheduled_status.fail', due, now: now.toISOString(), reason }, { origin, em });
    if (!r.accepted) return false;
    await releaseReservedMedia(sqlFromEm(em), id, now);
    return true;
  });
}
