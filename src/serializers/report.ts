/** Mastodon's Report entity (entities/Report.md), as the reporter and the moderators see it. Pure. */
import type { MastodonAccount } from './account.ts';

export const REPORT_CATEGORIES = ['spam', 'legal', 'violation', 'other'] as const;
export type ReportCategory = (typeof REPORT_CATEGORIES)[number];

export interface ReportRow {
  id: string;
  accountId: string;
  targetAccountId: string;
  statusIds: string[];
  ruleIds: string[] | null;
  comment: string;
  category: string;
  forwarded: boolean;
  actionTakenAt: Date | null;
  createdAt: Date;
}

export interface MastodonReport {
  id: string;
  action_taken: boolean;
  action_taken_at: string | null;
  category: string;
  comment: string;
  forwarded: boolean;
  created_at: string;
  status_ids: string[] | null;
  rule_ids: string[] | null;
  target_account: MastodonAccount;
}

export function serializeReport(row: ReportRow, targetAccount: MastodonAccount): MastodonReport {
  return {
    id: row.id,
    action_taken: row.actionTakenAt !== null,
    action_taken_at: row.actionTakenAt?.toISOString() ?? null,
    category: row.category,
    comment: row.comment,
    forwarded: row.forwarded,
    created_at: row.createdAt.toISOString(),
    status_ids: row.statusIds.length ? row.statusIds : null,
    rule_ids: row.ruleIds?.length ? row.ruleIds : null,
    target_account: targetAccount,
  };
}
