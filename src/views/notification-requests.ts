/**
 * Notification requests rendered (Mastodon 4.3's NotificationRequest): the page's rows from
 * reads/notification-requests.ts, their accounts in one batched view and their last statuses,
 * as the recipient sees them, in another: a fixed number of statements whatever the page size.
 */
import type { Services } from '../context.ts';
import { renderAccounts } from './accounts.ts';
import { renderStatuses } from './statuses.ts';
import {
  serializeNotificationRequest,
  type MastodonNotificationRequest,
  type NotificationRequestRow,
} from '../serializers/notification-request.ts';

export async function renderNotificationRequests(
  services: Services,
  recipientId: string,
  rows: readonly NotificationRequestRow[],
): Promise<MastodonNotificationRequest[]> {
  if (rows.length === 0) return [];
  const accountIds = [...new Set(rows.map((r) => r.fromAccountId))];
  const statusIds = [...new Set(rows.flatMap((r) => (r.lastStatusId ? [r.lastStatusId] : [])))];
  const accounts = await renderAccounts(services, accountIds);
  const statuses = statusIds.length ? await renderStatuses(services, statusIds, recipientId) : [];
  const accountById = new Map(accounts.map((a) => [a.id, a]));
  const statusById = new Map(statuses.map((s) => [s.id, s]));
  return rows.flatMap((r) => serializeNotificationRequest(r, accountById.get(r.fromAccountId), r.lastStatusId ? statusById.get(r.lastStatusId) : undefined) ?? []);
}
