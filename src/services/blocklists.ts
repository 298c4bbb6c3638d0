/**
 * Blocklist subscriptions (a Roost extension; GoToSocial's "domain permission subscriptions"): the
 * instance subscribes to a list of domain blocks published at a URL, in Mastodon's CSV export
 * format (`#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate`, or a plain
 * list of domains) or as JSON (an array of `{domain, severity, reject_media, reject_reports,
 * public_comment, obfuscate}`, or of domain strings). The admin API (api/admin/blocklists.ts) and
 * `roost blocklists …` (control/blocklists.ts) call these functions.
 *
 * Each list is fetched through the bounded fetcher when subscribed, then every
 * `blocklists.refreshIntervalSeconds` (a `blocklist.refresh` timer on the instance's clock), or on
 * demand. A fetch is compared with the entries already known, in one transaction:
 *  - a new domain becomes an entry `pending`: a draft in the review queue, which an admin approves
 *    (a domain block is created, through services/domain-blocks.ts, marked as the entry's own) or
 *    rejects. With `auto_apply`, the subscription approves its pending entries itself;
 *  - a known domain whose severity or flags changed upstream is updated (and so is the block it
 *    made);
 *  - a domain gone from the list retracts the block its entry made, and only that one: an entry
 *    approved while a block already stood (the operator's own, or another list's) made nothing
 *    (`covered`) and retracts nothing.
 * Entry states: pending, applied (it made block `domain_block_id`), covered, rejected.
 *
 * A list that cannot be fetched or read, or that comes back empty, changes nothing (its error is
 * kept on the subscription): an empty answer is more likely an accident upstream than a wish to
 * lift every block.
 */
import type { Services } from '../context.ts';
import type { Sql } from '../db/sql.ts';
import { cancelTimers, scheduleTimer, type Origin } from '../events/timers.ts';
import { DOMAIN_SEVERITIES, normalizeDomain, type DomainSeverity } from '../lib/domains.ts';
import { notFound, RoostError, Validation } from '../lib/errors.ts';
import { safeFetch } from '../lib/safe-fetch.ts';
import { logAdminAction } from './audit-log.ts';
import { createDomainBlock, ExistingDomainBlockError, removeDomainBlock, updateDomainBlock } from './domain-blocks.ts';
import { allDomainBlocks } from './reads/domain-blocks.ts';
import type { PageParams } from './reads/page.ts';
import { newestFirst, pageSql } from './reads/page.ts';

export const BLOCKLIST_MAX_BYTES = 4 * 1024 * 1024;
export const BLOCKLIST_MAX_ENTRIES = 20_000;
const FETCH_TIMEOUT_MS = 30_000;

export type EntryState = 'pending' | 'applied' | 'covered' | 'rejected';
export const ENTRY_STATES: readonly EntryState[] = ['pending', 'applied', 'covered', 'rejected'];

export interface BlocklistSubscriptionRow {
  id: string;
  url: string;
  auto_apply: boolean;
  last_fetched_at: Date | null;
  last_success_at: Date | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  /** Entries by state. */
  counts: Record<EntryState, number>;
}

export interface BlocklistEntryRow {
  id: string;
  subscription_id: string;
  domain: string;
  severity: DomainSeverity;
  reject_media: boolean;
  reject_reports: boolean;
  public_comment: string | null;
  obfuscate: boolean;
  state: EntryState;
  domain_block_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** One line of a list: a domain and what to impose on it. */
export interface ListedBlock {
  domain: string;
  severity: DomainSeverity;
  rejectMedia: boolean;
  rejectReports: boolean;
  publicComment: string | null;
  obfuscate: boolean;
}

/** Who acts: the moderator's account, or null (the operator at the CLI, or the subscription's timer). */
export type Actor = string | null;

const SUB_COLUMNS = `s.id::text as id, s.url, s.auto_apply, s.last_fetched_at, s.last_success_at, s.last_error, s.created_at, s.updated_at,
  (select coalesce(json_object_agg(state, n), '{}'::json) from (select state, count(*)::int as n from blocklist_entries e where e.subscription_id = s.id group by state) c) as counts`;
const ENTRY_COLUMNS = `id::text as id, subscription_id::text as subscription_id, domain, severity, reject_media, reject_reports, public_comment, obfuscate, state,
  domain_block_id::text as domain_block_id, created_at, updated_at`;

function withCounts(row: Omit<BlocklistSubscriptionRow, 'counts'> & { counts: Partial<Record<EntryState, number>> | string }): BlocklistSubscriptionRow {
  const raw = typeof row.counts === 'string' ? (JSON.parse(row.counts) as Partial<Record<EntryState, number>>) : row.counts;
  return { ...row, counts: { pending: raw.pending ?? 0, applied: raw.applied ?? 0, covered: raw.covered ?? 0, rejected: raw.rejected ?? 0 } };
}

// --- parsing -------------------------------------------------------------------------------

/** RFC 4180 CSV: quoted fields (with "" for a quote, commas and line breaks inside), CRLF or LF. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => r.some((f) => f.trim() !== ''));
}

const truthy = (v: unknown) => v === true || (typeof v === 'string' && ['true', '1', 'yes', 't'].includes(v.trim().toLowerCase()));

/** A line as a block, or null (no valid domain, an unknown severity). Severity defaults to suspend, as Mastodon's import. */
function listed(domain: unknown, severity: unknown, rejectMedia: unknown, rejectReports: unknown, comment: unknown, obfuscate: unknown): ListedBlock | null {
  if (typeof domain !== 'string') return null;
  const d = normalizeDomain(domain);
  if (!d) return null;
  const s = typeof severity === 'string' && severity.trim() !== '' ? severity.trim().toLowerCase() : 'suspend';
  if (!(DOMAIN_SEVERITIES as readonly string[]).includes(s)) return null;
  const c = typeof comment === 'string' && comment.trim() !== '' ? comment.trim().slice(0, 1000) : null;
  return { domain: d, severity: s as DomainSeverity, rejectMedia: truthy(rejectMedia), rejectReports: truthy(rejectReports), publicComment: c, obfuscate: truthy(obfuscate) };
}

const CSV_COLUMNS = ['domain', 'severity', 'reject_media', 'reject_reports', 'public_comment', 'obfuscate'] as const;

/**
 * The blocks of a list, each domain once (the first line wins). JSON when it looks like JSON,
 * else CSV: with a header row (`#domain,…` as Mastodon exports, or without the `#`), its columns
 * by name; without one, Mastodon's column order (a plain list of domains is one column).
 */
export function parseBlocklist(body: string): ListedBlock[] {
  const text = body.replace(/^\uFEFF/, '');
  const out = new Map<string, ListedBlock>();
  const add = (b: ListedBlock | null) => {
    if (b && !out.has(b.domain)) out.set(b.domain, b);
  };
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new RoostError(422, 'The list is not valid JSON');
    }
    if (!Array.isArray(doc)) throw new RoostError(422, 'The JSON list is not an array');
    for (const item of doc) {
      if (typeof item === 'string') add(listed(item, undefined, false, false, null, false));
      else if (item && typeof item === 'object') {
        const o = item as Record<string, unknown>;
        add(listed(o.domain, o.severity, o.reject_media, o.reject_reports, o.public_comment ?? o.comment, o.obfuscate));
      }
    }
    return [...out.values()];
  }
  const rows = parseCsv(text);
  let columns: readonly string[] = CSV_COLUMNS;
  const first = rows[0]?.map((f) => f.trim().replace(/^#/, '').toLowerCase());
  if (first && first.includes('domain') && (rows[0]![0]!.trim().startsWith('#') || first[0] === 'domain')) {
    columns = first;
    rows.shift();
  }
  const at = (row: string[], name: string) => {
    const i = columns.indexOf(name);
    return i >= 0 ? row[i] : undefined;
  };
  for (const row of rows) {
    if (row[0]?.trim().startsWith('#')) continue; // a comment line
    add(listed(at(row, 'domain'), at(row, 'severity'), at(row, 'reject_media'), at(row, 'reject_reports'), at(row, 'public_comment'), at(row, 'obfuscate')));
  }
  return [...out.values()];
}

// --- subscriptions -------------------------------------------------------------------------

const timerKey = (id: string) => `blocklist:${id}`;

function validUrl(raw: string | undefined, v: Validation): string {
  const u = (raw ?? '').trim();
  if (u === '') v.add('url', 'ERR_BLANK', "can't be blank");
  else {
    try {
      const parsed = new URL(u);
      if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.username || parsed.password) v.add('url', 'ERR_INVALID', 'is invalid');
    } catch {
      v.add('url', 'ERR_INVALID', 'is invalid');
    }
  }
  return u;
}

export async function blocklistSubscription(sql: Sql, id: string): Promise<BlocklistSubscriptionRow | null> {
  const [row] = await sql.query<Parameters<typeof withCounts>[0]>(`select ${SUB_COLUMNS} from blocklist_subscriptions s where s.id = $1`, [id]);
  return row ? withCounts(row) : null;
}

/** The subscription `id` with its entry counts, or null. */
export async function findBlocklistSubscription(services: Services, id: string): Promise<BlocklistSubscriptionRow | null> {
  return blocklistSubscription(services.db.sql, id);
}

/** The entry `id`, or null. */
export async function findBlocklistEntry(services: Services, id: string): Promise<BlocklistEntryRow | null> {
  return blocklistEntry(services.db.sql, id);
}

export async function allBlocklistSubscriptions(services: Services): Promise<BlocklistSubscriptionRow[]> {
  const rows = await services.db.sql.query<Parameters<typeof withCounts>[0]>(`select ${SUB_COLUMNS} from blocklist_subscriptions s order by s.id`);
  return rows.map(withCounts);
}

/** Subscribes to the list at `url`; its first fetch is queued at once. */
export async function createBlocklistSubscription(services: Services, input: { url?: string; autoApply?: boolean }, actor: Actor): Promise<BlocklistSubscriptionRow> {
  const v = new Validation();
  const url = validUrl(input.url, v);
  v.throwIfInvalid();
  return services.db.sql.transaction(async (tx) => {
    const now = services.clock.now();
    const id = services.ids.next();
    const inserted = await tx.query<{ id: string }>(
      `insert into blocklist_subscriptions (id, url, auto_apply, created_at, updated_at) values ($1, $2, $3, $4, $4)
       on conflict (url) do nothing returning id::text as id`,
      [id, url, input.autoApply ?? false, now],
    );
    if (inserted.length === 0) new Validation().add('url', 'ERR_TAKEN', 'has already been taken').throwIfInvalid();
    await scheduleTimer(tx, { type: 'blocklist.refresh', subscriptionId: id }, { runAt: now, dedupeKey: timerKey(id), clock: services.clock });
    await logAdminAction(services, tx, { actorAccountId: actor, action: 'create', targetType: 'BlocklistSubscription', targetId: id, humanIdentifier: url, detail: { autoApply: input.autoApply ?? false } });
    return (await blocklistSubscription(tx, id))!;
  });
}

/** Changes `auto_apply` (and the URL); pending entries are applied at the next fetch. */
export async function updateBlocklistSubscription(services: Services, id: string, input: { url?: string; autoApply?: boolean }, actor: Actor): Promise<BlocklistSubscriptionRow> {
  return services.db.sql.transaction(async (tx) => {
    const current = await blocklistSubscription(tx, id);
    if (!current) throw notFound();
    const v = new Validation();
    const url = input.url === undefined ? current.url : validUrl(input.url, v);
    v.throwIfInvalid();
    const taken = await tx.query(`select 1 from blocklist_subscriptions where url = $1 and id <> $2`, [url, id]);
    if (taken.length) new Validation().add('url', 'ERR_TAKEN', 'has already been taken').throwIfInvalid();
    await tx.query(`update blocklist_subscriptions set url = $2, auto_apply = $3, updated_at = $4 where id = $1`, [id, url, input.autoApply ?? current.auto_apply, services.clock.now()]);
    await logAdminAction(services, tx, { actorAccountId: actor, action: 'update', targetType: 'BlocklistSubscription', targetId: id, humanIdentifier: url, detail: { autoApply: input.autoApply ?? current.auto_apply } });
    return (await blocklistSubscription(tx, id))!;
  });
}

/**
 * Unsubscribes. With `retract`, the blocks its entries made are lifted first (each with its entry);
 * without, they stay as the operator's own.
 */
export async function deleteBlocklistSubscription(services: Services, id: string, opts: { retract?: boolean }, actor: Actor): Promise<BlocklistSubscriptionRow> {
  const current = await blocklistSubscription(services.db.sql, id);
  if (!current) throw notFound();
  let retracted = 0;
  if (opts.retract) {
    const applied = await services.db.sql.query<BlocklistEntryRow>(`select ${ENTRY_COLUMNS} from blocklist_entries where subscription_id = $1 and state = 'applied'`, [id]);
    for (const entry of applied) if (await retractEntry(services, entry, 'operator', actor)) retracted++;
  }
  await services.db.sql.transaction(async (tx) => {
    const gone = await tx.query(`delete from blocklist_subscriptions where id = $1 returning id`, [id]);
    if (gone.length === 0) throw notFound();
    await cancelTimers(tx, [timerKey(id)]);
    await logAdminAction(services, tx, { actorAccountId: actor, action: 'destroy', targetType: 'BlocklistSubscription', targetId: id, humanIdentifier: current.url, detail: { retracted } });
  });
  return current;
}

// --- entries -------------------------------------------------------------------------------

export async function blocklistEntry(sql: Sql, id: string): Promise<BlocklistEntryRow | null> {
  const [row] = await sql.query<BlocklistEntryRow>(`select ${ENTRY_COLUMNS} from blocklist_entries where id = $1`, [id]);
  return row ?? null;
}

/** A page of entries, newest first, of one state and/or one subscription. */
export async function blocklistEntriesPage(services: Services, p: PageParams, filter: { state?: EntryState; subscriptionId?: string }): Promise<BlocklistEntryRow[]> {
  const page = pageSql('id', p, 3);
  const rows = await services.db.sql.query<BlocklistEntryRow>(
    `select ${ENTRY_COLUMNS} from blocklist_entries
      where ($1::text is null or state = $1) and ($2::bigint is null or subscription_id = $2) ${page.where}
      order by ${page.order} limit ${p.limit}`,
    [filter.state ?? null, filter.subscriptionId ?? null, ...page.params],
  );
  return newestFirst(rows, p);
}

const originOf = (actor: Actor, fallback: Origin): Origin => (actor ? 'client' : fallback);

/**
 * Approves a pending entry: its block is created (marked as the entry's own, in the block's
 * transaction), or, when a block already covers the domain, the entry is `covered` and makes none.
 */
async function applyEntry(services: Services, entry: BlocklistEntryRow, origin: Origin, actor: Actor, action: 'approve' | 'apply'): Promise<BlocklistEntryRow> {
  try {
    await createDomainBlock(
      services,
      {
        domain: entry.domain,
        severity: entry.severity,
        rejectMedia: entry.reject_media,
        rejectReports: entry.reject_reports,
        publicComment: entry.public_comment,
        privateComment: `From the blocklist subscription ${entry.subscription_id}`,
        obfuscate: entry.obfuscate,
      },
      origin,
      actor,
      async (sql, block) => {
        const marked = await sql.query(
          `update blocklist_entries set state = 'applied', domain_block_id = $2, updated_at = $3 where id = $1 and state = 'pending' returning id`,
          [entry.id, block.id, services.clock.now()],
        );
        // Approved meanwhile by someone else: this block must not stand (roll it back).
        if (marked.length === 0) throw new RoostError(422, 'This entry is not pending');
        await logAdminAction(services, sql, { actorAccountId: actor, action, targetType: 'BlocklistEntry', targetId: entry.id, humanIdentifier: entry.domain, detail: { domainBlockId: block.id, severity: entry.severity } });
      },
    );
  } catch (e) {
    if (!(e instanceof ExistingDomainBlockError)) throw e;
    await services.db.sql.transaction(async (tx) => {
      const marked = await tx.query(`update blocklist_entries set state = 'covered', updated_at = $2 where id = $1 and state = 'pending' returning id`, [entry.id, services.clock.now()]);
      if (marked.length) {
        await logAdminAction(services, tx, { actorAccountId: actor, action, targetType: 'BlocklistEntry', targetId: entry.id, humanIdentifier: entry.domain, detail: { coveredBy: e.existing.id } });
      }
    });
  }
  return (await blocklistEntry(services.db.sql, entry.id))!;
}

/** Lifts the block an applied entry made and forgets the entry, in one transaction. Whether a block was lifted. */
async function retractEntry(services: Services, entry: BlocklistEntryRow, origin: Origin, actor: Actor): Promise<boolean> {
  const forget = async (sql: Sql) => {
    await sql.query(`delete from blocklist_entries where id = $1`, [entry.id]);
    await logAdminAction(services, sql, { actorAccountId: actor, action: 'retract', targetType: 'BlocklistEntry', targetId: entry.id, humanIdentifier: entry.domain, detail: { domainBlockId: entry.domain_block_id } });
  };
  if (entry.domain_block_id) {
    try {
      await removeDomainBlock(services, entry.domain_block_id, origin, actor, forget);
      return true;
    } catch (e) {
      if (!(e instanceof RoostError && e.status === 404)) throw e;
    }
  }
  // Its block was lifted by hand meanwhile: only the entry goes.
  await services.db.sql.transaction(forget);
  return false;
}

function requirePending(entry: BlocklistEntryRow | null): BlocklistEntryRow {
  if (!entry) throw notFound();
  if (entry.state !== 'pending') throw new RoostError(422, 'This entry is not pending');
  return entry;
}

export async function approveBlocklistEntry(services: Services, id: string, actor: Actor): Promise<BlocklistEntryRow> {
  const entry = requirePending(await blocklistEntry(services.db.sql, id));
  return applyEntry(services, entry, originOf(actor, 'operator'), actor, 'approve');
}

export async function rejectBlocklistEntry(services: Services, id: string, actor: Actor): Promise<BlocklistEntryRow> {
  return services.db.sql.transaction(async (tx) => {
    const [row] = await tx.query<BlocklistEntryRow>(`select ${ENTRY_COLUMNS} from blocklist_entries where id = $1 for update`, [id]);
    const entry = requirePending(row ?? null);
    await tx.query(`update blocklist_entries set state = 'rejected', updated_at = $2 where id = $1`, [id, services.clock.now()]);
    await logAdminAction(services, tx, { actorAccountId: actor, action: 'reject', targetType: 'BlocklistEntry', targetId: id, humanIdentifier: entry.domain });
    return (await blocklistEntry(tx, id))!;
  });
}

// --- fetching ------------------------------------------------------------------------------

export interface RefreshSummary {
  /** Entries new in this fetch, changed upstream, gone upstream. */
  added: number;
  changed: number;
  removed: number;
  /** Blocks created (auto-apply) and lifted (entries gone upstream). */
  applied: number;
  retracted: number;
  error: string | null;
}

async function fetchList(services: Services, url: string): Promise<ListedBlock[]> {
  const res = await safeFetch(new URL(url), {
    allowPrivateAddresses: services.config.federation.allowPrivateAddresses,
    userAgent: `Roost/${services.version} (+${services.config.publicUrl})`,
    headers: { accept: 'text/csv, application/json;q=0.9, text/plain;q=0.8, */*;q=0.1' },
    timeoutMs: FETCH_TIMEOUT_MS,
    maxBytes: BLOCKLIST_MAX_BYTES,
    lookup: services.dnsLookup,
    network: services.network,
  });
  if (res.status !== 200) throw new RoostError(502, `HTTP ${res.status}`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(res.body);
  } catch {
    throw new RoostError(422, 'The list is not UTF-8 text');
  }
  const list = parseBlocklist(text);
  if (list.length === 0) throw new RoostError(422, 'The list has no entries: nothing changed');
  if (list.length > BLOCKLIST_MAX_ENTRIES) throw new RoostError(422, `The list has more than ${BLOCKLIST_MAX_ENTRIES} entries`);
  return list;
}

const same = (e: BlocklistEntryRow, b: ListedBlock) =>
  e.severity === b.severity && e.reject_media === b.rejectMedia && e.reject_reports === b.rejectReports && (e.public_comment ?? null) === b.publicComment && e.obfuscate === b.obfuscate;

/**
 * Fetches the list now and brings the entries to it (see the top of this file). Null when the
 * subscription does not exist; a fetch that failed leaves everything as it was and says why.
 */
export async function refreshBlocklist(services: Services, id: string, origin: Origin, actor: Actor = null): Promise<RefreshSummary | null> {
  const sub = await blocklistSubscription(services.db.sql, id);
  if (!sub) return null;
  const summary: RefreshSummary = { added: 0, changed: 0, removed: 0, applied: 0, retracted: 0, error: null };
  let list: ListedBlock[];
  try {
    list = await fetchList(services, sub.url);
  } catch (e) {
    summary.error = (e as Error).message || String(e);
    await services.db.sql.query(`update blocklist_subscriptions set last_fetched_at = $2, last_error = $3 where id = $1`, [id, services.clock.now(), summary.error]);
    services.log.child({ module: 'blocklists' }).info({ subscriptionId: id, url: sub.url, err: summary.error }, 'blocklist fetch failed; nothing changed');
    return summary;
  }
  const listedByDomain = new Map(list.map((b) => [b.domain, b]));
  const { toRetract, toUpdate } = await services.db.sql.transaction(async (tx) => {
    const locked = await tx.query(`select 1 from blocklist_subscriptions where id = $1 for update`, [id]);
    if (locked.length === 0) return { toRetract: [], toUpdate: [] };
    const now = services.clock.now();
    const known = await tx.query<BlocklistEntryRow>(`select ${ENTRY_COLUMNS} from blocklist_entries where subscription_id = $1`, [id]);
    const knownByDomain = new Map(known.map((e) => [e.domain, e]));
    const fresh = list.filter((b) => !knownByDomain.has(b.domain));
    if (fresh.length) {
      await tx.query(
        `insert into blocklist_entries (id, subscription_id, domain, severity, reject_media, reject_reports, public_comment, obfuscate, state, created_at, updated_at)
         select i, $1, d, s, rm, rr, c, o, 'pending', $2, $2
           from unnest($3::bigint[], $4::text[], $5::text[], $6::boolean[], $7::boolean[], $8::text[], $9::boolean[]) as t(i, d, s, rm, rr, c, o)
         on conflict (subscription_id, domain) do nothing`,
        [
          id,
          now,
          fresh.map(() => services.ids.next()),
          fresh.map((b) => b.domain),
          fresh.map((b) => b.severity),
          fresh.map((b) => b.rejectMedia),
          fresh.map((b) => b.rejectReports),
          fresh.map((b) => b.publicComment),
          fresh.map((b) => b.obfuscate),
        ],
      );
    }
    const changed = known.filter((e) => listedByDomain.has(e.domain) && !same(e, listedByDomain.get(e.domain)!));
    for (const e of changed) {
      const b = listedByDomain.get(e.domain)!;
      await tx.query(
        `update blocklist_entries set severity = $2, reject_media = $3, reject_reports = $4, public_comment = $5, obfuscate = $6, updated_at = $7 where id = $1`,
        [e.id, b.severity, b.rejectMedia, b.rejectReports, b.publicComment, b.obfuscate, now],
      );
    }
    const gone = known.filter((e) => !listedByDomain.has(e.domain));
    // Entries that made nothing just go; those that made a block go with their block, below.
    const quiet = gone.filter((e) => e.state !== 'applied').map((e) => e.id);
    if (quiet.length) await tx.query(`delete from blocklist_entries where id = any($1::bigint[])`, [quiet]);
    await tx.query(`update blocklist_subscriptions set last_fetched_at = $2, last_success_at = $2, last_error = null where id = $1`, [id, now]);
    summary.added = fresh.length;
    summary.changed = changed.length;
    summary.removed = gone.length;
    return { toRetract: gone.filter((e) => e.state === 'applied'), toUpdate: changed.filter((e) => e.state === 'applied' && e.domain_block_id) };
  });
  for (const entry of toRetract) if (await retractEntry(services, entry, origin, actor)) summary.retracted++;
  for (const entry of toUpdate) {
    const b = listedByDomain.get(entry.domain)!;
    await updateDomainBlock(services, entry.domain_block_id!, { severity: b.severity, rejectMedia: b.rejectMedia, rejectReports: b.rejectReports, publicComment: b.publicComment, obfuscate: b.obfuscate }, origin).catch(
      (e: unknown) => {
        if (!(e instanceof RoostError && e.status === 404)) throw e;
      },
    );
  }
  if ((await blocklistSubscription(services.db.sql, id))?.auto_apply) {
    const pending = await services.db.sql.query<BlocklistEntryRow>(`select ${ENTRY_COLUMNS} from blocklist_entries where subscription_id = $1 and state = 'pending' order by id`, [id]);
    for (const entry of pending) if ((await applyEntry(services, entry, origin, actor, 'apply')).state === 'applied') summary.applied++;
  }
  return summary;
}

/** The `blocklist.refresh` timer: fetch, then the next fetch in `blocklists.refreshIntervalSeconds`. */
export async function refreshBlocklistOnTimer(services: Services, id: string): Promise<void> {
  const summary = await refreshBlocklist(services, id, 'timer');
  if (!summary) return; // unsubscribed meanwhile
  const runAt = new Date(services.clock.now().getTime() + services.config.blocklists.refreshIntervalSeconds * 1000);
  await scheduleTimer(services.db.sql, { type: 'blocklist.refresh', subscriptionId: id }, { runAt, dedupeKey: timerKey(id), clock: services.clock });
}

// --- export --------------------------------------------------------------------------------

function csvField(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

/** This server's domain blocks in Mastodon's CSV export format (Admin::ExportDomainBlocksController). */
export async function exportDomainBlocksCsv(services: Services): Promise<string> {
  const blocks = (await allDomainBlocks(services)).reverse();
  const lines = ['#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate'];
  for (const b of blocks) {
    lines.push([b.domain, b.severity, String(b.reject_media), String(b.reject_reports), b.public_comment ?? '', String(b.obfuscate)].map(csvField).join(','));
  }
  return `${lines.join('\n')}\n`;
}
