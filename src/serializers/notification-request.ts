/**
 * Mastodon 4.3's NotificationPolicy (entities/NotificationPolicy.md), its v1 form (4.2's
 * `filter_*` booleans, which /api/v1/notifications/policy still answers), and NotificationRequest
 * (entities/NotificationRequest.md: `notifications_count` a string, as Mastodon). Pure: the
 * account and status are rendered by the caller's batched views.
 */
import type { MastodonAccount } from './account.ts';
import type { MastodonStatus } from './status.ts';

export type PolicyValue = 'accept' | 'filter' | 'drop';
export const POLICY_FIELDS = ['for_not_following', 'for_not_followers', 'for_new_accounts', 'for_private_mentions', 'for_limited_accounts'] as const;
export type PolicyField = (typeof POLICY_FIELDS)[number];

export interface PolicyRow {
  values: Record<PolicyField, PolicyValue>;
  pendingRequestsCount: number;
  pendingNotificationsCount: number;
}

export interface NotificationRequestRow {
  id: string;
  fromAccountId: string;
  lastStatusId: string | null;
  notificationsCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface MastodonPolicySummary {
  pending_requests_count: number;
  pending_notifications_count: number;
}

export type MastodonNotificationPolicy = Record<PolicyField, PolicyValue> & { summary: MastodonPolicySummary };

export interface MastodonNotificationPolicyV1 {
  filter_not_following: boolean;
  filter_not_followers: boolean;
  filter_new_accounts: boolean;
  filter_private_mentions: boolean;
  summary: MastodonPolicySummary;
}

export interface MastodonNotificationRequest {
  id: string;
  created_at: string;
  updated_at: string;
  notifications_count: string;
  account: MastodonAccount;
  last_status: MastodonStatus | null;
}

const summaryOf = (p: PolicyRow): MastodonPolicySummary => ({
  pending_requests_count: p.pendingRequestsCount,
  pending_notifications_count: p.pendingNotificationsCount,
});

export function serializeNotificationPolicy(p: PolicyRow): MastodonNotificationPolicy {
  return {
    for_not_following: p.values.for_not_following,
    for_not_followers: p.values.for_not_followers,
    for_new_accounts: p.values.for_new_accounts,
    for_private_mentions: p.values.for_private_mentions,
    for_limited_accounts: p.values.for_limited_accounts,
    summary: summaryOf(p),
  };
}

/** The v1 form: a category is "filtered" unless it is accepted (drop counts as filtered). */
export function serializeNotificationPolicyV1(p: PolicyRow): MastodonNotificationPolicyV1 {
  return {
    filter_not_following: p.values.for_not_following !== 'accept',
    filter_not_followers: p.values.for_not_followers !== 'accept',
    filter_new_accounts: p.values.for_new_accounts !== 'accept',
    filter_private_mentions: p.values.for_private_mentions !== 'accept',
    summary: summaryOf(p),
  };
}

/** A request; null when its account cannot be rendered. */
export function serializeNotificationRequest(
  r: NotificationRequestRow,
  account: MastodonAccount | undefined,
  lastStatus: MastodonStatus | undefined,
): MastodonNotificationRequest | null {
  if (!account) return null;
  return {
    id: r.id,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    notifications_count: String(r.notificationsCount),
    account,
    last_status: lastStatus ?? null,
  };
}
