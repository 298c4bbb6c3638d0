/**
 * Notifications rendered as their recipient sees them, the one rendering the lists, the grouped
 * lists, streaming and Web Push share (the notifications consumer, effects/notifications.ts,
 * renders each new row here and hands it to both): one batched view per page whatever its size —
 * the reports (one statement), the severance events with the recipient's counts (one statement),
 * the statuses (reads/statuses.ts loadStatusPage: a fixed number) with the accounts (who caused
 * them and the reported ones, read with the statuses' authors in one statement, reads/accounts.ts)
 * — then the pure serializers. The recipient's filters apply here (context `notifications`), so
 * every surface drops and annotates the same notifications.
 */
import type { Services } from '../context.ts';
import { loadStatusPage } from '../services/reads/statuses.ts';
import { notificationRows, reportRows, severanceEventRows } from '../services/reads/notifications.ts';
import { statusesOfPage } from './statuses.ts';
import { serializeAccount, type MastodonAccount } from '../serializers/account.ts';
import type { MastodonStatus } from '../serializers/status.ts';
import { serializeReport, type MastodonReport, type ReportRow } from '../serializers/report.ts';
import {
  serializeNotification,
  serializeNotificationGroup,
  serializeSeveranceEvent,
  type MastodonNotification,
  type MastodonRelationshipSeveranceEvent,
  type MastodonNotificationGroup,
  type NotificationGroupRow,
  type NotificationRow,
} from '../serializers/notification.ts';

interface Parts {
  accounts: Map<string, MastodonAccount>;
  statuses: Map<string, MastodonStatus>;
  reports: Map<string, MastodonReport>;
  events: Map<string, MastodonRelationshipSeveranceEvent>;
}

/** The accounts, statuses, reports and severance events a page refers to, rendered for `viewerId`. */
async function loadParts(
  services: Services,
  viewerId: string,
  accountIds: string[],
  statusIds: string[],
  reportIds: string[],
  eventIds: string[],
): Promise<Parts> {
  const reportMap: Map<string, ReportRow> = await reportRows(services, reportIds);
  const targets = [...reportMap.values()].map((r) => r.targetAccountId);
  const [page, eventMap] = await Promise.all([
    // The one filter engine, in the notifications context: a `hide` match leaves the status out
    // (and with it the notification or group, below), a `warn` fills the status' `filtered`. The
    // accounts (who caused them, the reported ones) are read with the statuses' authors.
    loadStatusPage(services, statusIds, viewerId, { filterContext: 'notifications', alsoAccounts: [...accountIds, ...targets] }),
    // The severance events with the viewer's own counts (one statement, none without events).
    severanceEventRows(services, viewerId, eventIds),
  ]);
  const out: Parts = { accounts: new Map(), statuses: statusesOfPage(page, statusIds), reports: new Map(), events: new Map() };
  for (const [id, e] of eventMap) out.events.set(id, serializeSeveranceEvent(e));
  for (const [id, a] of page.view.accounts) out.accounts.set(id, serializeAccount(a, page.view.accountView));
  for (const [id, r] of reportMap) {
    const target = out.accounts.get(r.targetAccountId);
    if (target) out.reports.set(id, serializeReport(r, target));
  }
  return out;
}

/** Rows (of one recipient) rendered, in order; those missing a part they need left out. */
export async function renderNotificationRows(services: Services, recipientAccountId: string, rows: readonly NotificationRow[]): Promise<MastodonNotification[]> {
  if (rows.length === 0) return [];
  const parts = await loadParts(
    services,
    recipientAccountId,
    rows.map((r) => r.fromAccountId),
    rows.flatMap((r) => (r.statusId ? [r.statusId] : [])),
    rows.flatMap((r) => (r.reportId ? [r.reportId] : [])),
    rows.flatMap((r) => (r.severanceEventId ? [r.severanceEventId] : [])),
  );
  return rows.flatMap(
    (r) =>
      serializeNotification(r, {
        account: parts.accounts.get(r.fromAccountId),
        status: r.statusId ? parts.statuses.get(r.statusId) : undefined,
        report: r.reportId ? parts.reports.get(r.reportId) : undefined,
        event: r.severanceEventId ? parts.events.get(r.severanceEventId) : undefined,
      }) ?? [],
  );
}

/** The recipient's notifications `ids` rendered as it sees them, in order (others' and hidden ones left out). */
export async function renderNotifications(services: Services, recipientAccountId: string, ids: readonly string[]): Promise<MastodonNotification[]> {
  return renderNotificationRows(services, recipientAccountId, await notificationRows(services, recipientAccountId, ids));
}

/** Mastodon's PartialAccountWithAvatar. */
export interface MastodonPartialAccount {
  id: string;
  acct: string;
  url: string;
  avatar: string;
  avatar_static: string;
  locked: boolean;
  bot: boolean;
}

export interface MastodonGroupedNotificationsResults {
  accounts: MastodonAccount[];
  partial_accounts?: MastodonPartialAccount[];
  statuses: MastodonStatus[];
  notification_groups: MastodonNotificationGroup[];
}

/**
 * Groups rendered as GroupedNotificationsResults: the accounts and statuses they refer to, each
 * once. With `partialAvatars`, only each group's most recent account is in `accounts`, the other
 * sample accounts are in `partial_accounts`. Groups whose status is gone are left out.
 */
export async function renderNotificationGroups(
  services: Services,
  recipientAccountId: string,
  groups: readonly NotificationGroupRow[],
  opts: { paged: boolean; partialAvatars?: boolean },
): Promise<MastodonGroupedNotificationsResults> {
  const parts = await loadParts(
    services,
    recipientAccountId,
    groups.flatMap((g) => g.sampleAccountIds),
    groups.flatMap((g) => (g.statusId ? [g.statusId] : [])),
    groups.flatMap((g) => (g.reportId ? [g.reportId] : [])),
    groups.flatMap((g) => (g.severanceEventId ? [g.severanceEventId] : [])),
  );
  const shown = groups.filter(
    (g) =>
      (!g.statusId || parts.statuses.has(g.statusId)) &&
      (g.type !== 'admin.report' || (g.reportId && parts.reports.has(g.reportId))) &&
      (g.type !== 'severed_relationships' || (g.severanceEventId && parts.events.has(g.severanceEventId))),
  );
  const full = new Set<string>();
  const partial = new Set<string>();
  for (const g of shown) {
    g.sampleAccountIds.forEach((id, i) => (opts.partialAvatars && i > 0 ? partial : full).add(id));
  }
  for (const id of full) partial.delete(id);
  const out: MastodonGroupedNotificationsResults = {
    accounts: [...full].flatMap((id) => parts.accounts.get(id) ?? []),
    statuses: [...new Set(shown.flatMap((g) => (g.statusId ? [g.statusId] : [])))].flatMap((id) => parts.statuses.get(id) ?? []),
    notification_groups: shown.map((g) =>
      serializeNotificationGroup(
        g,
        g.reportId ? parts.reports.get(g.reportId) : undefined,
        opts.paged,
        g.severanceEventId ? parts.events.get(g.severanceEventId) : undefined,
      ),
    ),
  };
  if (opts.partialAvatars) {
    out.partial_accounts = [...partial].flatMap((id) => {
      const a = parts.accounts.get(id);
      return a ? [{ id: a.id, acct: a.acct, url: a.url, avatar: a.avatar, avatar_static: a.avatar_static, locked: a.locked, bot: a.bot }] : [];
    });
  }
  return out;
}
