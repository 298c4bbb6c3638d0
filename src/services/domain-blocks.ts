/**
 * The instance's domain policy, written: domain blocks (severity silence / suspend / noop, reject
 * media, reject reports, comments, obfuscation) and domain allows (allowlist federation mode).
 * The admin API (src/api/admin/domain_blocks.ts, domain_allows.ts) and `roost domains …`
 * (src/control/commands.ts) call these same functions; `by` is the moderator's account for the
 * audit log (null: the operator at the CLI).
 *
 * One use case, one transaction: the row, what it does to the accounts already stored, and the
 * outbox facts (`domain_block.created` / `.updated` / `.removed`, `domain_allow.created` /
 * `.removed`) commit together; the cached policy (services.domainPolicy) is invalidated after
 * the commit, so inbound activities, deliveries and fetches obey it at once.
 *
 * What a block does to stored accounts of the domain and its subdomains (Mastodon's
 * BlockDomainService / UnblockDomainService), decided per account from the most specific block
 * that covers its domain after the change:
 *  - suspend: the account actor steps `account.suspend` (suspended_at: its content is hidden
 *    everywhere by the visibility rules) and every follow between it and a local account ends
 *    through the follow actor (follow.undo / follow.remove / follow.reject, with their events);
 *    the local accounts that lost accepted follows get a `domain_block` severance event
 *    (services/severance.ts) in the same transaction;
 *  - silence: `account.silence` (its follow requests stay pending, as the follow actor rules);
 *  - noop, or no block any more: a suspension or silence the policy imposed is lifted. The
 *    marker table instance_domain_block_effects says which ones it imposed: a moderator's own
 *    suspension of an account is never lifted by an unblock. Ended follows are not restored
 *    (Mastodon does not either).
 */
import type { EntityManager } from '@mikro-orm/core';
import type { Services } from '../context.ts';
import { AccountSchema, type Account } from '../db/entities/index.ts';
import { sqlFromEm, type Sql } from '../db/sql.ts';
import { RoostError, notFound } from '../lib/errors.ts';
import { DOMAIN_SEVERITIES, normalizeDomain, ruleCovers, ruleFor, splitDomain, stricterThan, type DomainSeverity } from '../lib/domains.ts';
import { recordEvent, type Origin } from './actor-store.ts';
import { logAdminAction } from './audit-log.ts';
import { stepAccount } from './account-actor.ts';
import { endFollowsOf } from './follows.ts';
import { recordSeverance, SeveranceTally } from './severance.ts';
import { dated, domainBlockById, type DomainBlockRow, type DomainAllowRow, domainAllowById } from './reads/domain-blocks.ts';

export interface DomainBlockInput {
  domain?: string;
  severity?: string;
  rejectMedia?: boolean;
  rejectReports?: boolean;
  privateComment?: string | null;
  publicComment?: string | null;
  obfuscate?: boolean;
}

/** 422 "Validation failed: …" as Mastodon's RecordInvalid renders it (no details on the admin API). */
function invalid(...problems: string[]): RoostError {
  return new RoostError(422, `Validation failed: ${problems.join(', ')}`);
}

/** The normalised domain of `raw`, or the 422 Mastodon answers ("can't be blank", "is invalid"). */
export function validDomain(raw: string | undefined, extra: string[] = []): string {
  const domain = normalizeDomain(raw ?? '');
  if (domain === '') throw invalid("Domain can't be blank", ...extra);
  if (domain === null) throw invalid('Domain is invalid', ...extra);
  if (extra.length) throw invalid(...extra);
  return domain;
}

function severityProblem(severity: string | undefined): string[] {
  return severity === undefined || (DOMAIN_SEVERITIES as readonly string[]).includes(severity) ? [] : ['Severity is not included in the list'];
}

/** Free text as stored: blank → null (Mastodon's comments are nullable). */
function comment(v: string | null | undefined): string | null | undefined {
  if (v === undefined) return undefined;
  return v === null || v.trim() === '' ? null : v;
}

const COLUMNS = `id::text as id, domain, severity, reject_media, reject_reports, private_comment, public_comment, obfuscate, created_at, updated_at`;

async function allBlocks(sql: Sql): Promise<Map<string, { id: string; domain: string; severity: DomainSeverity; rejectMedia: boolean; rejectReports: boolean }>> {
  const rows = await sql.query<{ id: string; domain: string; severity: DomainSeverity; reject_media: boolean; reject_reports: boolean }>(
    `select id::text as id, domain, severity, reject_media, reject_reports from instance_domain_blocks`,
  );
  return new Map(rows.map((r) => [r.domain, { id: r.id, domain: r.domain, severity: r.severity, rejectMedia: r.reject_media, rejectReports: r.reject_reports }]));
}

/** The answer to a block that a stricter or equal one already covers: 422 with the existing block. */
export class ExistingDomainBlockError extends RoostError {
  readonly existing: DomainBlockRow;
  constructor(existing: DomainBlockRow) {
    super(422, `You have already imposed stricter limits on ${existing.domain}.`);
    this.existing = existing;
  }
}

/**
 * Creates a block (Mastodon's Admin::DomainBlocksController#create): refused with
 * ExistingDomainBlockError when a block on the same domain exists, or a block on a parent domain
 * that this one is not stricter than.
 */
export async function createDomainBlock(
  services: Services,
  input: DomainBlockInput,
  origin: Origin,
  /** The moderator (the audit log's actor); null: the operator or a subscription. */
  by: string | null = null,
  /** Runs in the block's transaction (a blocklist subscription marks the block as its own). */
  within?: (sql: Sql, row: DomainBlockRow) => Promise<void>,
): Promise<DomainBlockRow> {
  const domain = validDomain(input.domain, severityProblem(input.severity));
  const severity = (input.severity ?? 'silence') as DomainSeverity;
  const rule = { domain, severity, rejectMedia: input.rejectMedia ?? false, rejectReports: input.rejectReports ?? false };
  const row = await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    // One writer of the policy at a time: the conflict check and the insert see the same table.
    await sql.query(`lock table instance_domain_blocks in share row exclusive mode`);
    const existing = ruleFor(await allBlocks(sql), domain);
    if (existing && (existing.domain === domain || !stricterThan(rule, existing))) {
      throw new ExistingDomainBlockError((await domainBlockById(sql, existing.id))!);
    }
    const now = services.clock.now();
    const id = services.ids.next();
    const [created] = await sql.query<DomainBlockRow>(
      `insert into instance_domain_blocks (id, domain, severity, reject_media, reject_reports, private_comment, public_comment, obfuscate, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) returning ${COLUMNS}`,
      [id, domain, severity, rule.rejectMedia, rule.rejectReports, comment(input.privateComment) ?? null, comment(input.publicComment) ?? null, input.obfuscate ?? false, now],
    );
    await applyPolicyToAccounts(services, tx, domain, origin);
    await recordEvent(services, sql, { actorKind: 'domain_block', actorId: id, origin, event: { type: 'domain_block.created', domain, severity } });
    await logAdminAction(services, sql, { actorAccountId: by, action: 'create', targetType: 'DomainBlock', targetId: id, humanIdentifier: domain, detail: { severity } });
    await within?.(sql, dated(created!));
    return dated(created!);
  });
  services.domainPolicy.invalidate();
  return row;
}

/** Changes a block's severity, flags or comments (its domain stays); the accounts follow suit. */
export async function updateDomainBlock(services: Services, id: string, input: Omit<DomainBlockInput, 'domain'>, origin: Origin, by: string | null = null): Promise<DomainBlockRow> {
  const problems = severityProblem(input.severity);
  const row = await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    await sql.query(`lock table instance_domain_blocks in share row exclusive mode`);
    const current = await domainBlockById(sql, id);
    if (!current) throw notFound();
    if (problems.length) throw invalid(...problems);
    const [updated] = await sql.query<DomainBlockRow>(
      `update instance_domain_blocks set
         severity = coalesce($2, severity), reject_media = coalesce($3, reject_media), reject_reports = coalesce($4, reject_reports),
         private_comment = case when $5::boolean then $6 else private_comment end,
         public_comment = case when $7::boolean then $8 else public_comment end,
         obfuscate = coalesce($9, obfuscate), updated_at = $10
       where id = $1 returning ${COLUMNS}`,
      [
        id,
        input.severity ?? null,
        input.rejectMedia ?? null,
        input.rejectReports ?? null,
        input.privateComment !== undefined,
        comment(input.privateComment) ?? null,
        input.publicComment !== undefined,
        comment(input.publicComment) ?? null,
        input.obfuscate ?? null,
        services.clock.now(),
      ],
    );
    await applyPolicyToAccounts(services, tx, current.domain, origin);
    await recordEvent(services, sql, {
      actorKind: 'domain_block',
      actorId: id,
      origin,
      event: { type: 'domain_block.updated', domain: current.domain, severity: updated!.severity },
    });
    await logAdminAction(services, sql, { actorAccountId: by, action: 'update', targetType: 'DomainBlock', targetId: id, humanIdentifier: current.domain, detail: { severity: updated!.severity } });
    return dated(updated!);
  });
  services.domainPolicy.invalidate();
  return row;
}

/** Lifts a block (Mastodon's UnblockDomainService): what it imposed on accounts is lifted too. */
export async function removeDomainBlock(
  services: Services,
  id: string,
  origin: Origin,
  /** The moderator (the audit log's actor); null: the operator or a subscription. */
  by: string | null = null,
  /** Runs in the removal's transaction (a blocklist subscription forgets the block it made). */
  within?: (sql: Sql, row: DomainBlockRow) => Promise<void>,
): Promise<DomainBlockRow> {
  const row = await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    await sql.query(`lock table instance_domain_blocks in share row exclusive mode`);
    const current = await domainBlockById(sql, id);
    if (!current) throw notFound();
    await sql.query(`delete from instance_domain_blocks where id = $1`, [id]);
    await applyPolicyToAccounts(services, tx, current.domain, origin);
    await recordEvent(services, sql, { actorKind: 'domain_block', actorId: id, origin, event: { type: 'domain_block.removed', domain: current.domain } });
    await logAdminAction(services, sql, { actorAccountId: by, action: 'destroy', targetType: 'DomainBlock', targetId: id, humanIdentifier: current.domain });
    await within?.(sql, current);
    return current;
  });
  services.domainPolicy.invalidate();
  return row;
}

/** The block on exactly `domain` (normalised first), for the CLI's `unblock DOMAIN`. */
export async function domainBlockIdFor(services: Services, rawDomain: string): Promise<string | null> {
  const domain = validDomain(rawDomain);
  const [row] = await services.db.sql.query<{ id: string }>(`select id::text as id from instance_domain_blocks where domain = $1`, [domain]);
  return row?.id ?? null;
}

/** Allows a domain (allowlist mode); an already allowed domain answers its existing allow. */
export async function createDomainAllow(services: Services, rawDomain: string | undefined, origin: Origin, by: string | null = null): Promise<DomainAllowRow> {
  const domain = validDomain(rawDomain);
  const row = await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const now = services.clock.now();
    const id = services.ids.next();
    const [inserted] = await sql.query<DomainAllowRow>(
      `insert into instance_domain_allows (id, domain, created_at, updated_at) values ($1, $2, $3, $3)
       on conflict (domain) do nothing returning id::text as id, domain, created_at`,
      [id, domain, now],
    );
    if (inserted) {
      await recordEvent(services, sql, { actorKind: 'domain_allow', actorId: id, origin, event: { type: 'domain_allow.created', domain } });
      await logAdminAction(services, sql, { actorAccountId: by, action: 'create', targetType: 'DomainAllow', targetId: id, humanIdentifier: domain });
      return dated(inserted);
    }
    const [existing] = await sql.query<DomainAllowRow>(`select id::text as id, domain, created_at from instance_domain_allows where domain = $1`, [domain]);
    return dated(existing!);
  });
  services.domainPolicy.invalidate();
  return row;
}

/** Removes an allow; answers the removed allow (as Mastodon renders it). */
export async function removeDomainAllow(services: Services, id: string, origin: Origin, by: string | null = null): Promise<DomainAllowRow> {
  const row = await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const current = await domainAllowById(sql, id);
    if (!current) throw notFound();
    await sql.query(`delete from instance_domain_allows where id = $1`, [id]);
    await recordEvent(services, sql, { actorKind: 'domain_allow', actorId: id, origin, event: { type: 'domain_allow.removed', domain: current.domain } });
    await logAdminAction(services, sql, { actorAccountId: by, action: 'destroy', targetType: 'DomainAllow', targetId: id, humanIdentifier: current.domain });
    return current;
  });
  services.domainPolicy.invalidate();
  return row;
}

/** The allow of exactly `domain` (normalised first), for the CLI's `disallow DOMAIN`. */
export async function domainAllowIdFor(services: Services, rawDomain: string): Promise<string | null> {
  const domain = validDomain(rawDomain);
  const [row] = await services.db.sql.query<{ id: string }>(`select id::text as id from instance_domain_allows where domain = $1`, [domain]);
  return row?.id ?? null;
}

// --- what the policy does to stored accounts ------------------------------------------------

/**
 * Brings every stored account of `ruleDomain` and its subdomains in line with the blocks as they
 * now are (in `tx`, after the change): suspend or silence where the most specific block says so,
 * lift what the policy imposed where it no longer does.
 */
const CANDIDATE_COLUMNS = `a.id::text as id, lower(a.domain) as domain, a.suspended_at is not null as suspended, a.silenced_at is not null as silenced,
  coalesce((select array_agg(e.effect) from instance_domain_block_effects e where e.account_id = a.id), '{}') as imposed`;

interface Candidate {
  id: string;
  domain: string;
  suspended: boolean;
  silenced: boolean;
  imposed: string[];
}

async function applyPolicyToAccounts(services: Services, tx: EntityManager, ruleDomain: string, origin: Origin): Promise<void> {
  const sql = sqlFromEm(tx);
  const { port } = splitDomain(ruleDomain);
  // Candidates by pattern (domain characters are [a-z0-9.-:], none special to LIKE); a port-less
  // rule covers every port of its host.
  const patterns = [ruleDomain, `%.${ruleDomain}`, ...(port === null ? [`${ruleDomain}:%`, `%.${ruleDomain}:%`] : [])];
  const candidates = await sql.query<Candidate>(
    `select ${CANDIDATE_COLUMNS} from accounts a where a.domain is not null and lower(a.domain) like any($1::text[])`,
    [patterns],
  );
  if (candidates.length === 0) return;
  const blocks = await allBlocks(sql);
  const tally = new SeveranceTally();
  // Only the accounts this rule's domain covers (the LIKE patterns are a superset).
  for (const c of candidates) if (ruleCovers(ruleDomain, c.domain)) await reconcileAccount(services, tx, c, blocks, origin, tally);
  // The local accounts that lost follows hear of it (Mastodon's domain_block severance event).
  await recordSeverance(services, sql, { type: 'domain_block', targetName: ruleDomain, tally, origin });
}

/**
 * A remote account seen for the first time on a server the policy silences or suspends gets
 * that flag at once, marked as the policy's (Mastodon's ProcessAccountService: auto_silence,
 * auto_suspend). Nothing to do (no statement) on servers the policy leaves alone.
 */
export async function applyDomainPolicyToNewAccount(services: Services, account: Pick<Account, 'id' | 'domain'>): Promise<boolean> {
  if (!account.domain) return false;
  const block = (await services.domainPolicy.snapshot()).blockFor(account.domain);
  if (!block || block.severity === 'noop') return false;
  await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const [c] = await sql.query<Candidate>(`select ${CANDIDATE_COLUMNS} from accounts a where a.id = $1 and a.domain is not null`, [account.id]);
    if (c) await reconcileAccount(services, tx, c, await allBlocks(sql), 'federation');
  });
  return true;
}

async function reconcileAccount(
  services: Services,
  tx: EntityManager,
  c: Candidate,
  blocks: Awaited<ReturnType<typeof allBlocks>>,
  origin: Origin,
  tally?: SeveranceTally,
): Promise<void> {
  const sql = sqlFromEm(tx);
  const now = services.clock.now();
  const rule = ruleFor(blocks, c.domain);
  const imposed = new Set(c.imposed);
  for (const effect of ['suspend', 'silence'] as const) {
    const wanted = rule?.severity === effect;
    const has = effect === 'suspend' ? c.suspended : c.silenced;
    if (wanted && !has) {
      await stepAccount(services, c.id, { type: effect === 'suspend' ? 'account.suspend' : 'account.silence' }, { origin, em: tx });
      await sql.query(`insert into instance_domain_block_effects (account_id, effect, created_at) values ($1, $2, $3) on conflict do nothing`, [c.id, effect, now]);
      if (effect === 'suspend') {
        const account = await tx.findOneOrFail(AccountSchema, { id: c.id });
        await endFollowsOf(services, account as Account, tx, origin, tally);
      }
    } else if (!wanted && imposed.has(effect)) {
      if (has) await stepAccount(services, c.id, { type: effect === 'suspend' ? 'account.unsuspend' : 'account.unsilence' }, { origin, em: tx });
      await sql.query(`delete from instance_domain_block_effects where account_id = $1 and effect = $2`, [c.id, effect]);
    }
  }
}
