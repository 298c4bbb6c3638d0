/**
 * The read side's pattern, which timelines will follow:
 *
 *   read module (SQL: a page of rows, ids in order)
 *     → one batched view for the page (accounts, their stats rows, highlighted roles, moved-to
 *       accounts: ONE query whatever the page size; relations and viewer flags likewise)
 *     → pure serializer (serializers/account.ts).
 *
 * The one helper that renders "accounts by ids, in order" is views/accounts.ts renderAccounts (read
 * module + serializer; services never serialize).
 */
import type { Services } from '../../context.ts';
import type { Account } from '../../db/entities/index.ts';
import type { AccountView } from '../../serializers/account.ts';
import { accountColumns, accountFromRow } from './account-rows.ts';
import { isId } from './page.ts';
import { localProfileTexts, mentionTargets } from './mentions.ts';
import { accountEmojiShortcodes, loadEmojisFor } from './emojis.ts';
import { mediaStorage } from '../media-storage.ts';
import { prepared } from '../../db/prepared.ts';

/** Accounts by id plus the view that renders them (every map filled for every account loaded). */
export interface AccountPage {
  accounts: Map<string, Account>;
  view: Required<AccountView>;
}

export interface PageOptions {
  /**
   * Only accounts others may see: every remote one, and local ones whose sign-up was approved (a
   * pending sign-up is nobody's business yet). Suspended accounts are shown, as Mastodon does
   * since 3.3: the serializer blanks them and says `suspended: true`.
   */
  visibleOnly?: boolean;
}

/**
 * The columns of {@link loadAccountPage}'s statement over `accounts a`, `account_stats s`,
 * `users u` and the highlighted role `r` (see ACCOUNT_PAGE_JOINS); `ids` and `visibleOnly` are SQL
 * expressions (by default the parameters `$1` and `$2`).
 * Exported so a read module that needs more of the same rows (the admin view) adds its columns
 * to the same statement and builds the page with {@link accountPageFromRows}.
 */
export function accountPageColumns(ids = '$1::bigint[]', visibleOnly = '$2::boolean'): string {
  return `${accountColumns('a')}, (a.id = any(${ids}) and (not ${visibleOnly} or u.approved is not false)) as in_page,
            coalesce(s.followers_count, 0) as followers_count, coalesce(s.following_count, 0) as following_count,
            coalesce(s.statuses_count, 0) as statuses_count, s.last_status_at,
            r.id::text as role_id, r.name as role_name, r.color as role_color`;
}
export const ACCOUNT_PAGE_JOINS = `accounts a
       left join account_stats s on s.account_id = a.id
       left join users u on u.account_id = a.id
       left join user_roles r on r.id = u.role_id and r.highlighted`;
/** The page's accounts (`ids`, an SQL array expression) and the accounts they moved to. */
export function accountPageWhere(ids = '$1::bigint[]'): string {
  return `a.id = any(array_cat(${ids}, array(
              select m.moved_to_account_id from accounts m where m.id = any(${ids}) and m.moved_to_account_id is not null)))`;
}

/** {@link loadAccountPage}'s statement. */
const ACCOUNT_PAGE_SQL = prepared(`select ${accountPageColumns()} from ${ACCOUNT_PAGE_JOINS} where ${accountPageWhere()}`);

/**
 * The accounts `ids` (and the accounts they moved to, nested one level) with their counters from
 * the stats row and their highlighted role: one statement. Unknown ids are left out.
 */
export async function loadAccountPage(services: Services, ids: readonly string[], opts: PageOptions = {}): Promise<AccountPage> {
  const wanted = [...new Set(ids)].filter(isId);
  if (wanted.length === 0) return accountPageFromRows(services, []);
  return accountPageFromRows(services, await services.db.sql.query<Record<string, unknown>>(ACCOUNT_PAGE_SQL, [wanted, opts.visibleOnly ?? false]));
}

/** The page from rows selected with ACCOUNT_PAGE_COLUMNS (plus, for mentions and emojis, one statement each only when needed). */
export async function accountPageFromRows(services: Services, rows: readonly Record<string, unknown>[]): Promise<AccountPage> {
  const view: Required<AccountView> = {
    baseUrl: services.config.publicUrl,
    localDomain: services.config.domain,
    counts: new Map(),
    roles: new Map(),
    accounts: new Map(),
    mentions: new Map(),
    emojis: new Map(),
    mediaBaseUrl: mediaStorage(services).baseUrl,
  };
  const accounts = new Map<string, Account>();
  if (rows.length === 0) return { accounts, view };
  for (const row of rows) {
    const account = accountFromRow(row);
    if (row.in_page) accounts.set(account.id, account);
    view.accounts.set(account.id, account);
    view.counts.set(account.id, {
      followers: Number(row.followers_count),
      following: Number(row.following_count),
      statuses: Number(row.statuses_count),
      lastStatusAt: row.last_status_at ? new Date(row.last_status_at as string) : null,
    });
    view.roles.set(account.id, row.role_id ? [{ id: row.role_id as string, name: (row.role_name as string) ?? '', color: (row.role_color as string) ?? '' }] : []);
  }
  // Local bios and fields link the accounts they mention: one more query, only when one does.
  view.mentions = await mentionTargets(services, localProfileTexts(view.accounts.values()));
  // Custom emojis in names, bios and fields: one more query, only when one names any.
  view.emojis = await loadEmojisFor(
    services,
    [...view.accounts.values()].map((a) => ({ owner: a.id, domain: a.domain ?? null, shortcodes: accountEmojiShortcodes(a) })),
  );
  return { accounts, view };
}

/** A local account's followers, following and statuses counts from its stats row (null: no such account). Fedify's collection counters. */
export async function localAccountCounters(services: Services, username: string): Promise<{ followers: number; following: number; statuses: number } | null> {
  const [row] = await services.db.sql.query<{ followers: number; following: number; statuses: number }>(
    `select coalesce(s.followers_count, 0)::int as followers, coalesce(s.following_count, 0)::int as following,
            coalesce(s.statuses_count, 0)::int as statuses
       from accounts a left join account_stats s on s.account_id = a.id
      where a.domain is null and a.username ilike $1`,
    [username.replace(/[\\%_]/g, '\\$&')],
  );
  return row ?? null;
}
