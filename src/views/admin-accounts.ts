/**
 * Admin::Account rendered, the one place: the admin facts of the accounts and the rows of their
 * public Account in one statement (reads/admin-accounts.ts loadAdminAccounts; plus one for
 * mentions and one for emojis only when a profile has any), whatever the number of ids.
 * Used by the admin accounts routes and by the admin reports (their `account` / `target_account`).
 */
import type { Services } from '../context.ts';
import { loadAdminAccounts } from '../services/reads/admin-accounts.ts';
import { serializeAccount } from '../serializers/account.ts';
import { serializeAdminAccount, type AdminAccountJson } from '../serializers/admin-account.ts';

export type { AdminAccountJson };

/** The moderator looking (reserved: Admin::Account does not depend on who looks today). */
export interface AdminViewer {
  accountId: string;
}

/** Admin::Account for each known id in `accountIds` (unknown ids left out), keyed by id. */
export async function adminAccountViews(services: Services, accountIds: string[], _viewer?: AdminViewer): Promise<Map<string, AdminAccountJson>> {
  const out = new Map<string, AdminAccountJson>();
  if (accountIds.length === 0) return out;
  const { facts, page } = await loadAdminAccounts(services, accountIds);
  for (const id of accountIds) {
    const f = facts.get(id);
    const a = page.accounts.get(id);
    if (!f || !a || out.has(id)) continue;
    out.set(id, serializeAdminAccount(f, serializeAccount(a, page.view)));
  }
  return out;
}
