/**
 * Admin::Account rendered, the one place: the admin facts of the accounts (reads/admin-accounts.ts,
 * one statement) and their public Account (reads/accounts.ts loadAccountPage: one statement, plus
 * one for mentions and one for emojis only when a profile has any), whatever the number of ids.
 * Used by the admin accounts routes and by the admin reports (their `account` / `target_account`).
 */
import type { Services } from '../context.ts';
import { adminAccountFacts } from '../services/reads/admin-accounts.ts';
import { loadAccountPage } from '../services/reads/accounts.ts';
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
  const [facts, page] = await Promise.all([adminAccountFacts(services, accountIds), loadAccountPage(services, accountIds)]);
  for (const id of accountIds) {
    const f = facts.get(id);
    const a = page.accounts.get(id);
    if (!f || !a || out.has(id)) continue;
    out.set(id, serializeAdminAccount(f, serializeAccount(a, page.view)));
  }
  return out;
}
