/**
 * `npm run bench -- polls`: 10,000 votes on one poll, by as many local accounts, over 60 simulated
 * seconds, on PostgreSQL, next to a plain insert of the same row into a table of the same shape,
 * in the same run on the same database (one measured after the other, vote by vote).
 *
 *   vote      votePoll (services/polls.ts): reads the poll's row and whether the voter voted,
 *             restores the snapshot, steps the poll actor, then writes the vote row, the poll's row
 *             and snapshot (version check) and the outbox events in one statement; a vote that
 *             asks for a timer (the Update due) or loses three races takes the transaction with
 *             the row lock instead
 *   baseline  `insert into bench_votes …` (same columns, same unique key), one statement; and the
 *             same insert in a transaction of its own (begin, insert, commit), as a second reference
 *
 * and, as floors of the vote (what a vote costs without the part named), in the same run:
 *   - the vote's one statement alone: its time as votePoll sends it (the pg driver included),
 *     taken by wrapping the services' `sql.query` (the one-statement step's text begins
 *     `with written as (`); the vote less it is the JavaScript around it (the step);
 *   - the plain insert into `bench_poll_votes`, a table defined as poll_votes is (its keys,
 *     its index and its two foreign keys, to the poll and to the voter's account): what storing
 *     the vote row costs with the row's own constraints and nothing of the actor.
 *
 * Before measuring, 1,000 votes on a second poll and as many inserts of each kind warm every path
 * alike.
 *
 * Prints the latencies (p50, p99, mean) and the ratio of the p99s (goal: vote ≤ 1.5× insert), and
 * the poll's `poll.updated` facts and Update timers over the 60 s, the throttle's output: with the
 * timers run as the clock passes their time, at most one Update per 3 minutes (the first goes at
 * once; the next is due 3 minutes later, after the 60 s), then the one after advancing 3 minutes.
 *
 * Environment: ROOST_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres; a
 * scratch database is created beside it and dropped at the end), BENCH_VOTES (default 10000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../../config/index.ts';
import { openRoostServices } from '../../src/main.ts';
import { createManualClock } from '../../src/lib/clock.ts';
import { createPoll, votePoll } from '../../src/services/polls.ts';
import { handleTimer } from '../../src/services/timers.ts';
import type { TimerEvent } from '../../src/events/timers.ts';
import { sqlFromEm } from '../../src/db/sql.ts';
import { fmtInt, fmtMs, fmtRatio, table } from './lib/report.ts';

const SIMULATED_MS = 60_000;
/** Votes (and inserts of each kind) run before measuring. */
const WARM_UP = 1_000;

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { p50: at(0.5), p99: at(0.99), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

export async function main(): Promise<number> {
  const votes = Number(process.env.BENCH_VOTES ?? 10_000);
  const base = process.env.ROOST_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `roost_bench_polls_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-polls-'));
  const clock = createManualClock(new Date('2026-06-01T12:00:00.000Z'));
  const config = loadConfig({ env: {}, overrides: { dataDir, logLevel: 'silent', databaseUrl: url.toString() } });
  const roost = await openRoostServices(config, { logLevel: 'silent', clock });
  const { services } = roost;
  const sql = services.db.sql;
  try {
    // The author, the voters (local accounts), the status and its poll (a day long).
    const first = BigInt(services.ids.next());
    const accountId = (n: number) => String(first + BigInt(n));
    await sql.query(
      `insert into accounts (id, username, domain, uri, display_name, note, created_at, updated_at)
       select $1::bigint + g, 'bench' || g, null, 'https://bench.example/users/bench' || g, '', '', now(), now()
         from generate_series(0, $2::int) g`,
      [first.toString(), votes],
    );
    // A status with a poll (a day long) by the author; one is measured, one warms the vote path.
    const newPoll = async (n: number) => {
      const statusId = services.ids.next();
      const pollId = await sql.transaction(async (tx) => {
        await tx.query(
          `insert into statuses (id, account_id, uri, text, content, visibility, local, created_at, updated_at)
           values ($1, $2, $3, 'Which?', '<p>Which?</p>', 'public', true, $4, $4)`,
          [statusId, accountId(0), `https://bench.example/statuses/${n}`, clock.now()],
        );
        return createPoll(services, tx, {
          statusId, accountId: accountId(0), local: true, options: ['a', 'b', 'c', 'd'], multiple: false, hideTotals: false,
          expiresAt: new Date(clock.now().getTime() + 86_400_000),
        }, 'client');
      });
      return { statusId, pollId };
    };
    const { statusId, pollId } = await newPoll(1);
    const warmPoll = await newPoll(2);
    await sql.query(`create table bench_votes (
      id bigint primary key, poll_id bigint not null, voter text not null, account_id bigint, choices integer[] not null,
      created_at timestamptz not null, updated_at timestamptz not null, unique (poll_id, voter))`);
    // poll_votes' definition (LIKE copies its keys and index, not its foreign keys: added here).
    await sql.query(`create table bench_poll_votes (like poll_votes including all,
      foreign key (poll_id) references polls (id) on delete cascade, foreign key (account_id) references accounts (id) on delete cascade)`);
    const insertConstrained = (poll: string, voter: string, choices: number[]) =>
      sql.query(
        `insert into bench_poll_votes (id, poll_id, voter, account_id, choices, created_at, updated_at) values ($1, $2, $3, $3::text::bigint, $4::integer[], $5, $5)`,
        [services.ids.next(), poll, voter, choices, clock.now()],
      );

    // The vote's own statement, timed where votePoll sends it.
    let statementMs: number | null = null;
    const query = sql.query.bind(sql);
    sql.query = (async (text: string, params?: readonly unknown[]) => {
      if (!text.startsWith('with written as (')) return query(text, params);
      const t = performance.now();
      const rows = await query(text, params);
      statementMs = performance.now() - t;
      return rows;
    }) as typeof sql.query;

    // The timers due on the simulated clock, run as the job worker would (both polls'; the
    // measured poll's are counted).
    let timersRun = 0;
    const runDueTimers = async () => {
      const due = await sql.query<{ id: string; payload: TimerEvent }>(
        `delete from jobs where kind = 'timer' and state = 'pending' and run_at <= $1 returning id::text, payload`,
        [clock.now()],
      );
      for (const job of due) {
        const timer = (typeof job.payload === 'string' ? JSON.parse(job.payload) : job.payload) as TimerEvent;
        await handleTimer(services, timer);
        if ((timer as { pollId?: string }).pollId === pollId) timersRun++;
      }
    };

    // Warm-up, the same for the vote and both baselines (connections, prepared statements, the
    // JIT): WARM_UP votes on the other poll (by the same voters) and as many inserts of each kind
    // on a poll id nothing measured uses. Unwarmed, the first ~1,000 votes held half of the
    // slowest 1 % (the vote's code compiled and its statement prepared while being timed).
    const warm = Math.min(WARM_UP, votes);
    for (let i = 1; i <= warm; i++) {
      await votePoll(services, accountId(i), warmPoll.pollId, [i % 4]);
      await sql.query(`insert into bench_votes (id, poll_id, voter, account_id, choices, created_at, updated_at) values ($1, 0, $2, $2::text::bigint, $3::integer[], $4, $4)`, [
        services.ids.next(), accountId(i), [i % 4], clock.now(),
      ]);
      await services.db.em().transactional(async (em) => {
        await sqlFromEm(em).query(
          `insert into bench_votes (id, poll_id, voter, account_id, choices, created_at, updated_at) values ($1, 1, $2, $2::text::bigint, $3::integer[], $4, $4)`,
          [services.ids.next(), accountId(i), [i % 4], clock.now()],
        );
      });
      await insertConstrained(warmPoll.pollId, accountId(i), [i % 4]);
    }

    const voteMs: number[] = [];
    const insertMs: number[] = [];
    const txInsertMs: number[] = [];
    const constrainedMs: number[] = [];
    /** Votes that took the one statement: that statement's time, and the rest of the vote. */
    const statementOnlyMs: number[] = [];
    const aroundMs: number[] = [];
    const step = SIMULATED_MS / votes;
    for (let i = 1; i <= votes; i++) {
      const choice = [i % 4];
      statementMs = null;
      let t = performance.now();
      await votePoll(services, accountId(i), pollId, choice);
      const vote = performance.now() - t;
      voteMs.push(vote);
      if (statementMs !== null) {
        statementOnlyMs.push(statementMs);
        aroundMs.push(vote - statementMs);
      }
      t = performance.now();
      await sql.query(
        `insert into bench_votes (id, poll_id, voter, account_id, choices, created_at, updated_at) values ($1, $2, $3, $3::text::bigint, $4::integer[], $5, $5)`,
        [services.ids.next(), pollId, accountId(i), choice, clock.now()],
      );
      insertMs.push(performance.now() - t);
      t = performance.now();
      await services.db.em().transactional(async (em) => {
        await sqlFromEm(em).query(
          `insert into bench_votes (id, poll_id, voter, account_id, choices, created_at, updated_at) values ($1, $2, $3, $3::text::bigint, $4::integer[], $5, $5)`,
          [services.ids.next(), statusId, accountId(i), choice, clock.now()],
        );
      });
      txInsertMs.push(performance.now() - t);
      t = performance.now();
      await insertConstrained(pollId, accountId(i), choice);
      constrainedMs.push(performance.now() - t);
      clock.advance(step);
      if (i % 100 === 0) await runDueTimers();
    }
    await runDueTimers();
    const facts = async () =>
      (await sql.query<{ type: string; n: number }>(
        `select type, count(*)::int as n from outbox_events where actor_kind = 'poll' and actor_id = $1 group by type order by type`,
        [pollId],
      )).reduce<Record<string, number>>((m, r) => ({ ...m, [r.type]: r.n }), {});
    const in60 = await facts();
    const timersIn60 = timersRun;
    clock.advance(3 * 60_000);
    await runDueTimers();
    const after = await facts();
    const [row] = await sql.query<{ votes_count: number; voters_count: number; len: number }>(
      `select votes_count, voters_count, length(machine::text) as len from polls where id = $1`,
      [pollId],
    );

    const v = stats(voteMs);
    const b = stats(insertMs);
    const bt = stats(txInsertMs);
    const bc = stats(constrainedMs);
    // The statement is recognised by its text (the actor store's one-statement step): a changed
    // text must stop the bench, not print a floor of nothing.
    if (statementOnlyMs.length === 0) throw new Error("the vote's one statement was never seen (does stepActorInOneStatement's text still begin 'with written as ('?)");
    const vs = stats(statementOnlyMs);
    const va = stats(aroundMs);
    console.log(`${fmtInt(votes)} votes on one poll over ${SIMULATED_MS / 1000} simulated seconds, PostgreSQL (${name}), one client\n`);
    console.log(
      table(
        ['what', 'p50', 'p99', 'mean'],
        [
          ['plain insert of the vote row (baseline)', fmtMs(b.p50), fmtMs(b.p99), fmtMs(b.mean)],
          ['the same insert in a transaction (begin, insert, commit)', fmtMs(bt.p50), fmtMs(bt.p99), fmtMs(bt.mean)],
          ['votePoll (row + poll actor step + outbox)', fmtMs(v.p50), fmtMs(v.p99), fmtMs(v.mean)],
          [`  its one statement alone (${fmtInt(statementOnlyMs.length)} votes)`, fmtMs(vs.p50), fmtMs(vs.p99), fmtMs(vs.mean)],
          ['  the rest of those votes (JavaScript: step, SQL text)', fmtMs(va.p50), fmtMs(va.p99), fmtMs(va.mean)],
          ['plain insert into a table defined as poll_votes (+ FKs)', fmtMs(bc.p50), fmtMs(bc.p99), fmtMs(bc.mean)],
        ],
      ),
    );
    const ratio = v.p99 / b.p99;
    console.log(`\nvote p99 / insert p99: ${fmtRatio(ratio)} (goal <= 1.50x: ${ratio <= 1.5 ? 'met' : 'MISSED'}); p50: ${fmtRatio(v.p50 / b.p50)}`);
    console.log(
      `floors, / insert: the vote's statement alone p99 ${fmtRatio(vs.p99 / b.p99)}, p50 ${fmtRatio(vs.p50 / b.p50)}; ` +
        `the insert with poll_votes' constraints p99 ${fmtRatio(bc.p99 / b.p99)}, p50 ${fmtRatio(bc.p50 / b.p50)}`,
    );
    console.log(`vote p99 / insert-with-poll_votes'-constraints p99: ${fmtRatio(v.p99 / bc.p99)}; p50: ${fmtRatio(v.p50 / bc.p50)}`);
    console.log(`vote p99 / insert-in-a-transaction p99: ${fmtRatio(v.p99 / bt.p99)}; p50: ${fmtRatio(v.p50 / bt.p50)}`);
    console.log(
      `poll after the votes: votes_count ${row!.votes_count}, voters_count ${row!.voters_count}, snapshot ${row!.len} bytes (the same at vote 1 and vote ${votes})`,
    );
    console.log(
      `over the ${SIMULATED_MS / 1000} s: poll.voted ${in60['poll.voted'] ?? 0}, poll.update_scheduled ${in60['poll.update_scheduled'] ?? 0}, ` +
        `poll.updated ${in60['poll.updated'] ?? 0}, timers run ${timersIn60} ` +
        `(goal: at most one Update per 3 minutes: ${(in60['poll.updated'] ?? 0) <= 1 ? 'met' : 'MISSED'})`,
    );
    console.log(`3 minutes later: poll.updated ${after['poll.updated'] ?? 0} (the throttled one, carrying all ${row!.votes_count} votes)`);
    return 0;
  } finally {
    await roost.close();
    rmSync(dataDir, { recursive: true, force: true });
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
