/**
 * The stall detector: a periodic look (a few comparisons, no statement) at the statements Roost
 * has sent and not had answered (db/orm.ts tracks them). When one has waited longer than the
 * threshold, it logs at error level what is stuck: the pending statements (text, age, whether
 * waiting for a connection or running), the open transactions (age, last statement) and, on a
 * PostgreSQL server, what the server says of Roost's sessions (pg_stat_activity, with the sessions
 * blocking each one), read over a connection of its own so an exhausted pool cannot hide it.
 * Once per stall: it logs again only after the database has answered in between.
 */
import pg from 'pg';
import type { Logger } from 'pino';
import type { StatementTracker } from './orm.ts';

const TEXT_MAX = 300;

/** What is pending and open now, for a log line (also what shutdown logs when it gives up). */
export function stuckWork(tracker: StatementTracker, now = performance.now()) {
  return {
    pending: [...tracker.pending]
      .sort((a, b) => a.since - b.since)
      .slice(0, 20)
      .map((p) => ({ phase: p.phase, ageMs: Math.round(now - p.since), text: p.text.slice(0, TEXT_MAX) })),
    pendingCount: tracker.pending.size,
    transactions: [...tracker.transactions]
      .sort((a, b) => a.since - b.since)
      .slice(0, 20)
      .map((t) => ({ ageMs: Math.round(now - t.since), lastStatement: t.last?.text.slice(0, TEXT_MAX) ?? null, lastStatementAgoMs: t.last ? Math.round(now - t.last.at) : null })),
    lastAnswerAgoMs: Math.round(now - tracker.lastAnsweredAt),
  };
}

export interface StallDetectorOptions {
  tracker: StatementTracker;
  log: Logger;
  /** A statement unanswered this long is a stall. */
  thresholdMs: number;
  /** On a PostgreSQL server: its URL, to ask it who holds what. */
  databaseUrl?: string;
  /** The pool, for its counts (total, idle, waiting). */
  pool?: () => { totalCount: number; idleCount: number; waitingCount: number } | undefined;
}

export function startStallDetector(opts: StallDetectorOptions): { stop(): void } {
  const log = opts.log.child({ module: 'db' });
  let reportedAt = -1;
  const check = () => {
    const now = performance.now();
    let oldest = Infinity;
    for (const p of opts.tracker.pending) if (p.since < oldest) oldest = p.since;
    if (oldest === Infinity || now - oldest < opts.thresholdMs) return;
    // Once per stall: again only once something was answered since the last report.
    if (reportedAt >= 0 && opts.tracker.lastAnsweredAt <= reportedAt) return;
    reportedAt = now;
    const work = stuckWork(opts.tracker, now);
    const pool = opts.pool?.();
    const report = (server?: unknown) =>
      log.error(
        { ...work, pool: pool ? { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount } : undefined, server },
        `database stalled: a statement unanswered for ${Math.round((now - oldest) / 1000)} s`,
      );
    if (!opts.databaseUrl) return void report();
    serverView(opts.databaseUrl).then(report, (err) => report({ error: (err as Error).message }));
  };
  const timer = setInterval(check, Math.max(100, Math.min(1000, opts.thresholdMs / 2)));
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** Roost's sessions on the server as it sees them, each with the sessions blocking it. */
async function serverView(url: string) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000, statement_timeout: 3000, application_name: 'roost-stall' });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select pid, state, wait_event_type, wait_event, pg_blocking_pids(pid) as blocked_by,
              extract(epoch from now() - xact_start)::int as xact_seconds,
              extract(epoch from now() - query_start)::int as query_seconds, left(query, ${TEXT_MAX}) as query, application_name
         from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and state is distinct from 'idle'
        order by xact_start nulls last limit 30`,
    );
    return { sessions: rows };
  } finally {
    await client.end().catch(() => undefined);
  }
}
