/**
 * A peer that goes down and comes back (issue 8, item 19). Instance B stops (server closed,
 * database kept) while accounts on A follow and unfollow one of its accounts, and one follows for
 * good; B comes back on the same port. Deliveries must neither stall behind a circuit breaker
 * tripped by a restart (Fedify's default opens after 5 failures in 10 minutes and holds the host
 * for 30) nor arrive out of order (an Undo(Follow) before its Follow leaves B with a follow A
 * no longer has): both servers end up agreeing on every relationship.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it, expect, afterAll } from 'vitest';
import { loadConfig, type RoostConfig } from '../../config/index.ts';
import { startRoost, type RunningRoost } from '../../src/main.ts';
import { createTestDatabase, eventually, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, relationshipOf, type TestUser } from '../helpers/auth.ts';
import { createLocalAccount } from '../../src/services/accounts.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { PRIORITY_LANE } from '../../src/federation/delivery.ts';

let a: TestRoost | undefined;
let b: RunningRoost | undefined;
let bDb: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let bDir: string | undefined;

afterAll(async () => {
  await a?.close();
  await b?.close();
  await bDb?.drop();
  if (bDir) rmSync(bDir, { recursive: true, force: true });
});

/** B's accepted followers of `username`, as actor URIs. */
async function followersOnB(roost: RunningRoost, username: string): Promise<string[]> {
  const rows = await roost.services.db.sql.query<{ uri: string }>(
    `select f.uri as follow_uri, a.uri from follows f join accounts a on a.id = f.account_id join accounts t on t.id = f.target_account_id
      where t.username = $1 and t.domain is null and f.state = 'accepted' order by a.uri`,
    [username],
  );
  return rows.map((r) => r.uri);
}

describe('a peer that restarts', () => {
  it('gets every delivery, in order, once it is back', { timeout: 120_000 }, async () => {
    a = await startTestRoost();
    bDb = await createTestDatabase();
    bDir = mkdtempSync(path.join(tmpdir(), 'roost-test-'));
    // B listens on a fixed port below the ephemeral range (32768+), so that no outgoing connection
    // of another process takes it while B is down; a taken port is skipped.
    let config!: RoostConfig;
    for (let attempt = 0; !b; attempt++) {
      const port = 20_000 + Math.floor(Math.random() * 12_000);
      config = loadConfig({
        env: {},
        overrides: {
          host: '127.0.0.1',
          port,
          domain: `127.0.0.1:${port}`,
          publicUrl: `http://127.0.0.1:${port}`,
          dataDir: bDir,
          databaseUrl: bDb.url ?? null,
          logLevel: process.env.ROOST_TEST_LOG_LEVEL ?? 'silent',
          federation: { allowPrivateAddresses: true },
        },
      });
      b = await startRoost(config, { controlSocket: false }).catch((e) => {
        if (attempt > 10 || !/listen/.test(String(e))) throw e;
        return undefined;
      });
    }
    const port = b!.port;
    await createLocalAccount(b!.services, { username: 'bob', email: 'bob@b.test' });

    // Three accounts that will follow and unfollow, one that follows for good.
    const leavers: TestUser[] = [];
    for (const name of ['alice', 'carl', 'erin']) leavers.push(await createTestUser(a, name));
    const dave = await createTestUser(a, 'dave');
    const bobOnA = (await lookupRemoteAccount(a.services, a.federation, `bob@${config.domain}`))!;
    expect(bobOnA).not.toBeNull();

    // B goes down (its database stays); A's users act meanwhile.
    await b!.close();
    b = undefined;
    for (const u of leavers) {
      expect((await u.api(`/api/v1/accounts/${bobOnA.id}/follow`, { method: 'POST' })).body.requested).toBe(true);
    }
    expect((await dave.api(`/api/v1/accounts/${bobOnA.id}/follow`, { method: 'POST' })).status).toBe(200);
    for (const u of leavers) {
      const undone = await u.api(`/api/v1/accounts/${bobOnA.id}/unfollow`, { method: 'POST' });
      expect(undone.body).toMatchObject({ following: false, requested: false });
    }
    // B stays down six seconds: each Follow fails three times or so (twelve failures, past the 5
    // in 10 minutes that open Fedify's default circuit breaker); each Undo waits behind its Follow.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    // Deliveries wait in the priority lane (src/federation/delivery.ts): a Follow or an Undo is one job.
    const [pending] = await a.services.db.sql.query<{ n: number }>(`select count(*)::int as n from jobs where queue = $1`, [PRIORITY_LANE]);
    expect(pending!.n).toBeGreaterThanOrEqual(4);

    // B comes back on the same port, with the same data.
    b = await startRoost(config, { controlSocket: false });
    expect(b.port).toBe(port);

    // Dave's follow went through and was accepted: deliveries did not stall.
    await eventually(async () => (await relationshipOf(dave, bobOnA.id))?.following === true, 60_000, "dave's Accept");
    // Every queue drained on both sides (timers not yet due, like the next trends refresh, are not work).
    const idle = async (r: RunningRoost) =>
      (await r.services.db.sql.query(`select 1 from jobs where state <> 'dead' and not (kind = 'timer' and state = 'pending' and run_at > now()) limit 1`)).length === 0;
    await eventually(async () => (await idle(a!)) && (await idle(b!)), 60_000, 'both queues to drain');

    // Both sides agree: B's bob is followed by dave only, and A says the same.
    expect(await followersOnB(b, 'bob')).toEqual([a.at('/users/dave')]);
    for (const u of leavers) expect(await relationshipOf(u, bobOnA.id)).toMatchObject({ following: false, requested: false });
    expect((await dave.api(`/api/v1/accounts/${bobOnA.id}`)).body.followers_count).toBe(1);
  });
});
