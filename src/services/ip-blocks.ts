/**
 * IP blocks (Mastodon's IpBlock): a CIDR range with a severity — `sign_up_requires_approval` (a
 * sign-up from it waits for a moderator), `sign_up_block` (no sign-up from it), `no_access` (no
 * request at all: api/ip-blocks.ts refuses it before the route, and a sign-in is refused) — a
 * comment and an optional expiry (an expired block is ignored). The admin API
 * (api/admin/ip_blocks.ts) and the CLI call these functions; each change is one transaction with
 * its audit row.
 *
 * Enforcement reads an in-memory index of the blocks (lib/ip-ranges.ts RangeIndex: a lookup per
 * prefix length present), so a sign-in costs the same with 10,000 blocks as with none. A server
 * process loads it at start and keeps it until a change: every change sends NOTIFY
 * IP_BLOCKS_CHANNEL in its transaction, and the process's LISTEN connection (main.ts,
 * watchIpBlocks) drops the index, so no request ever waits for the table. A process without a
 * listener (the CLI) reads it again when it is older than INDEX_TTL_MS.
 */
import type { Services } from '../context.ts';
import { sqlFromEm, type Sql } from '../db/sql.ts';
import { RoostError, notFound } from '../lib/errors.ts';
import { parseIpRange, RangeIndex } from '../lib/ip-ranges.ts';
import { logAdminAction } from './audit-log.ts';
import { ipBlockById, type IpBlockRow } from './reads/sign-up-blocks.ts';

export const IP_SEVERITIES = ['sign_up_requires_approval', 'sign_up_block', 'no_access'] as const;
export type IpSeverity = (typeof IP_SEVERITIES)[number];

export const INDEX_TTL_MS = 5_000;
/** The NOTIFY channel of a change to ip_blocks (sent on commit). */
export const IP_BLOCKS_CHANNEL = 'roost_ip_blocks';

const notifyChange = (sql: Sql) => sql.query(`select pg_notify($1, '')`, [IP_BLOCKS_CHANNEL]);

export interface IpBlockInput {
  ip?: string | undefined;
  severity?: string | undefined;
  comment?: string | null | undefined;
  /** Seconds from now; null: never expires. */
  expiresIn?: number | null | undefined;
}

const COLUMNS = `id::text as id, ip::text as ip, severity, comment, expires_at, created_at, updated_at`;

function invalid(problems: string[]): RoostError {
  return new RoostError(422, `Validation failed: ${problems.join(', ')}`);
}

/** Checks what is given (create: severity required, a missing ip is Mastodon's 0.0.0.0/32). */
function checked(input: IpBlockInput, creating: boolean): { ip?: string; severity?: IpSeverity; problems: string[] } {
  const problems: string[] = [];
  let ip: string | undefined;
  if (input.ip !== undefined) {
    const range = parseIpRange(input.ip);
    if (input.ip.trim() === '') problems.push("Ip can't be blank");
    else if (!range) problems.push('Ip is invalid');
    else ip = range.cidr;
  } else if (creating) ip = '0.0.0.0/32';
  let severity: IpSeverity | undefined;
  if (input.severity === undefined || input.severity === '') {
    if (creating) problems.push("Severity can't be blank");
  } else if ((IP_SEVERITIES as readonly string[]).includes(input.severity)) severity = input.severity as IpSeverity;
  else problems.push('Severity is not included in the list');
  if (input.expiresIn !== undefined && input.expiresIn !== null && !(Number.isInteger(input.expiresIn) && input.expiresIn > 0)) {
    problems.push('Expires in must be a positive number of seconds');
  }
  return { ip, severity, problems };
}

/** `expiresIn` seconds after `now`: the same instant the row's timestamps are written with. */
function expiresAt(now: Date, expiresIn: number | null | undefined): Date | null | undefined {
  if (expiresIn === undefined) return undefined;
  if (expiresIn === null) return null;
  return new Date(now.getTime() + expiresIn * 1000);
}

async function ipTaken(sql: Sql, ip: string, exceptId: string | null): Promise<boolean> {
  const rows = await sql.query(`select 1 from ip_blocks where ip = $1::cidr and ($2::bigint is null or id <> $2)`, [ip, exceptId]);
  return rows.length > 0;
}

export async function createIpBlock(services: Services, actorAccountId: string | null, input: IpBlockInput): Promise<IpBlockRow> {
  const c = checked(input, true);
  const row = await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    await sql.query(`lock table ip_blocks in share row exclusive mode`);
    if (c.ip && (await ipTaken(sql, c.ip, null))) c.problems.push('Ip has already been taken');
    if (c.problems.length) throw invalid(c.problems);
    const now = services.clock.now();
    const id = services.ids.next();
    const [created] = await sql.query<IpBlockRow>(
      `insert into ip_blocks (id, ip, severity, comment, expires_at, created_at, updated_at)
       values ($1, $2::cidr, $3, $4, $5, $6, $6) returning ${COLUMNS}`,
      [id, c.ip, c.severity, input.comment ?? '', expiresAt(now, input.expiresIn) ?? null, now],
    );
    await notifyChange(sql);
    await logAdminAction(services, sql, { actorAccountId, action: 'create', targetType: 'IpBlock', targetId: id, humanIdentifier: c.ip, detail: { severity: c.severity } });
    return created!;
  });
  invalidateIpBlocks(services);
  return row;
}

export async function updateIpBlock(services: Services, actorAccountId: string | null, id: string, input: IpBlockInput): Promise<IpBlockRow> {
  const c = checked(input, false);
  const row = await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    await sql.query(`lock table ip_blocks in share row exclusive mode`);
    const current = await ipBlockById(sql, id);
    if (!current) throw notFound();
    if (c.ip && (await ipTaken(sql, c.ip, id))) c.problems.push('Ip has already been taken');
    if (c.problems.length) throw invalid(c.problems);
    const now = services.clock.now();
    const expires = expiresAt(now, input.expiresIn);
    const [updated] = await sql.query<IpBlockRow>(
      `update ip_blocks set ip = coalesce($2::cidr, ip), severity = coalesce($3, severity),
              comment = case when $4::boolean then $5 else comment end,
              expires_at = case when $6::boolean then $7::timestamptz else expires_at end, updated_at = $8
        where id = $1 returning ${COLUMNS}`,
      [id, c.ip ?? null, c.severity ?? null, input.comment !== undefined, input.comment ?? '', expires !== undefined, expires ?? null, now],
    );
    await notifyChange(sql);
    await logAdminAction(services, sql, { actorAccountId, action: 'update', targetType: 'IpBlock', targetId: id, humanIdentifier: updated!.ip });
    return updated!;
  });
  invalidateIpBlocks(services);
  return row;
}

export async function removeIpBlock(services: Services, actorAccountId: string | null, id: string): Promise<void> {
  await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const current = await ipBlockById(sql, id);
    if (!current) throw notFound();
    await sql.query(`delete from ip_blocks where id = $1`, [id]);
    await notifyChange(sql);
    await logAdminAction(services, sql, { actorAccountId, action: 'destroy', targetType: 'IpBlock', targetId: id, humanIdentifier: current.ip });
  });
  invalidateIpBlocks(services);
}

// --- enforcement --------------------------------------------------------------------------------

interface IndexedBlock {
  severity: IpSeverity;
  /** ms since the epoch; null: never. */
  expiresAt: number | null;
}

interface IpBlockIndex {
  at: number;
  index: RangeIndex<IndexedBlock>;
  /** Whether any block (expired or not) says no_access: without one, requests skip the lookup. */
  anyNoAccess: boolean;
}

interface IndexState {
  current: IpBlockIndex | null;
  loading: Promise<IpBlockIndex> | null;
  generation: number;
  /** Changes reach this process by NOTIFY (watchIpBlocks): the index has no TTL. */
  watched: boolean;
}

const indexes = new WeakMap<Services, IndexState>();

function stateOf(services: Services): IndexState {
  let s = indexes.get(services);
  if (!s) indexes.set(services, (s = { current: null, loading: null, generation: 0, watched: false }));
  return s;
}

/** How a process subscribes to a NOTIFY channel (jobs/notify.ts's listener, handed by main.ts). */
export type Subscribe = (channel: string, onNotify: (payload: string | undefined) => void) => Promise<() => Promise<void>>;

/**
 * Keeps this process's index until a change is notified (also after the listener reconnected:
 * it may have missed one), and loads it now. Resolves with the function that stops watching.
 */
export async function watchIpBlocks(services: Services, subscribe: Subscribe): Promise<() => Promise<void>> {
  const stop = await subscribe(IP_BLOCKS_CHANNEL, () => invalidateIpBlocks(services));
  const s = stateOf(services);
  s.watched = true;
  invalidateIpBlocks(services);
  await ipBlockIndex(services);
  return async () => {
    s.watched = false;
    await stop().catch(() => undefined); // (the listener may be closed already)
  };
}

/** Forget the index: the table changed (call after the commit). */
export function invalidateIpBlocks(services: Services): void {
  const s = stateOf(services);
  s.generation++;
  s.current = null;
  s.loading = null;
}

async function loadIndex(services: Services): Promise<IpBlockIndex> {
  const rows = await services.db.sql.query<{ ip: string; severity: IpSeverity; expires_at: Date | string | null }>(
    // (the marker lets the tests' statement counts leave this per-process refresh out, as the
    // viewer cache's lookups: a page's cost is what they count)
    `/* ip-block index */ select ip::text as ip, severity, expires_at from ip_blocks`,
  );
  const index = new RangeIndex<IndexedBlock>();
  let anyNoAccess = false;
  for (const r of rows) {
    const range = parseIpRange(r.ip);
    if (!range) continue;
    index.add(range, { severity: r.severity, expiresAt: r.expires_at === null ? null : new Date(r.expires_at).getTime() });
    if (r.severity === 'no_access') anyNoAccess = true;
  }
  return { at: Date.now(), index, anyNoAccess };
}

/** The index when it is fresh, without waiting; null when it must be (re)read. */
function freshIndex(services: Services): IpBlockIndex | null {
  const s = stateOf(services);
  if (s.watched) return s.current;
  const now = Date.now();
  return s.current && now - s.current.at < INDEX_TTL_MS && now >= s.current.at ? s.current : null;
}

function ipBlockIndex(services: Services): IpBlockIndex | Promise<IpBlockIndex> {
  const fresh = freshIndex(services);
  if (fresh) return fresh;
  const s = stateOf(services);
  if (s.loading) return s.loading;
  const mine = s.generation;
  const loading = loadIndex(services).then(
    (ix) => {
      if (s.generation === mine) {
        s.current = ix;
        s.loading = null;
      }
      return ix;
    },
    (err: unknown) => {
      if (s.generation === mine) s.loading = null;
      throw err;
    },
  );
  s.loading = loading;
  return loading;
}

function severitiesIn(services: Services, ix: IpBlockIndex, address: string): Set<IpSeverity> {
  const now = services.clock.now().getTime();
  return new Set(ix.index.match(address).filter((b) => b.expiresAt === null || b.expiresAt > now).map((b) => b.severity));
}

/** The severities of the unexpired blocks containing `address`. */
export async function ipBlockSeverities(services: Services, address: string): Promise<Set<IpSeverity>> {
  return severitiesIn(services, await ipBlockIndex(services), address);
}

/** True when the held index has no no_access block: no request needs its address looked up. */
export function noAccessBlocksNone(services: Services): boolean {
  const ix = freshIndex(services);
  return ix !== null && !ix.anyNoAccess;
}

/**
 * Whether `address` may not reach the server at all (a no_access block). Synchronous (false or
 * true) while the index is held, which in a server process is every request after a change's first.
 */
export function ipAccessDenied(services: Services, address: string): boolean | Promise<boolean> {
  const ix = ipBlockIndex(services);
  const decide = (i: IpBlockIndex) => i.anyNoAccess && severitiesIn(services, i, address).has('no_access');
  return ix instanceof Promise ? ix.then(decide) : decide(ix);
}
