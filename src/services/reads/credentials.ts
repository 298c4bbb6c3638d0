/**
 * The signed-in user's own account as verify_credentials, update_credentials and preferences show
 * it: the account, its stats row, the user, the user's role (and the highlighted one), the moved-to
 * account, and the pending follow requests (counted up to Mastodon's cap) — one statement.
 */
import { accountEmojiShortcodes, loadEmojisFor } from './emojis.ts';
import { mediaStorage } from '../media-storage.ts';
import type { Services } from '../../context.ts';
import type { Account, User, UserRole } from '../../db/entities/index.ts';
import type { AccountView } from '../../serializers/account.ts';
import { notFound } from '../../lib/errors.ts';
import { accountColumns, accountFromRow, userColumns, userFromRow } from './account-rows.ts';
import { loadAccountPage } from './accounts.ts';
import { localProfileTexts, mentionTargets } from './mentions.ts';

/** Mastodon shows at most this many pending requests in the credentials (FollowRequest…limit(40).count). */
export const FOLLOW_REQUESTS_COUNT_CAP = 40;

export interface CredentialData {
  account: Account;
  user: User;
  role: UserRole | null;
  view: AccountView;
  followRequestsCount: number;
}

export async function loadCredentialAccount(services: Services, accountId: string): Promise<CredentialData> {
  const [row] = await services.db.sql.query<Record<string, unknown>>(
    `select ${accountColumns('a')}, ${userColumns('u', 'u_')},
            coalesce(s.followers_count, 0) as followers_count, coalesce(s.following_count, 0) as following_count,
            coalesce(s.statuses_count, 0) as statuses_count, s.last_status_at,
            r.id::text as r_id, r.name as r_name, r.color as r_color, r.permissions::text as r_permissions,
            r.position as r_position, r.highlighted as r_highlighted, r.created_at as r_created_at, r.updated_at as r_updated_at,
            (select count(*) from (select 1 from follows f where f.target_account_id = a.id and f.state = 'requested'
                                    limit ${FOLLOW_REQUESTS_COUNT_CAP}) q)::int as follow_requests_count
       from accounts a
       join users u on u.account_id = a.id
       left join account_stats s on s.account_id = a.id
       left join user_roles r on r.id = u.role_id
      where a.id = $1`,
    [accountId],
  );
  if (!row) throw notFound();
  const account = accountFromRow(row);
  const user = userFromRow(row, 'u_');
  const role = row.r_id
    ? ({
        id: row.r_id as string,
        name: row.r_name as string,
        color: row.r_color as string,
        permissions: row.r_permissions as string,
        position: Number(row.r_position),
        highlighted: row.r_highlighted as boolean,
        createdAt: new Date(row.r_created_at as string),
        updatedAt: new Date(row.r_updated_at as string),
      } as UserRole)
    : null;
  const view: Required<AccountView> = {
    baseUrl: services.config.publicUrl,
    counts: new Map([[account.id, {
      followers: Number(row.followers_count),
      following: Number(row.following_count),
      statuses: Number(row.statuses_count),
      lastStatusAt: row.last_status_at ? new Date(row.last_status_at as string) : null,
    }]]),
    roles: new Map([[account.id, role?.highlighted ? [{ id: role.id, name: role.name, color: role.color }] : []]]),
    accounts: new Map(),
    localDomain: services.config.domain,
    // The bio and fields link the accounts they mention: a query only when they mention one.
    mentions: await mentionTargets(services, localProfileTexts([account])),
    // Custom emojis in the name, bio and fields: a query only when they name one.
    emojis: await loadEmojisFor(services, [{ owner: account.id, domain: account.domain ?? null, shortcodes: accountEmojiShortcodes(account) }]),
    mediaBaseUrl: mediaStorage(services).baseUrl,
  };
  if (account.movedToAccountId) {
    // A moved local account: the moved-to account nests with its own counters (rare: a second query).
    const page = await loadAccountPage(services, [account.movedToAccountId]);
    for (const [id, a] of page.accounts) view.accounts.set(id, a);
    for (const [id, c] of page.view.counts) view.counts.set(id, c);
    for (const [id, r] of page.view.roles) view.roles.set(id, r);
  }
  return { account, user, role, view, followRequestsCount: Number(row.follow_requests_count) };
}
