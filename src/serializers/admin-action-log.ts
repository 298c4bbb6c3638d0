/**
 * An entry of the audit log as GET /api/v1/admin/action_logs answers it (a Roost extension; Mastodon
 * shows its Admin::ActionLog only in its web interface): who (`account`, null for the operator at
 * the CLI), what (`action`, Mastodon's verbs), on what (`target_type`, `target_id`,
 * `human_identifier`), when, and the action's `detail`. Pure.
 */
import type { AdminActionRow } from '../services/audit-log.ts';
import type { MastodonAccount } from './account.ts';

export interface MastodonAdminActionLog {
  id: string;
  action: string;
  target_type: string;
  target_id: string | null;
  human_identifier: string | null;
  detail: Record<string, unknown>;
  created_at: string;
  account: MastodonAccount | null;
}

export function serializeAdminActionLog(row: AdminActionRow, accounts: ReadonlyMap<string, MastodonAccount>): MastodonAdminActionLog {
  return {
    id: row.id,
    action: row.action,
    target_type: row.target_type,
    target_id: row.target_id,
    human_identifier: row.human_identifier,
    detail: row.detail ?? {},
    created_at: new Date(row.created_at).toISOString(),
    account: row.account_id === null ? null : (accounts.get(row.account_id) ?? null),
  };
}
