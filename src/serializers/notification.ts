/**
 * Mastodon's Notification entity (entities/Notification.md) and the grouped notifications'
 * NotificationGroup (methods/grouped_notifications.md). Pure: the accounts, statuses and reports
 * are rendered by the caller's batched views and passed in.
 */
import type { MastodonAccount } from './account.ts';
import type { MastodonStatus } from './status.ts';
import type { MastodonReport } from './report.ts';

/** The types Roost writes (Mastodon's, minus those of features it does not have). */
export const NOTIFICATION_TYPES = [
  'mention',
  'status',
  'reblog',
  'follow',
  'follow_request',
  'favourite',
  'poll',
  'update',
  'admin.sign_up',
  'admin.report',
  'severed_relationships',
  'moderation_warning',
  'quote',
  'quoted_update',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** The types whose notifications are grouped (Mastodon's GROUPABLE_NOTIFICATION_TYPES). */
export const GROUPABLE_TYPES: readonly string[] = ['favourite', 'reblog', 'follow', 'admin.sign_up'];

/** The types that carry a status. */
export const STATUS_TYPES: readonly string[] = ['favourite', 'reblog', 'status', 'mention', 'poll', 'update', 'quote', 'quoted_update'];

export interface NotificationRow {
  id: string;
  accountId: string;
  fromAccountId: string;
  type: string;
  statusId: string | null;
  reportId: string | null;
  /** For severed_relationships: the relationship severance event. */
  severanceEventId: string | null;
  groupKey: string;
  createdAt: Date;
}

/** A relationship severance event with the counts of one recipient. */
export interface SeveranceEventRow {
  id: string;
  type: string;
  purged: boolean;
  targetName: string;
  followersCount: number;
  followingCount: number;
  createdAt: Date;
}

/** Mastodon's RelationshipSeveranceEvent (entities/RelationshipSeveranceEvent.md). */
export interface MastodonRelationshipSeveranceEvent {
  id: string;
  type: string;
  purged: boolean;
  target_name: string;
  followers_count: number;
  following_count: number;
  created_at: string;
}

export function serializeSeveranceEvent(e: SeveranceEventRow): MastodonRelationshipSeveranceEvent {
  return {
    id: e.id,
    type: e.type,
    purged: e.purged,
    target_name: e.targetName,
    followers_count: e.followersCount,
    following_count: e.followingCount,
    created_at: e.createdAt.toISOString(),
  };
}

export interface MastodonNotification {
  id: string;
  type: string;
  group_key: string;
  created_at: string;
  account: MastodonAccount;
  status?: MastodonStatus;
  report?: MastodonReport;
  event?: MastodonRelationshipSeveranceEvent;
}

/** What one notification needs besides its row: the rendered account, status, report and event. */
export interface NotificationParts {
  account: MastodonAccount | undefined;
  status: MastodonStatus | undefined;
  report: MastodonReport | undefined;
  event?: MastodonRelationshipSeveranceEvent | undefined;
}

/** The notification, or null when a part it cannot be shown without is missing (its status gone). */
export function serializeNotification(row: NotificationRow, parts: NotificationParts): MastodonNotification | null {
  if (!parts.account) return null;
  const out: MastodonNotification = {
    id: row.id,
    type: row.type,
    group_key: row.groupKey,
    created_at: row.createdAt.toISOString(),
    account: parts.account,
  };
  if (STATUS_TYPES.includes(row.type)) {
    if (!parts.status) return null;
    out.status = parts.status;
  }
  if (row.type === 'admin.report') {
    if (!parts.report) return null;
    out.report = parts.report;
  }
  if (row.type === 'severed_relationships') {
    if (!parts.event) return null;
    out.event = parts.event;
  }
  return out;
}

export interface NotificationGroupRow {
  groupKey: string;
  type: string;
  notificationsCount: number;
  mostRecentNotificationId: string;
  pageMinId: string;
  pageMaxId: string;
  latestPageNotificationAt: Date;
  sampleAccountIds: string[];
  statusId: string | null;
  reportId: string | null;
  severanceEventId: string | null;
}

export interface MastodonNotificationGroup {
  group_key: string;
  notifications_count: number;
  type: string;
  /** A JSON integer, as Mastodon sends it (written with its exact digits by http/response.ts json()). */
  most_recent_notification_id: bigint;
  page_min_id?: string;
  page_max_id?: string;
  latest_page_notification_at?: string;
  sample_account_ids: string[];
  status_id?: string;
  report?: MastodonReport;
  event?: MastodonRelationshipSeveranceEvent;
}

/** A group; `paged` adds the page_* fields (a page of groups has them, a single group does not). */
export function serializeNotificationGroup(
  row: NotificationGroupRow,
  report: MastodonReport | undefined,
  paged: boolean,
  event?: MastodonRelationshipSeveranceEvent,
): MastodonNotificationGroup {
  const out = {
    group_key: row.groupKey,
    notifications_count: row.notificationsCount,
    type: row.type,
    most_recent_notification_id: BigInt(row.mostRecentNotificationId),
  } as MastodonNotificationGroup;
  if (paged) {
    out.page_min_id = row.pageMinId;
    out.page_max_id = row.pageMaxId;
    out.latest_page_notification_at = row.latestPageNotificationAt.toISOString();
  }
  out.sample_account_ids = row.sampleAccountIds;
  if (row.statusId && STATUS_TYPES.includes(row.type)) out.status_id = row.statusId;
  if (row.type === 'admin.report' && report) out.report = report;
  if (row.type === 'severed_relationships' && event) out.event = event;
  return out;
}
