/**
 * Mastodon's Web Push payload (Web::NotificationSerializer): access_token, preferred_locale,
 * notification_id, notification_type, icon, title, body. Titles are Mastodon's English
 * `notification_mailer.<type>.subject` strings; the body is the plain text of the status' content
 * warning, else of the status, else the sender's note, cut to 140 characters as Rails' truncate
 * does ("…" as three dots).
 */
import { plainText } from '../lib/sanitize.ts';

/** The parts of a rendered Mastodon Notification that push reads. */
export interface PushableNotification {
  id: string;
  type: string;
  account: { id: string; acct: string; display_name: string; avatar_static: string; note?: string };
  status?: { id: string; content?: string; spoiler_text: string } | null;
}

export interface WebPushPayload {
  access_token: string;
  preferred_locale: string;
  notification_id: string;
  notification_type: string;
  icon: string;
  title: string;
  body: string;
}

const TITLES: Record<string, (name: string) => string> = {
  mention: (n) => `You were mentioned by ${n}`,
  status: (n) => `${n} just posted`,
  reblog: (n) => `${n} boosted your post`,
  follow: (n) => `${n} is now following you`,
  follow_request: (n) => `Pending follower: ${n}`,
  favourite: (n) => `${n} favorited your post`,
  poll: (n) => `A poll by ${n} has ended`,
  update: (n) => `${n} edited a post`,
  quote: (n) => `${n} quoted your post`,
  quoted_update: (n) => `${n} edited a post you have quoted`,
  'admin.sign_up': (n) => `${n} signed up`,
  'admin.report': (n) => `${n} submitted a report`,
};

export const BODY_LENGTH = 140;

/** Rails' truncate(text, length: 140): longer text is cut to 137 characters plus "...". */
export function truncateBody(text: string, length = BODY_LENGTH): string {
  const chars = [...text];
  if (chars.length <= length) return text;
  return chars.slice(0, length - 3).join('') + '...';
}

export function pushTitle(n: PushableNotification): string {
  const name = n.account.display_name.trim() || n.account.acct.split('@')[0]!;
  return (TITLES[n.type] ?? ((x: string) => `New notification from ${x}`))(name);
}

export function pushBody(n: PushableNotification): string {
  const source = n.status?.spoiler_text?.trim() ? n.status.spoiler_text : (n.status?.content ?? n.account.note ?? '');
  return truncateBody(plainText(source, 10_000));
}

export function buildPushPayload(n: PushableNotification, accessToken: string, locale: string | null): WebPushPayload {
  return {
    access_token: accessToken,
    preferred_locale: locale || 'en',
    notification_id: n.id,
    notification_type: n.type,
    icon: n.account.avatar_static,
    title: pushTitle(n),
    body: pushBody(n),
  };
}
