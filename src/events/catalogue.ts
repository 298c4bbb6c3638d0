/**
 * The event catalogue: every fact Roost records in its outbox, as one discriminated union. It is
 * the system's main contract: services write these facts in the transaction that made them true
 * (through the actor store), and effects/ reads them after commit. An unknown type, or a payload
 * field that a fact does not have, fails to compile on both sides.
 *
 * Two sources, one union:
 *   - what the actors emit (their machines type it with `emit`: AccountEmitted, FollowEmitted …);
 *   - what services record outside a step (`recordEvent`): the facts declared below.
 *
 * Facts stay in the outbox for a while (retention: ./retention.ts) and jobs carry copies, so a
 * fact written before one of its fields existed may still be read. `upcast` brings such a payload
 * to today's shape: one rule per event, named by the field it fills. A field whose old value cannot
 * be known without reading the database becomes `null` ("recorded before: look it up").
 */
import type { AccountEmitted } from '../../actors/account/account.machine.ts';
import type { FollowEmitted } from '../../actors/follow/follow.machine.ts';
import type { PollEmitted } from '../../actors/poll/poll.machine.ts';
import type { ScheduledStatusEmitted } from '../../actors/scheduled-status/scheduled-status.machine.ts';
import type { StatusVisibility as Visibility } from '../db/entities/status.entity.ts';

/** Facts recorded by services outside an actor step (services/actor-store.ts recordEvent). */
export type RecordedFact =
  // Statuses (services/statuses.ts, remote-statuses.ts, status-edits.ts). `local` says whether the
  // status is this server's own: null only on facts recorded before the flag existed.
  | {
      type: 'status.created';
      statusId: string;
      accountId: string;
      local: boolean | null;
      visibility: Visibility;
      inReplyToId: string | null;
      pollId?: string;
      /** Whether it names hashtags (absent: recorded before the field existed; look). */
      tagged?: boolean;
    }
  | {
      type: 'status.updated';
      statusId: string;
      accountId: string;
      local: boolean | null;
      visibility?: Visibility;
      editedAt?: string;
      /** Accounts this version mentions and the one before did not (local edits). */
      addedMentionAccountIds?: string[];
    }
  | { type: 'status.deleted'; statusId: string; accountId: string; local: boolean | null; reblogIds: string[] }
  | { type: 'status.reblogged'; statusId: string; reblogOfId: string; accountId: string; visibility: Visibility; statusAccountId: string }
  | { type: 'status.unreblogged'; statusId: string; reblogOfId: string; accountId: string }
  | { type: 'status.favourited'; statusId: string; accountId: string; favouriteId: string; statusAccountId: string }
  | { type: 'status.unfavourited'; statusId: string; accountId: string; favouriteId: string }
  /** A local account pinned (unpinned) its status: the status_pins row's id. */
  | { type: 'status.pinned'; statusId: string; accountId: string; pinId: string }
  | { type: 'status.unpinned'; statusId: string; accountId: string; pinId: string }
  // Quote posts (services/quotes.ts, status-writer.ts): `local` is the quoting status's, `quotedLocal` the quoted one's.
  /** A quote became accepted: at once (a quote of a local post the policy allows), or by an authorization given or received. */
  | { type: 'quote.accepted'; quoteId: string; statusId: string; accountId: string; quotedStatusId: string; quotedAccountId: string; local: boolean; quotedLocal: boolean }
  /** The quoted author took an accepted quote back (or the quoted server deleted its authorization). */
  | { type: 'quote.revoked'; quoteId: string; statusId: string; accountId: string; quotedStatusId: string; quotedAccountId: string; local: boolean; quotedLocal: boolean }
  /** The author changed who may quote a local status (PUT /api/v1/statuses/:id/interaction_policy). */
  | { type: 'status.quote_policy_changed'; statusId: string; accountId: string }
  /** A remote QuoteRequest for a local post that its policy refuses: answered with Reject (no row is kept). */
  | { type: 'quote.refused'; quotedStatusId: string; quotedAccountId: string; requesterId: string; activityUri: string; instrumentUri: string }
  // Accounts and relationships (services/profiles.ts, moves.ts, relationships.ts, follows.ts).
  | { type: 'account.updated'; accountId: string }
  | { type: 'account.move_replayed'; accountId: string; targetAccountId: string }
  | { type: 'block.created'; blockId: string; accountId: string; targetId: string }
  | { type: 'block.removed'; blockId: string; accountId: string; targetId: string; blockUri: string | null }
  /** A Follow refused before any row existed (the target hides the follower's domain). */
  | { type: 'follow.refused'; followerId: string; targetId: string; activityUri: string }
  /** A remote server asked again for a follow already accepted: the Accept goes again. */
  | { type: 'follow.request_repeated'; followerId: string; targetId: string }
  | { type: 'filters.changed'; accountId: string }
  /** Notification requests accepted: their held notifications joined the account's list. */
  | { type: 'notifications.merged'; accountId: string }
  // Sign-ups, reports, moderation (services/registrations.ts, reports.ts, severance.ts, domain-blocks.ts).
  | { type: 'user.signed_up'; accountId: string; userId: string }
  /** A user asked for the confirmation mail again (POST /api/v1/emails/confirmations), maybe to a new address. */
  | { type: 'user.confirmation_requested'; userId: string }
  /** Someone asked for a password-reset mail for this user (/auth/password/new). */
  | { type: 'user.password_reset_requested'; userId: string }
  | { type: 'report.created'; reportId: string; accountId: string; targetAccountId: string }
  | { type: 'report.updated'; reportId: string }
  /** A moderator (`accountId`; null: the operator at the CLI) resolved or reopened a report (with its report.updated). */
  | { type: 'report.resolved'; reportId: string; accountId: string | null }
  | { type: 'report.reopened'; reportId: string; accountId: string | null }
  /** A moderator's action against an account left a strike (services/admin-accounts.ts: an account_warnings row). */
  | { type: 'account.warned'; accountId: string; warningId: string; action: string; sendEmail: boolean }
  | { type: 'relationships.severed'; eventId: string }
  | { type: 'domain_block.created'; domain: string; severity: string }
  | { type: 'domain_block.updated'; domain: string; severity: string }
  | { type: 'domain_block.removed'; domain: string }
  | { type: 'domain_allow.created'; domain: string }
  | { type: 'domain_allow.removed'; domain: string }
  | { type: 'trend.reviewed'; kind: 'tag' | 'status' | 'link'; targetId: string; trendable: boolean };

/**
 * Every fact. `poll.voted`'s `pollLocal` is null only on votes recorded before the field existed
 * (the poll's row says).
 */
export type RoostEvent =
  | AccountEmitted
  | FollowEmitted
  | Exclude<PollEmitted, { type: 'poll.voted' }>
  | (Omit<Extract<PollEmitted, { type: 'poll.voted' }>, 'pollLocal'> & { pollLocal: boolean | null })
  | ScheduledStatusEmitted
  | RecordedFact;

export type EventType = RoostEvent['type'];
export type EventOf<T extends EventType> = Extract<RoostEvent, { type: T }>;

/**
 * Every type in the catalogue, at run time (the registry and its test check against it). The
 * compiler holds the list to the union: a missing or an unknown key fails to compile.
 */
const TYPES: Record<EventType, true> = {
  'account.locked': true,
  'account.unlocked': true,
  'account.silenced': true,
  'account.unsilenced': true,
  'account.suspended': true,
  'account.unsuspended': true,
  'account.disabled': true,
  'account.enabled': true,
  'account.moved': true,
  'account.unmoved': true,
  'account.approved': true,
  'account.confirmed': true,
  'account.deleted': true,
  'account.sensitized': true,
  'account.unsensitized': true,
  'account.warned': true,
  'account.updated': true,
  'account.move_replayed': true,
  'follow.requested': true,
  'follow.accepted': true,
  'follow.rejected': true,
  'follow.cancelled': true,
  'follow.undone': true,
  'follow.removed': true,
  'follow.blocked': true,
  'follow.updated': true,
  'follow.refused': true,
  'follow.request_repeated': true,
  'poll.close_scheduled': true,
  'poll.voted': true,
  'poll.update_scheduled': true,
  'poll.updated': true,
  'poll.closed': true,
  'poll.deleted': true,
  'scheduled_status.scheduled': true,
  'scheduled_status.rescheduled': true,
  'scheduled_status.published': true,
  'scheduled_status.failed': true,
  'scheduled_status.cancelled': true,
  'status.created': true,
  'status.updated': true,
  'status.deleted': true,
  'status.reblogged': true,
  'status.unreblogged': true,
  'status.favourited': true,
  'status.unfavourited': true,
  'status.pinned': true,
  'status.unpinned': true,
  'quote.accepted': true,
  'quote.revoked': true,
  'quote.refused': true,
  'status.quote_policy_changed': true,
  'block.created': true,
  'block.removed': true,
  'filters.changed': true,
  'notifications.merged': true,
  'user.signed_up': true,
  'user.confirmation_requested': true,
  'user.password_reset_requested': true,
  'report.created': true,
  'report.updated': true,
  'report.resolved': true,
  'report.reopened': true,
  'relationships.severed': true,
  'domain_block.created': true,
  'domain_block.updated': true,
  'domain_block.removed': true,
  'domain_allow.created': true,
  'domain_allow.removed': true,
  'trend.reviewed': true,
};

export const EVENT_TYPES: readonly EventType[] = Object.keys(TYPES) as EventType[];

export function isEventType(type: unknown): type is EventType {
  return typeof type === 'string' && Object.hasOwn(TYPES, type);
}

/** A payload as stored: today's shape, or an older one of the same type. */
export type StoredEvent = { readonly type: string; readonly [field: string]: unknown };

/**
 * Today's shape of a stored fact, or null for a type the catalogue no longer has. `actorId` is the
 * outbox row's actor (the subject of facts that did not name it in their payload yet).
 */
export function upcast(stored: StoredEvent, actorId: string): RoostEvent | null {
  if (!isEventType(stored.type)) return null;
  const e = stored as Record<string, unknown>;
  switch (stored.type) {
    // Status facts before `statusId` named the status by the outbox row's actor; before `local`
    // they did not say whose status it is.
    case 'status.created':
    case 'status.updated':
    case 'status.deleted':
      return { ...e, statusId: e.statusId ?? actorId, local: typeof e.local === 'boolean' ? e.local : null, ...(stored.type === 'status.deleted' ? { reblogIds: e.reblogIds ?? [] } : {}) } as RoostEvent;
    case 'status.reblogged':
    case 'status.unreblogged':
      return { ...e, statusId: e.statusId ?? actorId } as RoostEvent;
    // Votes before `pollLocal`: whether the poll is ours is read from its row.
    case 'poll.voted':
      return { ...e, pollLocal: typeof e.pollLocal === 'boolean' ? e.pollLocal : null } as RoostEvent;
    // Poll Updates and reports before their ids were in the payload: the outbox row's actor.
    case 'poll.updated':
      return { ...e, pollId: e.pollId ?? actorId } as RoostEvent;
    case 'report.created':
      return { ...e, reportId: e.reportId ?? actorId } as RoostEvent;
    default:
      return e as RoostEvent;
  }
}
