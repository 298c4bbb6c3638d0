/**
 * The instance's policy as the instance API states it: the Mastodon version Roost is compatible
 * with, the limits (declared once, in config: config/index.ts MASTODON_LIMITS, read by validation
 * too), who may read which feeds, the default privacy policy, the activity window. Data and small
 * pure helpers; the serializers (serializers/instance.ts) render it. Services read it here too.
 */
import { MASTODON_LIMITS, MASTODON_SUPPORTED_MIME_TYPES, type InstanceLimits } from '../../config/index.ts';

// --- versions -----------------------------------------------------------------------------------

/** The Mastodon release whose REST API Roost is compatible with. */
export const MASTODON_COMPATIBLE_VERSION = '4.3.0';
/** `api_versions.mastodon` of that release (4.3.0 introduced the field at 2). */
export const MASTODON_API_VERSION = 2;

/** The `version` string: "4.3.0 (compatible; Roost 0.1.0)". */
export function instanceVersionString(softwareVersion: string): string {
  return `${MASTODON_COMPATIBLE_VERSION} (compatible; Roost ${softwareVersion})`;
}

// --- limits (config/index.ts declares them) ------------------------------------------------------

export type { InstanceLimits };
/** The upload types Mastodon 4.3 accepts, in its order. */
export const DEFAULT_SUPPORTED_MIME_TYPES: readonly string[] = MASTODON_SUPPORTED_MIME_TYPES;
/** Mastodon's limits: what `config.limits` holds unless configured otherwise. */
export const DEFAULT_LIMITS: InstanceLimits = MASTODON_LIMITS;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

// --- registrations and feeds --------------------------------------------------------------------

/** `open`: anyone can sign up; `approval`: sign-ups wait for a moderator; `closed`: none. */
export type RegistrationsMode = 'open' | 'approval' | 'closed';

/** Whether sign-ups are possible at all (also NodeInfo's `openRegistrations`, as Mastodon does). */
export function registrationsEnabled(mode: RegistrationsMode): boolean {
  return mode !== 'closed';
}

export type FeedAccess = 'public' | 'authenticated' | 'disabled';

/** Who may read which feeds (Mastodon 4.5 `configuration.timelines_access`). */
export interface TimelinesAccess {
  liveFeeds: { local: FeedAccess; remote: FeedAccess };
  hashtagFeeds: { local: 'public' | 'authenticated'; remote: FeedAccess };
  trendingLinkFeeds: { local: 'public' | 'authenticated'; remote: FeedAccess };
}

export const DEFAULT_TIMELINES_ACCESS: TimelinesAccess = deepFreeze<TimelinesAccess>({
  liveFeeds: { local: 'public', remote: 'public' },
  hashtagFeeds: { local: 'public', remote: 'public' },
  trendingLinkFeeds: { local: 'public', remote: 'public' },
});

// --- the default privacy policy -----------------------------------------------------------------

/** When Roost's default privacy policy text last changed. */
export const DEFAULT_PRIVACY_POLICY_UPDATED_AT = new Date('2026-11-22T00:00:00.000Z');

/**
 * The policy served until an operator writes their own: a plain description of what a Roost
 * server stores and sends. `%{domain}` is replaced with the server's domain.
 */
export const DEFAULT_PRIVACY_POLICY_MARKDOWN = `# Privacy policy

This policy describes what %{domain} ("this server") stores about you and where that data goes.
It is the default text shipped with Roost; the people who run this server can replace it.

## What this server stores

- **Your account**: your username, e-mail address and a hash of your password; your profile
  (display name, bio, avatar, header, profile fields) and your settings.
- **What you post**: your posts, their media and polls, with the visibility you choose. Direct and
  followers-only posts are stored on this server too, and its operators can technically read
  them: do not share anything over it that you would not want a server administrator to see.
- **Your connections**: who you follow and who follows you, your blocks, mutes, lists, filters,
  bookmarks and favourites.
- **Sign-in data**: the applications you authorised, and, for security, the IP address and
  browser or app that signed in.

## Where your data goes

This server is part of a federated network. Public posts, and posts addressed to people on other
servers, are delivered to those servers, as is your public profile. Those servers keep their own
copies under their own policies. When you delete a post or your account, this server asks them to
delete their copies too, but it cannot force them to.

## How long it is kept

Your data stays until you delete it or your account. Sign-in records are kept only as long as they
are needed to keep your account secure.

## Your choices

You can edit or delete your posts and profile at any time, and delete your account. Contact the
operators of %{domain} for a copy of your data or any other question about this policy.
`;

// --- activity -----------------------------------------------------------------------------------

/** Weeks the activity endpoint reports (about three months). */
export const INSTANCE_ACTIVITY_WEEKS = 12;

/**
 * The starts of the last `weeks` weeks, newest first: Monday 00:00 UTC of the week containing
 * `now`, then seven days back each time. UNIX seconds.
 */
export function instanceActivityWeekStarts(now: Date, weeks: number = INSTANCE_ACTIVITY_WEEKS): number[] {
  const day = 86_400;
  const todayStart = Math.floor(now.getTime() / 1000 / day) * day;
  const daysSinceMonday = (now.getUTCDay() + 6) % 7;
  const monday = todayStart - daysSinceMonday * day;
  return Array.from({ length: weeks }, (_, i) => monday - i * 7 * day);
}

