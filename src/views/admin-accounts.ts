/**
 * Admin::Account rendered, the one place: the admin facts of the accounts and the rows of their
 * public Account in one statement (reads/admin-accounts.ts loadAdminAccounts; plus one for
 * mentions and one for emojis only when a profile has any), whatever the number of ids.
 * Used by the admin accounts routes and by the admin reports (their `account` / `target_account`).
 */
import type { Services } from '../context.ts';
import { loadAdminAccountList, loadAdminAccounts, type AdminAccountFacts, type AdminAccountFilter, type AdminAccountList } from '../services/reads/admin-accounts.ts';
import type { PageParams } from '../services/reads/page.ts';
import type { AccountPage } from '../services/reads/accounts.ts';
import { serializeAccount } from '../serializers/account.ts';
import { serializeAdminAccount, type AdminAccountJson } from '../serializers/admin-account.ts';

export type { AdminAccountJson };

/** The moderator looking (reserved: Admin::Account does not depend on who looks today). */
export interface AdminViewer {
  accountId: string;
}

/** Admin::Account for each known id in `accountIds` (unknown ids left out), keyed by id. */
export async function adminAccountViews(services: Services, accountIds: string[], _viewer?: AdminViewer): Promise<Map<string, AdminAccountJson>> {
  if (accountIds.length === 0) return new Map();
  const { facts, page } = await loadAdminAccounts(services, accountIds);
  return render(accountIds, facts, page);
}

function render(ids: readonly string[], facts: Map<string, AdminAccountFacts>, page: AccountPage): Map<string, AdminAccountJson> {
  const out = new Map<string, AdminAccountJson>();
  for (const id of ids) {
    const f = facts.get(id);
    const a = page.accounts.get(id);
    if (!f || !a || out.has(id)) continue;
    out.set(id, serializeAdminAccount(f, serializeAccount(a, page.view)));
  }
  return out;
}

/** A page of the admin list (Mastodon's AccountFilter), rendered: the page and its accounts in one statement. Newest first. */
export async function adminAccountListViews(services: Services, filter: AdminAccountFilter, p: PageParams): Promise<{ ids: string[]; accounts: AdminAccountJson[] }> {
  return renderAdminAccountList(await loadAdminAccountList(services, filter, p));
}

/** The loaded page rendered, newest first (pure: the bench times it alone). */
export function renderAdminAccountList({ ids, facts, page }: AdminAccountList): { ids: string[]; accounts: AdminAccountJson[] } {
  const views = render(ids, facts, page);
  return { ids, accounts: ids.flatMap((id) => views.get(id) ?? []) };
}
