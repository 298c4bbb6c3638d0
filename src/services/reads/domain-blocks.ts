/**
 * Reads of the instance's domain policy: pages of blocks and allows for the admin API (by id,
 * newest first, Mastodon's Link-header pagination), one by id, and the public list of
 * GET /api/v1/instance/domain_blocks. One statement each.
 */
import type { Services } from '../../context.ts';
import type { Sql } from '../../db/sql.ts';
import type { DomainSeverity } from '../../lib/domains.ts';
import { isId, newestFirst, pageSql, type PageParams } from './page.ts';

export interface DomainBlockRow {
  id: string;
  domain: string;
  severity: DomainSeverity;
  reject_media: boolean;
  reject_reports: boolean;
  private_comment: string | null;
  public_comment: string | null;
  obfuscate: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface DomainAllowRow {
  id: string;
  domain: string;
  created_at: Date;
}

const BLOCK_COLUMNS = `id::text as id, domain, severity, reject_media, reject_reports, private_comment, public_comment, obfuscate, created_at, updated_at`;

/** Timestamps as Dates whatever the driver gave (PGlite gives Dates, pg strings here). */
export function dated<T extends { created_at: Date }>(row: T): T {
  return { ...row, created_at: new Date(row.created_at) };
}

export async function domainBlockById(sql: Sql, id: string): Promise<DomainBlockRow | null> {
  if (!isId(id)) return null;
  const [row] = await sql.query<DomainBlockRow>(`select ${BLOCK_COLUMNS} from instance_domain_blocks where id = $1`, [id]);
  return row ? dated(row) : null;
}

export async function domainAllowById(sql: Sql, id: string): Promise<DomainAllowRow | null> {
  if (!isId(id)) return null;
  const [row] = await sql.query<DomainAllowRow>(`select id::text as id, domain, created_at from instance_domain_allows where id = $1`, [id]);
  return row ? dated(row) : null;
}

export function domainBlock(services: Services, id: string): Promise<DomainBlockRow | null> {
  return domainBlockById(services.db.sql, id);
}

export function domainAllow(services: Services, id: string): Promise<DomainAllowRow | null> {
  return domainAllowById(services.db.sql, id);
}

export async function domainBlocksPage(services: Services, p: PageParams): Promise<DomainBlockRow[]> {
  const page = pageSql('id', p, 1);
  const rows = await services.db.sql.query<DomainBlockRow>(
    `select ${BLOCK_COLUMNS} from instance_domain_blocks where true${page.where} order by ${page.order} limit ${p.limit}`,
    page.params,
  );
  return newestFirst(rows, p).map(dated);
}

export async function domainAllowsPage(services: Services, p: PageParams): Promise<DomainAllowRow[]> {
  const page = pageSql('id', p, 1);
  const rows = await services.db.sql.query<DomainAllowRow>(
    `select id::text as id, domain, created_at from instance_domain_allows where true${page.where} order by ${page.order} limit ${p.limit}`,
    page.params,
  );
  return newestFirst(rows, p).map(dated);
}

/** Every block in full (the CLI's list), newest first. */
export async function allDomainBlocks(services: Services): Promise<DomainBlockRow[]> {
  const rows = await services.db.sql.query<DomainBlockRow>(`select ${BLOCK_COLUMNS} from instance_domain_blocks order by instance_domain_blocks.id desc`);
  return rows.map(dated);
}

export async function allDomainAllows(services: Services): Promise<DomainAllowRow[]> {
  const rows = await services.db.sql.query<DomainAllowRow>(`select id::text as id, domain, created_at from instance_domain_allows order by instance_domain_allows.id desc`);
  return rows.map(dated);
}

/**
 * The blocks the public may know of (Mastodon's DomainBlock.with_user_facing_limitations.by_severity):
 * silences and suspensions, silences first, each by domain.
 */
export async function userFacingDomainBlocks(services: Services): Promise<Pick<DomainBlockRow, 'domain' | 'severity' | 'public_comment' | 'obfuscate'>[]> {
  return services.db.sql.query(
    `select domain, severity, public_comment, obfuscate from instance_domain_blocks
      where severity in ('silence', 'suspend')
      order by case severity when 'silence' then 0 else 1 end, domain`,
  );
}
