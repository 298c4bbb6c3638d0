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
  groupKey: string;
  createdAt: Date;
}

export interface MastodonNotification {
  id: string;
  type: string;
  group_key: string;
  created_at: string;
  account: MastodonAccount;
  status?: MastodonStatus;
  report?: MastodonReport;
}

/** What one notification needs besides its row: the rendered account, status and report. */
export interface NotificationParts {
  account: MastodonAccount | undefined;
  status: MastodonStatus | undefined;
  report: MastodonReport | undefined;
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
}

export interface MastodonNotificationGroup {
  group_key: string;
  notifications_count: number;
  type: string;
  most_recent_notification_id: string;
  page_min_id?: string;
  page_max_id?: string;
  latest_page_notification_at?: string;
  sample_account_ids: string[];
  status_id?: string;
  report?: MastodonReport;
}

/** A group; `paged` adds the page_* fields (a page of groups has them, a single group does not). */
export function serializeNotificationGroup(row: NotificationGroupRow, report: MastodonReport | undefined, paged: boolean): MastodonNotificationGroup {
  const out = {
    group_key: row.groupKey,
    notifications_count: row.notificationsCount,
    type: row.type,
    most_recent_notification_id: row.mostRecentNotificationId,
  } as MastodonNotificationGroup;
  if (paged) {
    out.page_min_id = row.pageMinId;
    out.page_max_id = row.pageMaxId;
    out.latest_page_notification_at = row.latestPageNotificationAt.toISOString();
  }
  out.sample_account_ids = row.sampleAccountIds;
  if (row.statusId && STATUS_TYPES.includes(row.type)) out.status_id = row.statusId;
  if (row.type === 'admin.report' && report) out.report = report;
  return out;
}
