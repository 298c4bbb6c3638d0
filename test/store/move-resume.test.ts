/**
 * An incoming Move's follower migration is a durable job that survives a crash: a first process
 * takes the job, moves some followers and dies (its handler stops mid-way and the job stays
 * claimed); a Roost started later on the same database retakes the job once its lease is over
 * and finishes. Every follower ends up following the target, once (one follow.accepted each),
 * and none follows the origin.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it, expect } from 'vitest';
import { loadConfig } from '../../config/index.ts';
import { openRoostServices } from '../../src/main.ts';
import { createManualClock } from '../../src/lib/clock.ts';
import { claimJobs, DEFAULT_LEASE_MS } from '../../src/jobs/queue.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { followAccount } from '../../src/services/follows.ts';
import { MOVE_FOLLOWERS_JOB, migrateFollowersJob, moveAccount, type MoveFollowersJob } from '../../src/services/moves.ts';
import { AccountSchema } from '../../src/db/entities/index.ts';
import { createTestDatabase, settled, startTestRoost } from '../helpers/roost.ts';

const FOLLOWERS = 7;
const MOVED_BEFORE_CRASH = 3;

describe('an incoming Move after a crash', () => {
  it('resumes the follower migration on restart and moves every follower once', async () => {
    const db = await createTestDatabase();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-move-'));
    const clock = createManualClock(new Date('2026-05-01T10:00:00.000Z'));
    try {
      // The first process: no HTTP, no workers (the CLI's way in), so the test plays the worker.
      const config = loadConfig({ env: {}, overrides: { dataDir, databaseUrl: db.url ?? null, logLevel: 'silent', domain: 'crash.test' } });
      const first = await openRoostServices(config, { clock });
      const s = first.services;
      const make = (username: string) => createLocalAccount(s, { username, email: `${username}@example.test`, confirmed: true });
      const origin = (await make('mv_origin')).account;
      const target = (await make('mv_target')).account;
      const followers = [];
      for (let i = 0; i < FOLLOWERS; i++) followers.push((await make(`mv_fan${i}`)).account);
      for (const f of followers) await followAccount(s, f.id, origin.id);
      // The target names the origin (a Move to it is accepted).
      await s.db.sql.query(`update accounts set also_known_as = $2::jsonb where id = $1`, [target.id, JSON.stringify([origin.uri])]);
      const freshTarget = await s.db.em().findOneOrFail(AccountSchema, { id: target.id });

      expect(await moveAccount(s, origin, freshTarget)).toEqual({ refused: null, migrated: 0, failed: 0 });
      const claimed = (await claimJobs(s.db.sql, { queue: 'default', limit: 1000, clock, workerId: 'doomed' })).filter(
        (j) => j.kind === MOVE_FOLLOWERS_JOB,
      );
      expect(claimed).toHaveLength(1);
      // The worker dies after three followers: its handler stops there and never reports back.
      const dying = new AbortController();
      let moved = 0;
      await expect(
        migrateFollowersJob(s, claimed[0]!.payload as MoveFollowersJob, {
          signal: dying.signal,
          onMoved: () => {
            if (++moved === MOVED_BEFORE_CRASH) dying.abort();
          },
        }),
      ).rejects.toThrow();
      const following = async (sql: typeof s.db.sql, targetId: string) =>
        (await sql.query<{ n: number }>(`select count(*)::int as n from follows where target_account_id = $1 and state = 'accepted'`, [targetId]))[0]!.n;
      expect(await following(s.db.sql, target.id)).toBe(MOVED_BEFORE_CRASH);
      expect(await following(s.db.sql, origin.id)).toBe(FOLLOWERS - MOVED_BEFORE_CRASH);
      const [job] = await s.db.sql.query<{ state: string }>(`select state from jobs where id = $1`, [claimed[0]!.id]);
      expect(job!.state).toBe('running');
      await first.close();

      // Restart: a Roost on the same database, after the dead worker's lease ran out.
      clock.advance(DEFAULT_LEASE_MS + 1_000);
      // Same database, same domain (a database keeps its domain); any free port.
      const second = await startTestRoost({ databaseUrl: db.url, domain: 'crash.test' }, { clock, domainFromPort: false });
      try {
        const sql = second.services.db.sql;
        await settled(second);
        expect(await following(sql, target.id)).toBe(FOLLOWERS);
        expect(await following(sql, origin.id)).toBe(0);
        expect(await sql.query(`select 1 from jobs where kind = $1`, [MOVE_FOLLOWERS_JOB])).toEqual([]);
        // Once each: one follow.accepted per follower to the target, one follow.undone of the origin.
        const events = await sql.query<{ type: string; n: number }>(
          `select e.type, count(*)::int as n from outbox_events e join follows f on f.id = e.actor_id and e.actor_kind = 'follow'
            where f.target_account_id = any($1::bigint[]) and e.type in ('follow.accepted', 'follow.undone')
            group by e.type, f.target_account_id = $2 order by 1`,
          [[origin.id, target.id], target.id],
        );
        expect(events).toEqual([
          { type: 'follow.accepted', n: FOLLOWERS }, // the first follows of the origin
          { type: 'follow.accepted', n: FOLLOWERS }, // the moves to the target, one each
          { type: 'follow.undone', n: FOLLOWERS },
        ]);
        const perFollower = await sql.query<{ n: number }>(
          `select count(*)::int as n from outbox_events e join follows f on f.id = e.actor_id and e.actor_kind = 'follow'
            where f.target_account_id = $1 and e.type = 'follow.accepted' group by f.account_id`,
          [target.id],
        );
        expect(perFollower.map((r) => r.n)).toEqual(Array(FOLLOWERS).fill(1));
      } finally {
        await second.close();
      }
    } finally {
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
