/** A push subscription → Mastodon's WebPushSubscription entity (REST::WebPushSubscriptionSerializer). */

export interface MastodonWebPushSubscription {
  id: string;
  endpoint: string;
  standard: boolean;
  /** The alert types the client gave, each cast to a boolean (null for a blank value, as Rails casts ''). */
  alerts: Record<string, boolean | null>;
  server_key: string;
  policy: string;
}

export interface WebPushSubscriptionView {
  id: string;
  endpoint: string;
  standard: boolean;
  alerts: Record<string, boolean | null | undefined>;
  policy: string | null;
}

export function serializeWebPushSubscription(sub: WebPushSubscriptionView, vapidPublicKey: string): MastodonWebPushSubscription {
  const alerts: Record<string, boolean | null> = {};
  for (const [k, v] of Object.entries(sub.alerts)) if (v !== undefined) alerts[k] = v;
  return { id: sub.id, endpoint: sub.endpoint, standard: sub.standard, alerts, server_key: vapidPublicKey, policy: sub.policy ?? 'all' };
}
