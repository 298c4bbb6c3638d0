/**
 * E-mail blocks for sign-ups (Mastodon's EmailDomainBlock and CanonicalEmailBlock), written by the
 * admin API (api/admin/email_domain_blocks.ts, canonical_email_blocks.ts), one transaction each
 * with its audit row, and checked at sign-up (services/registrations.ts) and when an unconfirmed
 * user changes the address (services/mail-flows.ts):
 *
 *  - an e-mail domain block refuses an address at the domain or any of its subdomains, and an
 *    address whose domain's MX hosts are at a blocked domain (resolved with a short timeout, only
 *    when there is any block; an answer that does not come in time blocks nothing). A refusal
 *    counts in the block's `history` (attempts per day and distinct addresses);
 *  - a canonical e-mail block refuses every address whose normalised form hashes the same:
 *    lower case, the local part without dots and without a `+tag`, as Mastodon's
 *    CanonicalEmailBlock normalises (for every domain, so hashes carry over from Mastodon).
 */
import { createHash } from 'node:crypto';
import { promises as dns } from 'node:dns';
import type { Services } from '../context.ts';
import { sqlFromEm } from '../db/sql.ts';
import { RoostError, notFound } from '../lib/errors.ts';
import { normalizeDomain } from '../lib/domains.ts';
import { logAdminAction } from './audit-log.ts';
import { canonicalEmailBlockById, emailDomainBlockById, type CanonicalEmailBlockRow, type EmailDomainBlockRow } from './reads/sign-up-blocks.ts';

function invalid(...problems: string[]): RoostError {
  return new RoostError(422, `Validation failed: ${problems.join(', ')}`);
}

// --- canonical addresses ------------------------------------------------------------------------

/** Mastodon's canonical form: `A.B+x@Gmail.com` → `ab@gmail.com`. */
export function canonicalEmail(email: string): string {
  const lower = email.trim().toLowerCase();
  const at = lower.indexOf('@');
  const local = at < 0 ? lower : lower.slice(0, at);
  const domain = at < 0 ? '' : lower.slice(at + 1);
  return `${local.replaceAll('.', '').split('+', 1)[0]}@${domain}`;
}

export function canonicalEmailHash(email: string): string {
  return createHash('sha256').update(canonicalEmail(email)).digest('hex');
}

// --- e-mail domain blocks -----------------------------------------------------------------------

export async function createEmailDomainBlock(services: Services, actorAccountId: string | null, rawDomain: string | undefined): Promise<EmailDomainBlockRow> {
  const domain = normalizeDomain(rawDomain ?? '');
  if (domain === '') throw invalid("Domain can't be blank");
  if (domain === null || domain.includes(':')) throw invalid('Domain is invalid', 'Domain is not a valid domain name');
  return services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const id = services.ids.next();
    const now = services.clock.now();
    const inserted = await sql.query(
      `insert into email_domain_blocks (id, domain, created_at, updated_at) values ($1, $2, $3, $3) on conflict (domain) do nothing returning id`,
      [id, domain, now],
    );
    if (inserted.length === 0) throw invalid('Domain has already been taken');
    await logAdminAction(services, sql, { actorAccountId, action: 'create', targetType: 'EmailDomainBlock', targetId: id, humanIdentifier: domain });
    return (await emailDomainBlockById(sql, now, id))!;
  });
}

export async function removeEmailDomainBlock(services: Services, actorAccountId: string | null, id: string): Promise<void> {
  await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const [row] = /^\d{1,18}$/.test(id) ? await sql.query<{ domain: string }>(`delete from email_domain_blocks where id = $1 returning domain`, [id]) : [];
    if (!row) throw notFound();
    await logAdminAction(services, sql, { actorAccountId, action: 'destroy', targetType: 'EmailDomainBlock', targetId: id, humanIdentifier: row.domain });
  });
}

// --- canonical e-mail blocks --------------------------------------------------------------------

export async function createCanonicalEmailBlock(
  services: Services,
  actorAccountId: string | null,
  input: { email?: string | undefined; canonicalEmailHash?: string | undefined },
): Promise<CanonicalEmailBlockRow> {
  let hash: string;
  if (input.email !== undefined && input.email.trim() !== '') hash = canonicalEmailHash(input.email);
  else {
    hash = (input.canonicalEmailHash ?? '').trim().toLowerCase();
    if (hash === '') throw invalid("Canonical email hash can't be blank");
    if (!/^[0-9a-f]{64}$/.test(hash)) throw invalid('Canonical email hash is invalid');
  }
  return services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const id = services.ids.next();
    const now = services.clock.now();
    const inserted = await sql.query(
      `insert into canonical_email_blocks (id, canonical_email_hash, created_at, updated_at) values ($1, $2, $3, $3)
       on conflict (canonical_email_hash) do nothing returning id`,
      [id, hash, now],
    );
    if (inserted.length === 0) throw invalid('Canonical email hash has already been taken');
    await logAdminAction(services, sql, { actorAccountId, action: 'create', targetType: 'CanonicalEmailBlock', targetId: id, humanIdentifier: hash });
    return (await canonicalEmailBlockById(sql, id))!;
  });
}

export async function removeCanonicalEmailBlock(services: Services, actorAccountId: string | null, id: string): Promise<void> {
  await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const [row] = /^\d{1,18}$/.test(id)
      ? await sql.query<{ canonical_email_hash: string }>(`delete from canonical_email_blocks where id = $1 returning canonical_email_hash`, [id])
      : [];
    if (!row) throw notFound();
    await logAdminAction(services, sql, { actorAccountId, action: 'destroy', targetType: 'CanonicalEmailBlock', targetId: id, humanIdentifier: row.canonical_email_hash });
  });
}

// --- the sign-up check --------------------------------------------------------------------------

/** Resolves a domain's MX hosts (the exchange names). */
export type MxResolver = (domain: string) => Promise<string[]>;

export const MX_TIMEOUT_MS = 2_000;
const resolvers = new WeakMap<Services, MxResolver>();

/** Replaces the MX lookup of one instance (tests simulate DNS; no network needed). */
export function setMxResolver(services: Services, resolver: MxResolver): void {
  resolvers.set(services, resolver);
}

const systemResolver: MxResolver = async (domain) => {
  const resolver = new dns.Resolver({ timeout: MX_TIMEOUT_MS, tries: 1 });
  return (await resolver.resolveMx(domain)).map((mx) => mx.exchange);
};

/** Names that never resolve (RFC 2606, RFC 6761): no lookup. */
const UNRESOLVABLE = /(^|\.)(test|example|invalid|localhost|local)$/;

async function mxHosts(services: Services, domain: string): Promise<string[]> {
  if (UNRESOLVABLE.test(domain)) return [];
  const resolve = resolvers.get(services) ?? systemResolver;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((r) => (timer = setTimeout(() => r([]), MX_TIMEOUT_MS)));
  try {
    return await Promise.race([resolve(domain).catch(() => []), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** `a.b.example.com` → [a.b.example.com, b.example.com, example.com, com]. */
function withParents(host: string): string[] {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.').filter(Boolean);
  return labels.map((_, i) => labels.slice(i).join('.'));
}

export type EmailRefusal = 'blocked' | 'taken' | null;

/**
 * Why `email` may not sign up (Mastodon's BlacklistedEmailValidator and EmailMxValidator):
 * 'blocked' (ERR_BLOCKED: its domain, a parent or an MX host's domain is blocked), 'taken'
 * (ERR_TAKEN: a canonical block), or null. A refusal by a domain block is counted in its history
 * under `ip`.
 */
export async function emailRefusal(services: Services, email: string, ip: string | null): Promise<EmailRefusal> {
  const at = email.lastIndexOf('@');
  const domain = at < 0 ? null : normalizeDomain(email.slice(at + 1));
  const sql = services.db.sql;
  const [hit] = await sql.query<{ canonical: boolean; block_id: string | null; any_block: boolean }>(
    `select exists (select 1 from canonical_email_blocks where canonical_email_hash = $1) as canonical,
            (select id::text from email_domain_blocks where domain = any($2::text[]) order by length(domain) desc limit 1) as block_id,
            exists (select 1 from email_domain_blocks) as any_block`,
    [canonicalEmailHash(email), domain ? withParents(domain) : []],
  );
  let blockId = hit!.block_id;
  if (!blockId && hit!.any_block && domain) {
    const hosts = (await mxHosts(services, domain)).flatMap(withParents);
    if (hosts.length) {
      const [mx] = await sql.query<{ id: string }>(`select id::text as id from email_domain_blocks where domain = any($1::text[]) limit 1`, [hosts]);
      blockId = mx?.id ?? null;
    }
  }
  if (blockId) {
    const day = services.clock.now().toISOString().slice(0, 10);
    await sql.query(
      `insert into email_domain_block_attempts (block_id, day, ip, uses) values ($1, $2, $3, 1)
       on conflict (block_id, day, ip) do update set uses = email_domain_block_attempts.uses + 1`,
      [blockId, day, ip ?? ''],
    ).catch(() => undefined); // (the block went meanwhile: nothing to count)
    return 'blocked';
  }
  return hit!.canonical ? 'taken' : null;
}
