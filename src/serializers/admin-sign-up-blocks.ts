/**
 * Admin::EmailDomainBlock, Admin::CanonicalEmailBlock and Admin::IpBlock as Mastodon's REST::Admin
 * serializers render them (entities/Admin_EmailDomainBlock.md, Admin_CanonicalEmailBlock.md,
 * Admin_IpBlock.md). Pure.
 */
import type { CanonicalEmailBlockRow, EmailDomainBlockRow, IpBlockRow } from '../services/reads/sign-up-blocks.ts';

export function serializeAdminEmailDomainBlock(row: EmailDomainBlockRow) {
  return {
    id: row.id,
    domain: row.domain,
    created_at: new Date(row.created_at).toISOString(),
    // Mastodon's Trends::History: the day as a Unix timestamp, the counts as strings, newest first.
    history: row.history.map((h) => ({ day: String(Math.floor(h.day.getTime() / 1000)), accounts: String(h.accounts), uses: String(h.uses) })),
  };
}

export function serializeAdminCanonicalEmailBlock(row: CanonicalEmailBlockRow) {
  return { id: row.id, canonical_email_hash: row.canonical_email_hash };
}

export function serializeAdminIpBlock(row: IpBlockRow) {
  return {
    id: row.id,
    ip: row.ip,
    severity: row.severity,
    comment: row.comment,
    created_at: new Date(row.created_at).toISOString(),
    expires_at: row.expires_at === null ? null : new Date(row.expires_at).toISOString(),
  };
}
