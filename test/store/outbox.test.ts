/**
 * The actor store's outbox, through real instances: a local follow, a remote follow and an unlock
 * each leave the expected facts in `outbox_events` (actor kind, id, version, origin), and two
 * concurrent steps of one account actor both take effect (the row lock and the version check: no
 * step is lost).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, relationshipOf } from '../helpers/auth.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { setAccountLocked, setAccountSilenced } from '../../src/services/relationships.ts';
import { stepAccount } from '../../src/services/account-actor.ts';
import { accountDefinition, accountFlags, type AccountSnapshot } from '../../actors/account/account.machine.ts';

let a: TestRoost;
let b: TestRoost;
beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

interface EventRow {
  actor_kind: string;
  actor_id: string;
  actor_version: number | null;
  origin: string;
  type: string;
  payload: Record<string, unknown>;
}

/** The outbox rows that involve any of `ids` (as actor or in the payload), oldest first. */
async function outbox(roost: TestRoost, ...ids: string[]): Promise<EventRow[]> {
  const rows = await roost.services.db.sql.query<EventRow & { payload: string | Record<string, unknown> }>(
    `select actor_kind, actor_id::text, actor_version, origin, type, payload::text as payload from outbox_events order by id`,
  );
  return rows
    .map((r) => ({ ...r, payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload }))
    .filter((r) => ids.includes(r.actor_id) || Object.values(r.payload).some((v) => ids.includes(v as string)));
}

const followId = async (roost: TestRoost, followerId: string, targetId: string) =>
  (await roost.services.db.sql.query<{ id: string }>(`select id::text from follows where account_id = $1 and target_account_id = $2`, [followerId, targetId]))[0]!.id;

describe('the outbox', () => {
  it('holds follow.accepted for a local follow of an unlocked account, and follow.requested for a locked one', async () => {
    const ann = await createTestUser(a, 'ob_ann');
    const ben = await createTestUser(a, 'ob_ben');
    const cal = await createTestUser(a, 'ob_cal');
    await setAccountLocked(a.services, cal.account.id, true);
    expect((await ann.api(`/api/v1/accounts/${ben.account.id}/follow`, { method: 'POST' })).body.following).toBe(true);
    expect((await ann.api(`/api/v1/accounts/${cal.account.id}/follow`, { method: 'POST' })).body.requested).toBe(true);
    const toBen = await followId(a, ann.account.id, ben.account.id);
    const toCal = await followId(a, ann.account.id, cal.account.id);
    expect((await outbox(a, toBen)).map((e) => [e.actor_kind, e.actor_id, e.actor_version, e.origin, e.type, e.payload])).toEqual([
      ['follow', toBen, 1, 'client', 'follow.accepted', { type: 'follow.accepted', followerId: ann.account.id, targetId: ben.account.id, via: 'automatic' }],
    ]);
    expect((await outbox(a, toCal)).map((e) => [e.actor_kind, e.actor_version, e.origin, e.type])).toEqual([['follow', 1, 'client', 'follow.requested']]);
  });

  it('holds follow.requested on the follower side and follow.accepted on both for a remote follow', async () => {
    const dee = await createTestUser(a, 'ob_dee');
    const eve = await createTestUser(b, 'ob_eve');
    const eveOnA = (await lookupRemoteAccount(a.services, a.federation, `@ob_eve@${b.config.domain}`))!;
    expect((await dee.api(`/api/v1/accounts/${eveOnA.id}/follow`, { method: 'POST' })).body.requested).toBe(true);
    await eventually(async () => (await relationshipOf(dee, eveOnA.id))?.following === true, 20_000, 'the Accept from B');
    await settled(a, b);
    const onA = await followId(a, dee.account.id, eveOnA.id);
    expect((await outbox(a, onA)).map((e) => [e.actor_kind, e.actor_version, e.origin, e.type])).toEqual([
      ['follow', 1, 'client', 'follow.requested'],
      ['follow', 2, 'federation', 'follow.accepted'],
    ]);
    const deeOnB = (await b.services.db.sql.query<{ id: string }>(`select id::text from accounts where uri = $1`, [dee.account.uri]))[0]!.id;
    const onB = await followId(b, deeOnB, eve.account.id);
    expect((await outbox(b, onB)).map((e) => [e.actor_kind, e.actor_version, e.origin, e.type, e.payload.via])).toEqual([
      ['follow', 1, 'federation', 'follow.accepted', 'automatic'],
    ]);
  });

  it('holds account.unlocked and the follow.accepted of each pending request an unlock accepts', async () => {
    const fay = await createTestUser(a, 'ob_fay');
    const gus = await createTestUser(a, 'ob_gus');
    await fay.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: true } });
    await gus.api(`/api/v1/accounts/${fay.account.id}/follow`, { method: 'POST' });
    const res = await fay.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { locked: false } });
    expect(res.status).toBe(200);
    expect((await relationshipOf(gus, fay.account.id)).following).toBe(true);
    const follow = await followId(a, gus.account.id, fay.account.id);
    const events = (await outbox(a, fay.account.id)).map((e) => [e.actor_kind, e.actor_id === follow ? 'follow' : e.actor_id, e.actor_version, e.origin, e.type]);
    expect(events).toEqual([
      ['account', fay.account.id, 1, 'client', 'account.locked'],
      ['account', fay.account.id, null, 'client', 'account.updated'],
      ['follow', 'follow', 1, 'client', 'follow.requested'],
      ['account', fay.account.id, 2, 'client', 'account.unlocked'],
      ['follow', 'follow', 2, 'client', 'follow.accepted'],
      ['account', fay.account.id, null, 'client', 'account.updated'],
    ]);
    expect((await outbox(a, follow)).at(-1)!.payload.via).toBe('unlock');
  });
});

describe('concurrent steps of one account actor', () => {
  it('lose none: locking, moving, silencing and disabling at once all take effect, one version each', async () => {
    const hal = await createTestUser(a, 'ob_hal');
    const ivy = await createTestUser(a, 'ob_ivy');
    const s = a.services;
    await Promise.all([
      setAccountLocked(s, hal.account.id, true),
      stepAccount(s, hal.account.id, { type: 'account.move', targetAccountId: ivy.account.id }, { origin: 'operator' }),
      setAccountSilenced(s, hal.account.id, true),
      stepAccount(s, hal.account.id, { type: 'account.disable' }, { origin: 'operator' }),
    ]);
    const [row] = await s.db.sql.query<{ locked: boolean; moved_to: string | null; silenced: boolean; disabled: boolean; machine: string; v: number }>(
      `select a.locked, a.moved_to_account_id::text as moved_to, a.silenced_at is not null as silenced, u.disabled, a.machine::text as machine,
              a.machine_version as v
         from accounts a join users u on u.account_id = a.id where a.id = $1`,
      [hal.account.id],
    );
    expect(row).toMatchObject({ locked: true, moved_to: ivy.account.id, silenced: true, disabled: true, v: 4 });
    const snapshot = JSON.parse(row!.machine) as AccountSnapshot & { definition: number };
    // Stamped with the definition that wrote it: 3 since the sensitizing region joined the machine.
    expect(snapshot.definition).toBe(accountDefinition.version);
    expect(accountDefinition.version).toBe(3);
    expect(accountFlags(snapshot)).toMatchObject({ locked: true, moved: true, movedToAccountId: ivy.account.id, silenced: true, disabled: true });
    const events = (await outbox(a, hal.account.id)).filter((e) => e.actor_id === hal.account.id);
    expect(events.map((e) => e.actor_version).sort()).toEqual([1, 2, 3, 4]);
    expect(events.map((e) => e.type).sort()).toEqual(['account.disabled', 'account.locked', 'account.moved', 'account.silenced']);
  });

  it('lose none when two first steps race to create the row: the loser reads the winner and steps again', async () => {
    const kit = await createTestUser(a, 'ob_kit');
    const lee = await createTestUser(a, 'ob_lee');
    // Two first follows of one pair at once, with different options: on PostgreSQL both find no
    // row to lock and both insert; the unique key makes one wait and find nothing inserted, and the
    // store reads the winner's row and steps again (a re-POST of /follow: only options change).
    const [one, two] = await Promise.all([
      kit.api(`/api/v1/accounts/${lee.account.id}/follow`, { body: { reblogs: false } }),
      kit.api(`/api/v1/accounts/${lee.account.id}/follow`, { body: { notify: true } }),
    ]);
    expect([one.status, two.status]).toEqual([200, 200]);
    const rows = await a.services.db.sql.query<{ state: string; show_reblogs: boolean; notify: boolean; machine_version: number }>(
      `select state, show_reblogs, notify, machine_version from follows where account_id = $1 and target_account_id = $2`,
      [kit.account.id, lee.account.id],
    );
    expect(rows).toEqual([{ state: 'accepted', show_reblogs: false, notify: true, machine_version: 2 }]);
    const follow = await followId(a, kit.account.id, lee.account.id);
    expect((await outbox(a, follow)).map((e) => [e.actor_version, e.type])).toEqual([
      [1, 'follow.accepted'],
      [2, 'follow.updated'],
    ]);
  });

  it('refuses a step the actor does not accept without writing anything', async () => {
    const jo = await createTestUser(a, 'ob_jo');
    const r = await stepAccount(a.services, jo.account.id, { type: 'account.unlock' }, { origin: 'client' });
    expect(r.accepted).toBe(false);
    expect(await outbox(a, jo.account.id)).toEqual([]);
    const [row] = await a.services.db.sql.query<{ v: number }>(`select machine_version as v from accounts where id = $1`, [jo.account.id]);
    expect(row!.v).toBe(0);
  });
});
