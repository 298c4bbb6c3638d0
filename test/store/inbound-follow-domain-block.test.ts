/**
 * An inbound Follow honours the target's user-level domain blocks, as Mastodon does: a user on A
 * hides B's domain; a Follow from B is refused with a Reject (B's side ends rejected), A keeps no
 * follow and no request, and the refusal is a fact in A's outbox. The same Follow after the
 * domain block is lifted is accepted.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, relationshipOf } from '../helpers/auth.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';

let a: TestRoost;
let b: TestRoost;
beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

describe('an inbound Follow from a domain the target hides', () => {
  it('is refused with a Reject, leaving nothing on the target side', async () => {
    const ada = await createTestUser(a, 'db_ada');
    const bea = await createTestUser(b, 'db_bea');
    expect((await ada.api('/api/v1/domain_blocks', { body: { domain: b.config.domain } })).status).toBe(200);
    const adaOnB = (await lookupRemoteAccount(b.services, b.federation, `@db_ada@${a.config.domain}`))!;

    expect((await bea.api(`/api/v1/accounts/${adaOnB.id}/follow`, { method: 'POST' })).body.requested).toBe(true);
    await eventually(
      async () => (await b.services.db.sql.query<{ state: string }>(`select state from follows where target_account_id = $1`, [adaOnB.id]))[0]?.state === 'rejected',
      20_000,
      'the Reject on B',
    );
    await settled(a, b);
    expect(await a.services.db.sql.query(`select 1 from follows where target_account_id = $1`, [ada.account.id])).toEqual([]);
    const refused = await a.services.db.sql.query<{ actor_kind: string; actor_id: string; origin: string }>(
      `select actor_kind, actor_id::text, origin from outbox_events where type = 'follow.refused'`,
    );
    expect(refused).toEqual([{ actor_kind: 'account', actor_id: ada.account.id, origin: 'federation' }]);
    expect((await relationshipOf(bea, adaOnB.id)).requested).toBe(false);

    // Lifted: the next Follow is accepted.
    expect((await ada.api(`/api/v1/domain_blocks?domain=${encodeURIComponent(b.config.domain)}`, { method: 'DELETE' })).status).toBe(200);
    await bea.api(`/api/v1/accounts/${adaOnB.id}/follow`, { method: 'POST' });
    await eventually(async () => (await relationshipOf(bea, adaOnB.id))?.following === true, 20_000, 'the Accept on B');
  });
});
