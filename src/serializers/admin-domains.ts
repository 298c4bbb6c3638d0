/**
 * Admin::DomainBlock and Admin::DomainAllow as Mastodon's REST::Admin serializers render them
 * (entities/Admin_DomainBlock.md, Admin_DomainAllow.md). Pure.
 */
import { createHash } from 'node:crypto';

export interface AdminDomainBlockView {
  id: string;
  domain: string;
  severity: 'silence' | 'suspend' | 'noop';
  reject_media: boolean;
  reject_reports: boolean;
  private_comment: string | null;
  public_comment: string | null;
  obfuscate: boolean;
  created_at: Date;
}

export interface AdminDomainAllowView {
  id: string;
  domain: string;
  created_at: Date;
}

export interface MastodonAdminDomainBlock {
  id: string;
  domain: string;
  digest: string;
  created_at: string;
  severity: 'silence' | 'suspend' | 'noop';
  reject_media: boolean;
  reject_reports: boolean;
  private_comment: string | null;
  public_comment: string | null;
  obfuscate: boolean;
}

export interface MastodonAdminDomainAllow {
  id: string;
  domain: string;
  created_at: string;
}

/** The SHA-256 hex digest of a domain (Mastodon's DomainBlock#domain_digest). */
export function domainDigest(domain: string): string {
  return createHash('sha256').update(domain).digest('hex');
}

export function serializeAdminDomainBlock(b: AdminDomainBlockView): MastodonAdminDomainBlock {
  return {
    id: b.id,
    domain: b.domain,
    digest: domainDigest(b.domain),
    created_at: b.created_at.toISOString(),
    severity: b.severity,
    reject_media: b.reject_media,
    reject_reports: b.reject_reports,
    private_comment: b.private_comment,
    public_comment: b.public_comment,
    obfuscate: b.obfuscate,
  };
}

export function serializeAdminDomainAllow(a: AdminDomainAllowView): MastodonAdminDomainAllow {
  return { id: a.id, domain: a.domain, created_at: a.created_at.toISOString() };
}

/** The 422 of a conflicting block (Mastodon's REST::Admin::ExistingDomainBlockErrorSerializer). */
export function serializeExistingDomainBlockError(existing: AdminDomainBlockView): { error: string; existing_domain_block: MastodonAdminDomainBlock } {
  return {
    error: `You have already imposed stricter limits on ${existing.domain}.`,
    existing_domain_block: serializeAdminDomainBlock(existing),
  };
}
