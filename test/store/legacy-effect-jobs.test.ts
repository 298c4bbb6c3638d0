/**
 * Upgrade safety: jobs of the retired kind `effect` (written before the outbox) still pending
 * when the database is upgraded are rewritten by Migration20261123170000_legacy_effect_jobs into
 * outbox events + `event` jobs and `timer` jobs, and carried out by the running workers between
 * two real instances. The legacy rows are inserted and rewritten in one transaction, so no worker
 * sees an `effect` job (as at upgrade time: the migration runs before the workers start).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, relationshipOf } from '../helpers/auth.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { followAccount } from '../../src/services/follows.ts';
import { sqlFromEm, type Sql } from '../../src/db/sql.ts';
import { LEGACY_EFFECT_JOBS_SQL } from '../../src/db/migrations/Migration20261123170000_legacy_effect_jobs.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';

let a: TestRoost;
let b: TestRoost;
beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

/** Inserts a job of the retired kind as the old code did (kind 'effect', the DomainEvent as payload). */
async function legacyJob(sql: Sql, payload: Record<string, unknown>, runAt = new Date()): Promise<string> {
  const [row] = await sql.query<{ id: string }>(
    `insert into jobs (kind, payload, run_at, created_at, updated_at) values ('effect', $1::json, $2, now(), now()) returning id::text`,
    [JSON.stringify(payload), runAt.toISOString()],
  );
  return row!.id;
}

async function upgrade(sql: Sql): Promise<void> {
  for (const statement of LEGACY_EFFECT_JOBS_SQL) await sql.query(statement);
}

describe('legacy effect jobs after an upgrade', () => {
  it('the migration is registered and has run on this database', async () => {
    expect(MIGRATIONS.map((m) => m.name)).toContain('Migration20261123170000_legacy_effect_jobs');
    const rows = await a.services.db.sql.query<{ name: string }>(`select name from mikro_orm_migrations where name like '%legacy_effect_jobs'`);
    expect(rows.map((r) => r.name)).toEqual(['Migration20261123170000_legacy_effect_jobs']);
  });

  it('are carried out: a Follow, a Block and an Update(Person) reach the peer, a mute expires; dead rows leave nothing', async () => {
    const ann = await createTestUser(a, 'lg_ann');
    const eve = await createTestUser(b, 'lg_eve');
    const bea = await createTestUser(a, 'lg_bea');
    const eveOnA = (await lookupRemoteAccount(a.services, a.federation, `@lg_eve@${b.config.domain}`))!;
    const zed = await createTestUser(b, 'lg_zed');
    const zedOnA = (await lookupRemoteAccount(a.services, a.federation, `@lg_zed@${b.config.domain}`))!;
    // zed follows bea (through the real path), so bea's Update(Person) has somewhere to go.
    const annOnB = (await lookupRemoteAccount(b.services, b.federation, `@lg_ann@${a.config.domain}`))!;
    const beaOnB = (await lookupRemoteAccount(b.services, b.federation, `@lg_bea@${a.config.domain}`))!;
    await zed.api(`/api/v1/accounts/${beaOnB.id}/follow`, { method: 'POST' });
    await eventually(async () => (await relationshipOf(zed, beaOnB.id))?.following === true, 20_000, 'zed follows bea');
    await settled(a, b);

    const blockId = a.services.ids.next();
    const muteId = a.services.ids.next();
    const jobs: Record<string, string> = {};
    let followId = '';
    await a.services.db.em().transactional(async (tx) => {
      const sql = sqlFromEm(tx);
      // The state the old code left: a requested follow whose Follow was still to be sent…
      const follow = await followAccount(a.services, ann.account.id, eveOnA.id, {}, { em: tx });
      followId = follow.id;
      await sql.query(`delete from jobs where kind = 'event' and payload->>'actorId' = $1`, [followId]);
      await sql.query(`delete from outbox_events where actor_kind = 'follow' and actor_id = $1`, [followId]);
      jobs.follow = await legacyJob(sql, { type: 'follow.requested', followId });
      // …a block of a remote account not yet federated…
      await sql.query(`insert into blocks (id, account_id, target_account_id, uri, created_at) values ($1, $2, $3, $4, now())`, [
        blockId, ann.account.id, zedOnA.id, `${ann.account.uri}#blocks/${blockId}`,
      ]);
      jobs.block = await legacyJob(sql, { type: 'block.created', blockId });
      // …a profile edit not yet sent…
      await sql.query(`update accounts set display_name = 'Bea Upgraded', updated_at = now() where id = $1`, [bea.account.id]);
      jobs.update = await legacyJob(sql, { type: 'account.updated', accountId: bea.account.id });
      // …a mute due to expire (already past its time)…
      await sql.query(
        `insert into mutes (id, account_id, target_account_id, hide_notifications, expires_at, created_at) values ($1, $2, $3, true, now() - interval '1 minute', now())`,
        [muteId, ann.account.id, bea.account.id],
      );
      jobs.mute = await legacyJob(sql, { type: 'mute.expired', accountId: ann.account.id, targetId: bea.account.id });
      // …a follow that is gone, and a payload the old code never wrote.
      jobs.gone = await legacyJob(sql, { type: 'follow.accepted', followId: '1' });
      jobs.unknown = await legacyJob(sql, { type: 'status.created', statusId: '7' });
      await upgrade(sql);

      const rewritten = await sql.query<{ id: string; kind: string; state: string; payload: string; last_error: string | null }>(
        `select id::text, kind, state, payload::text as payload, last_error from jobs where id = any($1::bigint[]) order by id`,
        [Object.values(jobs)],
      );
      const byId = new Map(rewritten.map((r) => [r.id, { ...r, payload: JSON.parse(r.payload) }]));
      expect(byId.get(jobs.follow)).toMatchObject({
        kind: 'event',
        state: 'pending',
        payload: {
          actorKind: 'follow', actorId: followId, actorVersion: null, origin: 'client',
          event: { type: 'follow.requested', followId, followerId: ann.account.id, targetId: eveOnA.id },
        },
      });
      expect(byId.get(jobs.block)).toMatchObject({
        kind: 'event',
        payload: { actorKind: 'account', actorId: ann.account.id, event: { type: 'block.created', blockId, accountId: ann.account.id, targetId: zedOnA.id } },
      });
      expect(byId.get(jobs.update)).toMatchObject({ kind: 'event', payload: { actorKind: 'account', actorId: bea.account.id, event: { type: 'account.updated' } } });
      expect(byId.get(jobs.mute)).toMatchObject({ kind: 'timer', payload: { type: 'mute.expire', accountId: ann.account.id, targetId: bea.account.id } });
      expect(byId.has(jobs.gone)).toBe(false);
      expect(byId.get(jobs.unknown)).toMatchObject({ kind: 'effect', state: 'dead', last_error: 'legacy effect job of an unknown type: not carried over' });
      // Each event job names the outbox row holding its fact.
      const [fact] = await sql.query<{ type: string; actor_kind: string }>(`select type, actor_kind from outbox_events where id = $1`, [
        byId.get(jobs.follow)!.payload.id,
      ]);
      expect(fact).toEqual({ type: 'follow.requested', actor_kind: 'follow' });
    });

    // Carried out after commit: eve accepts ann's Follow, zed is blocked on B, bea's profile is updated there, the mute ends.
    await eventually(async () => (await relationshipOf(ann, eveOnA.id))?.following === true, 20_000, 'the Follow reached B and was accepted');
    await eventually(
      async () =>
        (await b.services.db.sql.query(`select 1 from blocks where account_id = $1 and target_account_id = $2 and uri = $3`, [
          annOnB.id, zed.account.id, `${ann.account.uri}#blocks/${blockId}`,
        ])).length === 1,
      20_000,
      'the Block reached B',
    );
    await eventually(
      async () => (await b.services.db.sql.query<{ display_name: string }>(`select display_name from accounts where id = $1`, [beaOnB.id]))[0]?.display_name === 'Bea Upgraded',
      20_000,
      'the Update(Person) reached B',
    );
    await eventually(async () => (await a.services.db.sql.query(`select 1 from mutes where id = $1`, [muteId])).length === 0, 20_000, 'the mute expired');
    await settled(a, b);
    // Nothing dead-lettered but the unknown payload.
    const dead = await a.services.db.sql.query<{ id: string }>(`select id::text from jobs where state = 'dead'`);
    expect(dead.map((r) => r.id)).toEqual([jobs.unknown]);
  });
});
