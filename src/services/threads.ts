/**
 * Complete threads: when a thread is opened (GET /api/v1/statuses/:id/context), what its servers
 * hold and this one does not is fetched in the background (federation/threads.ts, the
 * THREAD_FETCH_JOB), and the request answers at once with Mastodon 4.5's async refresh
 * (`Mastodon-Async-Refresh: id="…", retry=3, result_count=N`; GET /api/v1_alpha/async_refreshes/:id).
 *
 * One refresh per thread root (table thread_refreshes): started by a signed-in viewer when the
 * thread holds a remote status and its last refresh started more than
 * `federation.threadFetchCooldownSeconds` ago; while it runs every opening of the thread shows it.
 * A refresh whose worker died is taken as finished once it is older than its time bound.
 */
import { randomBytes } from 'node:crypto';
import type { Services } from '../context.ts';
import { schedule } from '../events/timers.ts';

/** The job that walks a thread's replies (handler: federation/threads.ts, registered by main.ts). */
export const THREAD_FETCH_JOB = 'threads.fetch';
/** Its own lane, so a slow remote never holds up effects. */
export const THREAD_FETCH_QUEUE = 'threads';

/** The job names the thread; it serves the refresh running for it when it starts (beginThreadFetch). */
export interface ThreadFetchJob {
  rootId: string;
}

/** Mastodon's AsyncRefresh entity. */
export interface AsyncRefresh {
  id: string;
  status: 'running' | 'finished';
  result_count: number;
}

/** How far up a thread's root is looked for (Mastodon's CONTEXT_LIMIT). */
const MAX_ANCESTORS = 4096;
/** A running refresh is abandoned this long after its time bound (its worker died). */
const STALE_MARGIN_MS = 60_000;

function staleBefore(services: Services, now: Date): Date {
  return new Date(now.getTime() - services.config.federation.threadFetchTimeoutSeconds * 1000 - STALE_MARGIN_MS);
}

/**
 * Opens the thread of `statusId` for `viewerId`: its root (its topmost known ancestor, itself when it has none) and the refresh running
 * for it (one is started for a signed-in viewer when the thread holds a remote status and is out
 * of its cooldown), or null when none runs. The network is never waited on: the walk is a job.
 */
export async function openThread(services: Services, statusId: string, viewerId: string | null): Promise<{ rootId: string; refresh: AsyncRefresh | null }> {
  const now = services.clock.now();
  const { threadFetchCooldownSeconds: cooldown, threadFetchMaxStatuses: max } = services.config.federation;
  const stale = staleBefore(services, now);
  // The root, whether its thread has anything to fetch (a remote status: the root, or anything in
  // its conversation), and its refresh, in one statement.
  const [found] = await services.db.sql.query<{
    root_id: string; fetchable: boolean; refresh_id: string | null; state: string | null; result_count: number | null; started_at: Date | null;
  }>(
    `with recursive up(id, parent, depth) as (
       select s.id, s.in_reply_to_id, 0 from statuses s where s.id = $1
       union all
       select s.id, s.in_reply_to_id, up.depth + 1 from statuses s join up on s.id = up.parent where up.depth < ${MAX_ANCESTORS}
     ), root as (select id from up order by depth desc limit 1)
     select root.id::text as root_id,
            (not s.local or (s.conversation_id is not null and exists (
               select 1 from statuses o where o.conversation_id = s.conversation_id and not o.local and o.deleted_at is null))) as fetchable,
            r.refresh_id, r.state, r.result_count, r.started_at
       from root join statuses s on s.id = root.id left join thread_refreshes r on r.root_status_id = root.id`,
    [statusId],
  );
  const rootId = found?.root_id ?? statusId;
  const current = found?.refresh_id ? (found as Current) : null;
  if (!found?.fetchable && !current) return { rootId, refresh: null };
  return { rootId, refresh: await refreshFor(services, rootId, viewerId, current, { now, cooldown, max, stale }) };
}

type Current = { refresh_id: string; state: string; result_count: number; started_at: Date };

async function refreshFor(
  services: Services,
  rootId: string,
  viewerId: string | null,
  current: Current | null,
  { now, cooldown, max, stale }: { now: Date; cooldown: number; max: number; stale: Date },
): Promise<AsyncRefresh | null> {
  const running = current && current.state === 'running' && new Date(current.started_at) > stale;
  if (running) return { id: current.refresh_id, status: 'running', result_count: Number(current.result_count) };
  if (!viewerId || max === 0) return null;
  if (current && new Date(current.started_at).getTime() > now.getTime() - cooldown * 1000) return null;
  const refreshId = randomBytes(18).toString('base64url');
  const started = await services.db.sql.transaction(async (sql) => {
    // The row is taken only if no refresh runs (another request may have won).
    const [row] = await sql.query<{ refresh_id: string }>(
      `insert into thread_refreshes (root_status_id, refresh_id, state, result_count, started_at)
       select s.id, $2, 'running', 0, $3 from statuses s where s.id = $1 and s.deleted_at is null
       on conflict (root_status_id) do update set refresh_id = excluded.refresh_id, state = 'running', result_count = 0,
              started_at = excluded.started_at, finished_at = null
        where thread_refreshes.started_at <= $4 and (thread_refreshes.state = 'finished' or thread_refreshes.started_at <= $5)
       returning refresh_id`,
      [rootId, refreshId, now, new Date(now.getTime() - cooldown * 1000), stale],
    );
    if (!row) return false;
    const job: ThreadFetchJob = { rootId };
    await schedule(sql, THREAD_FETCH_JOB, job, { queue: THREAD_FETCH_QUEUE, maxAttempts: 1, dedupeKey: `${THREAD_FETCH_JOB}:${rootId}`, clock: services.clock });
    return true;
  });
  if (started) return { id: refreshId, status: 'running', result_count: 0 };
  // Another request started one meanwhile: show it.
  const [other] = await services.db.sql.query<{ refresh_id: string; state: string; result_count: number }>(
    `select refresh_id, state, result_count from thread_refreshes where root_status_id = $1`,
    [rootId],
  );
  return other?.state === 'running' ? { id: other.refresh_id, status: 'running', result_count: Number(other.result_count) } : null;
}

/** The async refresh `id` (a thread's current one), or null. A refresh past its time bound reads finished. */
export async function asyncRefresh(services: Services, id: string): Promise<AsyncRefresh | null> {
  const [row] = await services.db.sql.query<{ state: string; result_count: number; started_at: Date }>(
    `select state, result_count, started_at from thread_refreshes where refresh_id = $1`,
    [id],
  );
  if (!row) return null;
  const running = row.state === 'running' && new Date(row.started_at) > staleBefore(services, services.clock.now());
  return { id, status: running ? 'running' : 'finished', result_count: Number(row.result_count) };
}

/**
 * The walk of the thread `rootId` starts: the id of the refresh running for it, its clock (time
 * bound, staleness) restarted now, as the job may have waited in its lane; null when none runs.
 */
export async function beginThreadFetch(services: Services, rootId: string): Promise<string | null> {
  const [row] = await services.db.sql.query<{ refresh_id: string }>(
    `update thread_refreshes set started_at = $2 where root_status_id = $1 and state = 'running' returning refresh_id`,
    [rootId, services.clock.now()],
  );
  return row?.refresh_id ?? null;
}

/** The walk of refresh `refreshId` brought `n` more statuses in. */
export async function countThreadResults(services: Services, refreshId: string, n: number): Promise<void> {
  if (n <= 0) return;
  await services.db.sql.query(`update thread_refreshes set result_count = result_count + $2 where refresh_id = $1`, [refreshId, n]);
}

/** What `statusId`'s server reported of its replies (its replies collection's totalItems, or the items it listed). */
export async function recordReplyReport(services: Services, statusId: string, reported: number): Promise<void> {
  await services.db.sql.query(
    `insert into status_reply_reports (status_id, reported, checked_at) values ($1, $2, $3)
     on conflict (status_id) do update set reported = excluded.reported, checked_at = excluded.checked_at`,
    [statusId, Math.max(0, Math.floor(reported)), services.clock.now()],
  );
}

/** The walk of refresh `refreshId` is over; `unreachable`: the hosts it could not reach. */
export async function finishThreadRefresh(services: Services, refreshId: string, unreachable: readonly string[]): Promise<void> {
  await services.db.sql.query(
    `update thread_refreshes set state = 'finished', finished_at = $2, unreachable_hosts = $3::text[] where refresh_id = $1`,
    [refreshId, services.clock.now(), [...unreachable].sort()],
  );
}
