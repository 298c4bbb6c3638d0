/** A user's settings → Mastodon's Preferences entity (GET /api/v1/preferences). Pure. */
import type { Account, User } from '../db/entities/index.ts';
import { defaultPrivacy } from './credential-account.ts';

/** The values of `posting:default:quote_policy` (Mastodon 4.5; set with update_credentials' source[quote_policy]). */
export const QUOTE_POLICIES: readonly string[] = ['public', 'followers', 'nobody'];

export interface MastodonPreferences {
  'posting:default:visibility': string;
  'posting:default:sensitive': boolean;
  'posting:default:language': string | null;
  /** Mastodon 4.5: who may quote the user's new posts by default (public, followers, nobody). */
  'posting:default:quote_policy': string;
  'reading:expand:media': string;
  'reading:expand:spoilers': boolean;
  'reading:autoplay:gifs': boolean;
}

export function serializePreferences(account: Account, user: User): MastodonPreferences {
  const s = user.settings as Record<string, unknown>;
  const media = s['reading:expand:media'];
  return {
    'posting:default:visibility': defaultPrivacy(account, user),
    'posting:default:sensitive': s['posting:default:sensitive'] === true,
    'posting:default:language': typeof s['posting:default:language'] === 'string' && s['posting:default:language'] ? s['posting:default:language'] : null,
    'posting:default:quote_policy': QUOTE_POLICIES.includes(s['posting:default:quote_policy'] as string) ? (s['posting:default:quote_policy'] as string) : 'public',
    'reading:expand:media': media === 'show_all' || media === 'hide_all' ? media : 'default',
    'reading:expand:spoilers': s['reading:expand:spoilers'] === true,
    'reading:autoplay:gifs': s['reading:autoplay:gifs'] === true,
  };
}
