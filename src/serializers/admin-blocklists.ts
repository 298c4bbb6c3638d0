/**
 * Blocklist subscriptions and their entries as the admin API answers them (a Roost extension:
 * Mastodon has no such entity; the fields follow its Admin::DomainBlock where they are the same).
 */
import type { BlocklistEntryRow, BlocklistSubscriptionRow, RefreshSummary } from '../services/blocklists.ts';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export function serializeBlocklistSubscription(row: BlocklistSubscriptionRow) {
  return {
    id: row.id,
    url: row.url,
    auto_apply: row.auto_apply,
    last_fetched_at: iso(row.last_fetched_at),
    last_success_at: iso(row.last_success_at),
    last_error: row.last_error,
    entries: { ...row.counts },
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function serializeBlocklistEntry(row: BlocklistEntryRow) {
  return {
    id: row.id,
    subscription_id: row.subscription_id,
    domain: row.domain,
    severity: row.severity,
    reject_media: row.reject_media,
    reject_reports: row.reject_reports,
    public_comment: row.public_comment,
    obfuscate: row.obfuscate,
    state: row.state,
    domain_block_id: row.domain_block_id,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function serializeRefreshSummary(s: RefreshSummary) {
  return { added: s.added, changed: s.changed, removed: s.removed, applied: s.applied, retracted: s.retracted, error: s.error };
}
