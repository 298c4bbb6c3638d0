/**
 * The signed-in user's own account (Mastodon's CredentialAccount): the Account entity plus
 * `source` (the plain text behind the HTML, and the posting defaults) and `role` (the full role,
 * with its effective permissions). Pure.
 */
import { isQuotePolicy } from '../lib/quote-policy.ts';
import type { Account, User, UserRole } from '../db/entities/index.ts';
import { PERMISSIONS } from '../db/entities/index.ts';
import { serializeAccount, type AccountView, type MastodonAccount, type MastodonField } from './account.ts';

export interface MastodonRole {
  id: string;
  name: string;
  permissions: string;
  color: string;
  highlighted: boolean;
}

export interface MastodonCredentialAccount extends MastodonAccount {
  source: {
    privacy: string;
    sensitive: boolean;
    language: string | null;
    note: string;
    fields: MastodonField[];
    follow_requests_count: number;
    hide_collections: boolean | null;
    discoverable: boolean | null;
    indexable: boolean;
    /** Mastodon 4.4: domains allowed to credit this account as author; not settable yet, so empty. */
    attribution_domains: string[];
    /** Mastodon 4.5: who may quote the user's new posts by default (public, followers, nobody). */
    quote_policy: string;
  };
  role: MastodonRole;
}

/** What every user may do without a role (Mastodon's "everyone" role): invite users. */
export const EVERYONE_PERMISSIONS = PERMISSIONS.inviteUsers;
const ALL_PERMISSIONS = Object.values(PERMISSIONS).reduce((a, b) => a | b, 0n);

/**
 * A role as Mastodon serializes it: its permissions are the computed ones — the everyone role's
 * added in, and every permission for an administrator. No role: the implicit everyone role.
 */
export function serializeRole(role: UserRole | null): MastodonRole {
  if (!role) return { id: '-99', name: '', permissions: String(EVERYONE_PERMISSIONS), color: '', highlighted: false };
  const own = BigInt(role.permissions);
  const computed = own & PERMISSIONS.administrator ? ALL_PERMISSIONS : own | EVERYONE_PERMISSIONS;
  return { id: role.id, name: role.name, permissions: String(computed), color: role.color, highlighted: role.highlighted };
}

/** The user's default posting visibility: as chosen, else private for a locked account, else public. */
export function defaultPrivacy(account: Account, user: User): string {
  const chosen = (user.settings as Record<string, unknown>)['posting:default:visibility'];
  return typeof chosen === 'string' ? chosen : account.locked ? 'private' : 'public';
}

export function serializeCredentialAccount(
  account: Account,
  user: User,
  role: UserRole | null,
  view: AccountView,
  followRequestsCount: number,
): MastodonCredentialAccount {
  const settings = user.settings as Record<string, unknown>;
  return {
    ...serializeAccount(account, view),
    source: {
      privacy: defaultPrivacy(account, user),
      sensitive: settings['posting:default:sensitive'] === true,
      language: typeof settings['posting:default:language'] === 'string' ? settings['posting:default:language'] : null,
      note: account.note,
      fields: account.fields.map((f) => ({ name: f.name, value: f.value, verified_at: f.verified_at ?? null })),
      follow_requests_count: followRequestsCount,
      hide_collections: account.hideCollections ?? false,
      discoverable: account.discoverable ?? null,
      indexable: account.indexable,
      attribution_domains: [],
      quote_policy: isQuotePolicy(settings['posting:default:quote_policy']) ? settings['posting:default:quote_policy'] : 'public',
    },
    role: serializeRole(role),
  };
}
