/**
 * Notifications, the "surface" side of the outbox: after an event committed, the rows of
 * `notifications` for the local accounts it concerns (Mastodon's NotifyService and
 * LocalNotificationWorker), then every new row rendered once, as its recipient sees it, and handed
 * to the sinks (streaming and Web Push plug in there).
 *
 *   status.created    mention (each local account mentioned, not silently, not the author, not
 *                     one that muted the conversation);
 *                     status (local followers with notify on; not a reblog, not a reply to another
 *                     account, not direct or limited; not to those it mentions)
 *   status.reblogged  reblog (the original's local author)
 *   status.favourited favourite (the status's local author)
 *   status.updated    update (local accounts that reblogged it), replacing the recipient's earlier
 *                     update notification for that status; mention to accounts the edit mentions
 *                     for the first time
 *   status.unreblogged / status.unfavourited  the reblog / favourite notification goes (Mastodon
 *                     destroys it with its activity)
 *   follow.requested  follow_request (a local, locked target)
 *   follow.accepted   follow when accepted at once (`via: automatic`); an approved or cancelled
 *                     request's follow_request notification goes
 *   follow.undone / follow.removed / follow.blocked  the follow's follow (or follow_request)
 *                     notification goes with it (unfollow, remove_from_followers, a block)
 *   poll.closed       poll (local voters and the local author; local and remote polls)
 *   quote.accepted    quote (the quoted post's local author; the quoting post is the status)
 *   status.updated    also quoted_update (local authors of accepted quotes of it; their quote is the status)
 *   user.signed_up    admin.sign_up (an API sign-up) (local users whose role may manage users)
 *   report.created    admin.report (local users whose role may manage reports)
 *   relationships.severed  severed_relationships (each local account that lost follows through a
 *                     domain block or a user's domain block: services/severance.ts), from itself
 *
 * A recipient who blocks the causing account, mutes it with its notifications, or blocks its
 * domain gets nothing (not for the admin types, as Mastodon). Only local, unsuspended recipients.
 *
 * The recipient's notification policy (Mastodon 4.3, POLICY_DECISION_SQL) is read in the same
 * insert, for every recipient at once: `drop` writes nothing, `filter` writes the row `filtered`
 * and opens or refreshes the sender's `notification_requests` row; a filtered row reaches no sink
 * (services/notification-requests.ts releases it on accept).
 *
 * Idempotent: each row carries a `source_key` (the favourite, the reblog, the follow, the status,
 * the edit's outbox event …) unique per recipient, so a job that runs twice inserts nothing twice,
 * and only the rows actually inserted reach the sinks. A row is marked `surfaced_at` once the sinks
 * have it; a retried job hands over the rows of its event still unmarked (inserted by an attempt
 * that died before its sinks ran), so a crash between the two loses nothing (at least once: a
 * crash after the sinks and before the mark hands them over again). A fixed number of statements
 * per event.
 */
import type { Services } from '../context.ts';
import type { OutboxRecord } from '../events/outbox.ts';
import type { ConsumerHandler } from './registry.ts';
import { PERMISSIONS } from '../db/entities/index.ts';
import { hiddenFromSql, threadMutedBySql } from '../db/audience.ts';
import type { MastodonNotification } from '../serializers/notification.ts';
import { renderNotifications } from '../views/notifications.ts';

/** Where new notifications go once rendered (streaming, Web Push): each with its recipient. */
export type NotificationSink = (items: { accountId: string; notification: MastodonNotification }[]) => Promise<void>;

/** A notification to write: who gets it, who caused it, what it is about, and what makes it unique. */
export interface NotificationCandidate {
  accountId: string;
  fromAccountId: string;
  type: string;
  statusId?: string | null;
  reportId?: string | null;
  pollId?: string | null;
  /** For severed_relationships: the relationship severance event. */
  severanceEventId?: string | null;
  /** Unique per recipient: what caused it (`favourite:<favourite id>` …). */
  sourceKey: string;
  /** For grouped types, the group key's prefix (`favourite-<status id>`, `follow`); null: ungrouped. */
  groupPrefix?: string | null;
  /** Subject to the recipient's blocks, mutes and domain blocks (not the admin types). */
  filtered?: boolean;
}

/** The types the policy may hold back (Mastodon 4.3's `filterable` notification types). */
export const FILTERABLE_TYPES = ['mention', 'reblog', 'follow', 'follow_request', 'favourite'] as const;

/**
 * SQL: what the recipient's notification policy does with candidate `i` from sender `s` (policy
 * row `np`, Mastodon's defaults when none; `$11` now): 'drop' (not written), 'filter' (held as a
 * request) or 'accept'. As Mastodon's NotifyService: only filterable types from another account
 * whose request the recipient never accepted; the conditions are the sender not followed, not a
 * follower for 3 days, created in the last 30 days, a direct mention that answers nothing of the
 * recipient's from an account not followed, a limited (silenced) account not followed. Any
 * condition that holds with `drop` drops; else any with `filter` filters.
 */
const POLICY_DECISION_SQL = `(select case
      when not c.subject then 'accept'
      when (c.not_following and coalesce(np.for_not_following, 'accept') = 'drop')
        or (c.not_follower and coalesce(np.for_not_followers, 'accept') = 'drop')
        or (c.new_account and coalesce(np.for_new_accounts, 'accept') = 'drop')
        or (c.private_mention and c.not_following and coalesce(np.for_private_mentions, 'filter') = 'drop')
        or (c.limited and c.not_following and coalesce(np.for_limited_accounts, 'filter') = 'drop') then 'drop'
      when (c.not_following and coalesce(np.for_not_following, 'accept') = 'filter')
        or (c.not_follower and coalesce(np.for_not_followers, 'accept') = 'filter')
        or (c.new_account and coalesce(np.for_new_accounts, 'accept') = 'filter')
        or (c.private_mention and c.not_following and coalesce(np.for_private_mentions, 'filter') = 'filter')
        or (c.limited and c.not_following and coalesce(np.for_limited_accounts, 'filter') = 'filter') then 'filter'
      else 'accept' end
    from (select
      i.filtered and i.type in (${FILTERABLE_TYPES.map((t) => `'${t}'`).join(', ')}) and i.from_account_id <> i.account_id
        and not exists (select 1 from notification_permissions pm where pm.account_id = i.account_id and pm.from_account_id = i.from_account_id) as subject,
      not exists (select 1 from follows f where f.account_id = i.account_id and f.target_account_id = i.from_account_id and f.state = 'accepted') as not_following,
      not exists (select 1 from follows f where f.account_id = i.from_account_id and f.target_account_id = i.account_id and f.state = 'accepted'
                    and f.created_at <= $11::timestamptz - interval '3 days') as not_follower,
      s.created_at > $11::timestamptz - interval '30 days' as new_account,
      i.type = 'mention' and exists (select 1 from statuses st where st.id = i.status_id and st.visibility = 'direct'
                                       and st.in_reply_to_account_id is distinct from i.account_id) as private_mention,
      s.silenced_at is not null as limited) c)`;

/** A group spans at most this many hour buckets from its first (Mastodon's MAXIMUM_GROUP_SPAN_HOURS). */
export const MAXIMUM_GROUP_SPAN_HOURS = 12;

/**
 * Inserts the candidates in one statement, leaving out recipients that are not local or are
 * suspended, those the filters above drop, and rows already there (same recipient and source).
 * Returns the rows inserted.
 */
export async function insertNotifications(
  services: Services,
  candidates: readonly NotificationCandidate[],
  options: { resurface?: boolean } = {},
): Promise<{ id: string; accountId: string; filtered: boolean }[]> {
  if (candidates.length === 0) return [];
  const now = services.clock.now();
  const bucket = Math.floor(now.getTime() / 3_600_000);
  const col = <T>(f: (c: NotificationCandidate) => T) => candidates.map(f);
  const rows = await services.db.sql.query<{ id: string; account_id: string; filtered: boolean }>(
    `with input as (
       select * from unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::text[], $9::text[], $10::boolean[], $13::bigint[], $14::bigint[])
         as t(id, account_id, from_account_id, type, status_id, report_id, poll_id, source_key, group_prefix, filtered, severance_event_id, request_id)
     ), kept as (
       select i.*, ${POLICY_DECISION_SQL} as decision
         from input i join accounts r on r.id = i.account_id join accounts s on s.id = i.from_account_id
         left join notification_policies np on np.account_id = i.account_id
        where r.domain is null and r.suspended_at is null
          and (not i.filtered or not ${hiddenFromSql('i.account_id', 'i.from_account_id', '$11', { notifications: true })})
     ), ins as (
     insert into notifications (id, account_id, from_account_id, type, status_id, report_id, poll_id, relationship_severance_event_id, source_key, group_key, group_prefix, created_at, filtered)
     select k.id, k.account_id, k.from_account_id, k.type, k.status_id, k.report_id, k.poll_id, k.severance_event_id, k.source_key,
            case when k.group_prefix is null then 'ungrouped-' || k.id::text
                 else k.group_prefix || '-' || coalesce((
                   select p.b from (
                     select (regexp_match(n.group_key, '-(\\d+)$'))[1]::bigint as b from notifications n
                      where n.account_id = k.account_id and n.group_prefix = k.group_prefix order by n.id desc limit 1) p
                    where p.b > $12::bigint - ${MAXIMUM_GROUP_SPAN_HOURS}), $12::bigint)::text end,
            k.group_prefix, $11, k.decision = 'filter'
       from kept k where k.decision <> 'drop'
     on conflict (account_id, source_key) do nothing
     returning id, account_id, from_account_id, type, status_id, filtered
     ), req as (
       -- A filtered notification opens (or refreshes) the request of its sender.
       insert into notification_requests (id, account_id, from_account_id, last_status_id, created_at, updated_at)
       select distinct on (ins.account_id, ins.from_account_id) k.request_id, ins.account_id, ins.from_account_id,
              case when ins.type = 'mention' then ins.status_id end, $11, $11
         from ins join kept k on k.id = ins.id where ins.filtered
        order by ins.account_id, ins.from_account_id, ins.id desc
       on conflict (account_id, from_account_id) do update
          set last_status_id = coalesce(excluded.last_status_id, notification_requests.last_status_id), updated_at = excluded.updated_at
     )
     select id::text, account_id::text, filtered from ins${
       options.resurface
         ? `
     union all
     select n.id::text, n.account_id::text, n.filtered from notifications n join input i on n.account_id = i.account_id and n.source_key = i.source_key
      where n.surfaced_at is null`
         : ''
     }`,
    [
      col(() => services.ids.next()),
      col((c) => c.accountId),
      col((c) => c.fromAccountId),
      col((c) => c.type),
      col((c) => c.statusId ?? null),
      col((c) => c.reportId ?? null),
      col((c) => c.pollId ?? null),
      col((c) => c.sourceKey),
      col((c) => c.groupPrefix ?? null),
      col((c) => c.filtered !== false),
      now,
      bucket,
      col((c) => c.severanceEventId ?? null),
      col(() => services.ids.next()),
    ],
  );
  return rows.map((r) => ({ id: r.id, accountId: r.account_id, filtered: r.filtered }));
}

/** Local accounts whose role has `permission` (or is administrator), as candidate recipients. */
async function staffWith(services: Services, permission: bigint): Promise<string[]> {
  const rows = await services.db.sql.query<{ account_id: string }>(
    `select u.account_id::text from users u join user_roles r on r.id = u.role_id join accounts a on a.id = u.account_id
      where a.domain is null and a.suspended_at is null
        and (r.permissions & $1::bigint <> 0 or r.permissions & $2::bigint <> 0)`,
    [PERMISSIONS.administrator.toString(), permission.toString()],
  );
  return rows.map((r) => r.account_id);
}

/** The candidates an event makes (empty for events that notify nobody). */
async function candidatesOf(services: Services, record: OutboxRecord): Promise<NotificationCandidate[]> {
  const sql = services.db.sql;
  const event = record.event as Record<string, unknown> & { type: string };
  const str = (k: string) => (typeof event[k] === 'string' ? (event[k] as string) : null);
  switch (event.type) {
    case 'status.created': {
      const statusId = str('statusId');
      if (!statusId) return [];
      const rows = await sql.query<{ account_id: string; author_id: string; kind: string }>(
        `with s as (
           select id, account_id, visibility, reblog_of_id, in_reply_to_id, in_reply_to_account_id, conversation_id from statuses where id = $1 and deleted_at is null
         ), m as (
           select m.account_id from mentions m join s on s.id = m.status_id where not m.silent and m.account_id <> s.account_id
             and not ${threadMutedBySql('m.account_id', 's.conversation_id')}
         )
         select m.account_id::text, s.account_id::text as author_id, 'mention' as kind from m cross join s where s.reblog_of_id is null
         union all
         select f.account_id::text, s.account_id::text, 'status' from s
           join follows f on f.target_account_id = s.account_id and f.state = 'accepted' and f.notify
          where s.reblog_of_id is null and s.visibility in ('public', 'unlisted', 'private')
            and (s.in_reply_to_id is null or s.in_reply_to_account_id = s.account_id)
            and f.account_id not in (select account_id from m)`,
        [statusId],
      );
      return rows.map((r) => ({ accountId: r.account_id, fromAccountId: r.author_id, type: r.kind, statusId, sourceKey: `${r.kind}:${statusId}` }));
    }
    case 'status.reblogged': {
      const [r] = await sql.query<{ author_id: string; account_id: string; original_id: string }>(
        `select o.account_id::text as author_id, s.account_id::text, o.id::text as original_id from statuses s join statuses o on o.id = s.reblog_of_id
          where s.id = $1 and s.deleted_at is null and o.deleted_at is null and o.account_id <> s.account_id`,
        [str('statusId')],
      );
      if (!r) return [];
      return [{
        accountId: r.author_id, fromAccountId: r.account_id, type: 'reblog', statusId: r.original_id,
        sourceKey: `reblog:${str('statusId')}`, groupPrefix: `reblog-${r.original_id}`,
      }];
    }
    case 'quote.accepted': {
      // quote: the quoted post's local author (not a self-quote); `status` is the quoting post, as Mastodon's.
      const [r] = await sql.query<{ quoted_account_id: string; account_id: string; status_id: string }>(
        `select q.quoted_account_id::text, q.account_id::text, q.status_id::text from quotes q
           join statuses s on s.id = q.status_id and s.deleted_at is null
           join accounts qa on qa.id = q.quoted_account_id and qa.domain is null
          where q.id = $1 and q.state = 'accepted' and q.account_id <> q.quoted_account_id`,
        [str('quoteId')],
      );
      if (!r) return [];
      return [{ accountId: r.quoted_account_id, fromAccountId: r.account_id, type: 'quote', statusId: r.status_id, sourceKey: `quote:${str('quoteId')}` }];
    }
    case 'status.favourited': {
      const [r] = await sql.query<{ author_id: string; account_id: string; status_id: string }>(
        `select s.account_id::text as author_id, f.account_id::text, s.id::text as status_id from favourites f join statuses s on s.id = f.status_id
          where f.id = $1 and s.deleted_at is null and s.account_id <> f.account_id`,
        [str('favouriteId')],
      );
      if (!r) return [];
      return [{
        accountId: r.author_id, fromAccountId: r.account_id, type: 'favourite', statusId: r.status_id,
        sourceKey: `favourite:${str('favouriteId')}`, groupPrefix: `favourite-${r.status_id}`,
      }];
    }
    case 'status.updated': {
      const statusId = str('statusId');
      if (!statusId) return [];
      // update: those who reblogged it; quoted_update: the authors of accepted quotes of it, about their quote (Mastodon 4.5).
      const rows = await sql.query<{ account_id: string; author_id: string; quote_id: string | null }>(
        `select distinct r.account_id::text, s.account_id::text as author_id, null::text as quote_id from statuses s
           join statuses r on r.reblog_of_id = s.id and r.deleted_at is null
          where s.id = $1 and s.deleted_at is null and r.account_id <> s.account_id
         union all
         select q.account_id::text, s.account_id::text, q.status_id::text from statuses s
           join quotes q on q.quoted_status_id = s.id and q.state = 'accepted'
           join statuses qs on qs.id = q.status_id and qs.deleted_at is null
          where s.id = $1 and s.deleted_at is null and q.account_id <> s.account_id`,
        [statusId],
      );
      const updates: NotificationCandidate[] = rows.map((r) =>
        r.quote_id
          ? { accountId: r.account_id, fromAccountId: r.author_id, type: 'quoted_update', statusId: r.quote_id, sourceKey: `quoted_update:${record.id}:${r.quote_id}` }
          : { accountId: r.account_id, fromAccountId: r.author_id, type: 'update', statusId, sourceKey: `update:${record.id}` },
      );
      // Accounts the edit mentions for the first time hear of it as a mention (once per status).
      const added = Array.isArray(event.addedMentionAccountIds) ? (event.addedMentionAccountIds as unknown[]).map(String) : [];
      const author = str('accountId');
      if (added.length && author) {
        const [live] = await sql.query(`select 1 from statuses where id = $1 and deleted_at is null and reblog_of_id is null`, [statusId]);
        if (live) {
          for (const id of added) {
            if (id !== author) updates.push({ accountId: id, fromAccountId: author, type: 'mention', statusId, sourceKey: `mention:${statusId}` });
          }
        }
      }
      return updates;
    }
    case 'follow.requested': {
      const [f] = await sql.query<{ account_id: string; target_account_id: string }>(
        `select account_id::text, target_account_id::text from follows where id = $1 and state = 'requested'`,
        [record.actorId],
      );
      if (!f) return [];
      return [{ accountId: f.target_account_id, fromAccountId: f.account_id, type: 'follow_request', sourceKey: `follow_request:${record.actorId}` }];
    }
    case 'follow.accepted': {
      if (event.via !== 'automatic') return [];
      const [f] = await sql.query<{ account_id: string; target_account_id: string }>(
        `select account_id::text, target_account_id::text from follows where id = $1 and state = 'accepted'`,
        [record.actorId],
      );
      if (!f) return [];
      return [{ accountId: f.target_account_id, fromAccountId: f.account_id, type: 'follow', sourceKey: `follow:${record.actorId}`, groupPrefix: 'follow' }];
    }
    case 'poll.closed': {
      const pollId = str('pollId') ?? record.actorId;
      const rows = await sql.query<{ account_id: string; author_id: string; status_id: string }>(
        `select distinct r.account_id::text, p.account_id::text as author_id, p.status_id::text from polls p
           join lateral (select v.account_id from poll_votes v where v.poll_id = p.id and v.account_id is not null
                         union select p.account_id) r on true
           join statuses s on s.id = p.status_id and s.deleted_at is null
          where p.id = $1`,
        [pollId],
      );
      return rows.map((r) => ({
        accountId: r.account_id, fromAccountId: r.author_id, type: 'poll', statusId: r.status_id, pollId, sourceKey: `poll:${pollId}`,
        // The author's own poll is not subject to its own blocks and mutes.
        filtered: r.account_id !== r.author_id,
      }));
    }
    case 'user.signed_up': {
      const accountId = str('accountId');
      if (!accountId) return [];
      const staff = await staffWith(services, PERMISSIONS.manageUsers);
      return staff.filter((id) => id !== accountId).map((id) => ({
        accountId: id, fromAccountId: accountId, type: 'admin.sign_up', sourceKey: `admin.sign_up:${accountId}`, groupPrefix: 'admin.sign_up', filtered: false,
      }));
    }
    case 'report.created': {
      const reportId = str('reportId') ?? record.actorId;
      const [report] = await sql.query<{ account_id: string }>(`select account_id::text from reports where id = $1`, [reportId]);
      if (!report) return [];
      const staff = await staffWith(services, PERMISSIONS.manageReports);
      return staff.map((id) => ({
        accountId: id, fromAccountId: report.account_id, type: 'admin.report', reportId, sourceKey: `admin.report:${reportId}`, filtered: false,
      }));
    }
    case 'relationships.severed': {
      // Each local account that lost follows, once; from itself (Mastodon's Notification sets
      // from_account to the recipient for AccountRelationshipSeveranceEvent: no originating account).
      const eventId = str('eventId') ?? record.actorId;
      const rows = await sql.query<{ account_id: string }>(
        `select account_id::text from account_relationship_severance_events
          where relationship_severance_event_id = $1 and (followers_count > 0 or following_count > 0)`,
        [eventId],
      );
      return rows.map((r) => ({
        accountId: r.account_id, fromAccountId: r.account_id, type: 'severed_relationships', severanceEventId: eventId,
        sourceKey: `severed_relationships:${eventId}`, filtered: false,
      }));
    }
    default:
      return [];
  }
}

/** Notifications an event takes back (its activity is gone), by source key. */
function withdrawnOf(record: OutboxRecord): string[] {
  const event = record.event as Record<string, unknown> & { type: string };
  switch (event.type) {
    case 'status.unreblogged':
      return [`reblog:${String(event.statusId)}`];
    case 'status.unfavourited':
      return [`favourite:${String(event.favouriteId)}`];
    case 'follow.accepted':
      return event.via === 'automatic' ? [] : [`follow_request:${record.actorId}`];
    case 'follow.rejected':
    case 'follow.cancelled':
      return [`follow_request:${record.actorId}`];
    case 'follow.undone':
    case 'follow.removed':
    case 'follow.blocked':
      // Unfollowed, removed from the followers (remove_from_followers, a domain block) or ended by
      // a block either way: the follow goes, and its notification with it, as Mastodon's.
      return [`follow:${record.actorId}`, `follow_request:${record.actorId}`];
    default:
      return [];
  }
}

export function notificationsConsumer(services: Services, sinks: NotificationSink[] = []): ConsumerHandler<'notifications'> {
  const log = services.log.child({ module: 'notifications' });
  return async function notify(record: OutboxRecord): Promise<void> {
    const withdrawn = withdrawnOf(record);
    if (withdrawn.length) {
      await services.db.sql.query(`delete from notifications where source_key = any($1::text[])`, [withdrawn]);
    }
    const candidates = await candidatesOf(services, record);
    if (candidates.length === 0) return;
    // With sinks, the rows of this event that an earlier attempt inserted but never handed over
    // (it failed or its process died before the sinks ran) come back with the new ones.
    const inserted = await insertNotifications(services, candidates, { resurface: sinks.length > 0 });
    if (record.event.type === 'status.updated') {
      // The latest update notification replaces the earlier ones for that status (retries included).
      await services.db.sql.query(
        `delete from notifications where type = 'update' and status_id = $1 and account_id = any($2::bigint[]) and source_key <> $3`,
        [record.event.statusId, candidates.filter((c) => c.type === 'update').map((c) => c.accountId), `update:${record.id}`],
      );
    }
    if (inserted.length === 0) return;
    log.debug({ event: record.event.type, count: inserted.length }, 'notifications written');
    if (sinks.length === 0) return;
    // Held back by the recipient's policy: no streaming, no push (released by accepting the request).
    const byRecipient = new Map<string, string[]>();
    for (const r of inserted) if (!r.filtered) byRecipient.set(r.accountId, [...(byRecipient.get(r.accountId) ?? []), r.id]);
    const items: { accountId: string; notification: MastodonNotification }[] = [];
    for (const [accountId, ids] of byRecipient) {
      for (const notification of await renderNotifications(services, accountId, ids)) items.push({ accountId, notification });
    }
    // The view applied the recipient's filters (context `notifications`): a `hide` match is not
    // among `items`, a `warn` carries its `filtered` result (src/views/notifications.ts).
    if (items.length > 0) for (const sink of sinks) await sink(items);
    // Handed over: a retry of this event (a later consumer failing) does not hand them over again.
    await services.db.sql.query(`update notifications set surfaced_at = $1 where id = any($2::bigint[])`, [
      services.clock.now(),
      inserted.map((r) => r.id),
    ]);
  };
}
