/**
 * Reads of the sign-up blocks for the admin API: e-mail domain blocks (with their 7-day history
 * of refused sign-ups), canonical e-mail blocks and IP blocks. A page is one statement (two for
 * e-mail domain blocks: the rows, then the history of the whole page), newest first by id.
 */
import type { Services } from '../../context.ts';
import type { Sql } from '../../db/sql.ts';
import { isId, newestFirst, pageSql, type PageParams } from './page.ts';

export interface EmailDomainBlockRow {
  id: string;
  domain: string;
  created_at: Date;
  /** The last 7 days, newest first: [day (00:00 UTC), distinct addresses, attempts]. */
  history: { day: Date; accounts: number; uses: number }[];
}

export interface CanonicalEmailBlockRow {
  id: string;
  canonical_email_hash: string;
  created_at: Date;
}

export interface IpBlockRow {
  id: string;
  ip: string;
  severity: 'sign_up_requires_approval' | 'sign_up_block' | 'no_access';
  comment: string;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const DAY_MS = 86_400_000;

async function withHistory(sql: Sql, now: Date, rows: { id: string; domain: string; created_at: Date }[]): Promise<EmailDomainBlockRow[]> {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const first = new Date(today - 6 * DAY_MS);
  const counts = rows.length
    ? await sql.query<{ block_id: string; day: string; accounts: number; uses: number }>(
        `select block_id::text as block_id, to_char(day, 'YYYY-MM-DD') as day, count(*)::int as accounts, sum(uses)::int as uses
           from email_domain_block_attempts where block_id = any($1::bigint[]) and day >= $2::date group by block_id, day`,
        [rows.map((r) => r.id), first.toISOString().slice(0, 10)],
      )
    : [];
  const byKey = new Map(counts.map((c) => [`${c.block_id}/${c.day}`, c]));
  return rows.map((r) => ({
    id: r.id,
    domain: r.domain,
    created_at: new Date(r.created_at),
    history: Array.from({ length: 7 }, (_, i) => {
      const day = new Date(today - i * DAY_MS);
      const c = byKey.get(`${r.id}/${day.toISOString().slice(0, 10)}`);
      return { day, accounts: c?.accounts ?? 0, uses: c?.uses ?? 0 };
    }),
  }));
}

export async function emailDomainBlockById(sql: Sql, now: Date, id: string): Promise<EmailDomainBlockRow | null> {
  if (!isId(id)) return null;
  const rows = await sql.query<{ id: string; domain: string; created_at: Date }>(
    `select id::text as id, domain, created_at from email_domain_blocks where id = $1`,
    [id],
  );
  return rows.length ? (await withHistory(sql, now, rows))[0]! : null;
}

export function emailDomainBlock(services: Services, id: string): Promise<EmailDomainBlockRow | null> {
  return emailDomainBlockById(services.db.sql, services.clock.now(), id);
}

export async function emailDomainBlocksPage(services: Services, p: PageParams): Promise<EmailDomainBlockRow[]> {
  const page = pageSql('id', p, 1);
  const rows = await services.db.sql.query<{ id: string; domain: string; created_at: Date }>(
    `select id::text as id, domain, created_at from email_domain_blocks where true${page.where} order by ${page.order} limit ${p.limit}`,
    page.params,
  );
  return withHistory(services.db.sql, services.clock.now(), newestFirst(rows, p));
}

const CANONICAL_COLUMNS = `id::text as id, canonical_email_hash, created_at`;

export async function canonicalEmailBlockById(sql: Sql, id: string): Promise<CanonicalEmailBlockRow | null> {
  if (!isId(id)) return null;
  const [row] = await sql.query<CanonicalEmailBlockRow>(`select ${CANONICAL_COLUMNS} from canonical_email_blocks where id = $1`, [id]);
  return row ?? null;
}

export function canonicalEmailBlock(services: Services, id: string): Promise<CanonicalEmailBlockRow | null> {
  return canonicalEmailBlockById(services.db.sql, id);
}

export async function canonicalEmailBlocksPage(services: Services, p: PageParams): Promise<CanonicalEmailBlockRow[]> {
  const page = pageSql('id', p, 1);
  const rows = await services.db.sql.query<CanonicalEmailBlockRow>(
    `select ${CANONICAL_COLUMNS} from canonical_email_blocks where true${page.where} order by ${page.order} limit ${p.limit}`,
    page.params,
  );
  return newestFirst(rows, p);
}

/** The blocks whose hash is `hash` (POST /api/v1/admin/canonical_email_blocks/test). */
export function canonicalEmailBlocksMatching(services: Services, hash: string): Promise<CanonicalEmailBlockRow[]> {
  return services.db.sql.query<CanonicalEmailBlockRow>(
    `select ${CANONICAL_COLUMNS} from canonical_email_blocks where canonical_email_hash = $1 order by id`,
    [hash],
  );
}

const IP_COLUMNS = `id::text as id, ip::text as ip, severity, comment, expires_at, created_at, updated_at`;

export async function ipBlockById(sql: Sql, id: string): Promise<IpBlockRow | null> {
  if (!isId(id)) return null;
  const [row] = await sql.query<IpBlockRow>(`select ${IP_COLUMNS} from ip_blocks where id = $1`, [id]);
  return row ?? null;
}

export function ipBlock(services: Services, id: string): Promise<IpBlockRow | null> {
  return ipBlockById(services.db.sql, id);
}

export async function ipBlocksPage(services: Services, p: PageParams): Promise<IpBlockRow[]> {
  const page = pageSql('id', p, 1);
  const rows = await services.db.sql.query<IpBlockRow>(
    `select ${IP_COLUMNS} from ip_blocks where true${page.where} order by ${page.order} limit ${p.limit}`,
    page.params,
  );
  return newestFirst(rows, p);
}
