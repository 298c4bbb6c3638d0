/**
 * Who listens to which facts: the declaration of every consumer of the outbox (their code is in
 * src/effects/, registered in effects/registry.ts against this list). The outbox writer queues an
 * event job only for a fact some consumer listens to, and the job runs only those consumers, each
 * succeeding or retrying on its own (effects/registry.ts).
 *
 * A consumer is declared here with:
 *   handles  the event types it acts on (checked against the catalogue by the compiler);
 *   wants    optionally, a finer test of one fact (a vote concerns federation only when a local
 *            account voted on a remote poll);
 *   after    consumers whose work it reads, run before it in the same job; when one of them fails
 *            it waits for that one's retry.
 * CONSUMER_NAMES gives the order in which a job runs them.
 */
import type { EventOf, EventType, RoostEvent } from './catalogue.ts';

/** Every consumer, in the order a job runs them. */
export const CONSUMER_NAMES = ['federate', 'home-feeds', 'conversations', 'streaming', 'notifications', 'trends', 'mail', 'webhooks'] as const;
export type ConsumerName = (typeof CONSUMER_NAMES)[number];

interface Declaration<T extends EventType = EventType> {
  readonly handles: readonly T[];
  readonly wants?: (event: EventOf<T>) => boolean;
  readonly after?: readonly ConsumerName[];
}

const declare = <const T extends EventType>(d: Declaration<T>): Declaration<T> => d;

export const CONSUMERS = {
  /** Activities to other servers (effects/federate.ts). */
  federate: declare({
    handles: [
      'status.created', 'status.updated', 'status.deleted', 'status.reblogged', 'status.unreblogged',
      'status.favourited', 'status.unfavourited', 'status.pinned', 'status.unpinned', 'poll.updated', 'poll.voted',
      'follow.requested', 'follow.accepted', 'follow.request_repeated', 'follow.rejected', 'follow.removed',
      'follow.undone', 'follow.cancelled', 'follow.refused',
      'account.updated', 'account.moved', 'account.move_replayed', 'account.suspended', 'block.created', 'block.removed', 'report.created',
      'quote.accepted', 'quote.revoked', 'quote.refused', 'status.quote_policy_changed',
    ],
    // A vote leaves the server only when a local account voted on a remote poll (null: recorded
    // before pollLocal existed; the poll's row decides).
    // A quote concerns other servers only when one of its two posts is remote.
    wants: (e) =>
      e.type === 'poll.voted' ? e.local && e.pollLocal !== true
      : e.type === 'quote.accepted' ? e.local !== e.quotedLocal
      // A local author's revocation goes to the quoting author and their own followers (its stamp was public).
      : e.type === 'quote.revoked' ? e.quotedLocal
      : true,
  }),
  /** Home, list and followed-tag feeds (effects/home-feeds.ts). */
  'home-feeds': declare({ handles: ['status.created', 'status.reblogged', 'follow.accepted'] }),
  /** Direct-message conversations (effects/conversations.ts). */
  conversations: declare({
    handles: ['status.created', 'status.deleted'],
    wants: (e) => e.type !== 'status.created' || e.visibility === 'direct',
  }),
  /** The streaming event log (effects/streaming.ts): reads the feeds' and conversations' rows. */
  streaming: declare({
    handles: ['status.created', 'status.reblogged', 'status.updated', 'status.deleted', 'filters.changed', 'notifications.merged'],
    after: ['home-feeds', 'conversations'],
  }),
  /** Notification rows, then streaming and Web Push (effects/notifications.ts). */
  notifications: declare({
    handles: [
      'status.created', 'status.reblogged', 'status.favourited', 'status.updated', 'status.unreblogged', 'status.unfavourited',
      'follow.requested', 'follow.accepted', 'follow.rejected', 'follow.cancelled', 'follow.undone', 'follow.removed', 'follow.blocked',
      'poll.closed', 'user.signed_up', 'report.created', 'relationships.severed', 'quote.accepted',
    ],
  }),
  /** Hashtag uses of public statuses, which the trend scores count (effects/trends.ts). */
  trends: declare({
    handles: ['status.created'],
    wants: (e) => e.visibility === 'public' && e.tagged !== false,
  }),
  /** E-mail through SMTP (effects/mail.ts): confirmation, password reset, moderation warnings. */
  mail: declare({
    handles: ['user.signed_up', 'user.confirmation_requested', 'user.password_reset_requested', 'account.warned'],
    wants: (e) => e.type !== 'account.warned' || e.sendEmail,
  }),
  /** Admin webhooks (effects/webhooks.ts): one delivery job per (fact, webhook that asked for it). */
  webhooks: declare({
    handles: ['user.signed_up', 'account.approved', 'account.updated', 'report.created', 'report.updated', 'status.created', 'status.updated'],
    // Mastodon's status webhooks are for local statuses (null: recorded before `local`; the row says).
    wants: (e) => (e.type !== 'status.created' && e.type !== 'status.updated') || e.local !== false,
  }),
} as const satisfies Record<ConsumerName, unknown>;

/** The facts consumer `C` receives. */
export type HandledBy<C extends ConsumerName> = EventOf<(typeof CONSUMERS)[C]['handles'][number]>;

/** Whether consumer `name` acts on `event`. */
export function listens(name: ConsumerName, event: RoostEvent): boolean {
  const d = CONSUMERS[name] as Declaration;
  return (d.handles as readonly string[]).includes(event.type) && (!d.wants || d.wants(event as never));
}

/** The consumers that act on `event`, in the order a job runs them. */
export function listenersOf(event: RoostEvent): ConsumerName[] {
  return CONSUMER_NAMES.filter((name) => listens(name, event));
}
