/**
 * Direct messages with a remote account, between two real instances (real HTTP signatures): the
 * DM that arrives by federation opens an unread conversation on the receiving side, the remote
 * replies join the local author's conversation and flip it unread, read clears it, a remote Delete
 * moves last_status back, and a removed conversation comes back with the next remote reply.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { eventually, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import type { Account } from '../../src/db/entities/index.ts';

let a: TestRoost;
let b: TestRoost;
let alice: TestUser; // on A
let bob: TestUser; // on B
let bobOnA: Account;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
  [alice, bob] = await Promise.all([createTestUser(a, 'alice'), createTestUser(b, 'bob')]);
  bobOnA = (await lookupRemoteAccount(a.services, a.federation, b.at('/users/bob')))!;
  await lookupRemoteAccount(b.services, b.federation, a.at('/users/alice'));
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

interface Conv {
  id: string;
  unread: boolean;
  accounts: { id: string; acct: string }[];
  last_status: { id: string; uri: string; visibility: string; content: string } | null;
}

async function post(u: TestUser, body: Record<string, unknown>): Promise<{ id: string; uri: string }> {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body: { visibility: 'direct', ...body } });
  expect(r.status).toBe(200);
  return r.body;
}

async function conversations(u: TestUser, on: TestRoost): Promise<Conv[]> {
  await settled(on);
  const r = await u.api('/api/v1/conversations');
  expect(r.status).toBe(200);
  return r.body;
}

/** Waits until `u`'s newest conversation has `uri` as its last status (federation is asynchronous). */
async function newestIs(u: TestUser, on: TestRoost, uri: string): Promise<Conv> {
  return eventually(async () => {
    const [c] = await conversations(u, on);
    return c?.last_status?.uri === uri ? c : null;
  }, 20_000, `a conversation ending with ${uri}`);
}

async function statusIdOn(r: TestRoost, uri: string): Promise<string> {
  return eventually(async () => {
    const [row] = await r.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [uri]);
    return row?.id;
  }, 20_000, `${uri} on ${r.config.domain}`);
}

const brief = (c: Conv) => ({ id: c.id, unread: c.unread, accounts: c.accounts.map((x) => x.acct), uri: c.last_status?.uri ?? null });

describe('conversations with a remote account', () => {
  let dm: { id: string; uri: string };
  let aliceConv: Conv;
  let bobConv: Conv;
  let r1: { id: string; uri: string };

  it('a DM that arrives by federation opens an unread conversation; the author has it read', async () => {
    dm = await post(alice, { status: `@bob@${b.config.domain} hello from A` });
    bobConv = await newestIs(bob, b, dm.uri);
    expect(brief(bobConv)).toEqual({ id: bobConv.id, unread: true, accounts: [`alice@${a.config.domain}`], uri: dm.uri });
    expect(bobConv.last_status!.visibility).toBe('direct');
    [aliceConv] = await conversations(alice, a);
    expect(brief(aliceConv!)).toEqual({ id: aliceConv!.id, unread: false, accounts: [`bob@${b.config.domain}`], uri: dm.uri });
    expect(aliceConv!.accounts[0]!.id).toBe(bobOnA.id);
  });

  it("the remote reply joins the author's conversation and flips it unread; read clears it", async () => {
    const dmOnB = await statusIdOn(b, dm.uri);
    r1 = await post(bob, { status: `@alice@${a.config.domain} hello from B`, in_reply_to_id: dmOnB });
    const c = await newestIs(alice, a, r1.uri);
    expect(brief(c)).toEqual({ id: aliceConv.id, unread: true, accounts: [`bob@${b.config.domain}`], uri: r1.uri });
    // On B, the reply joins the conversation the DM opened, which its author has now read (as Mastodon).
    expect((await conversations(bob, b)).map(brief)).toEqual([{ id: bobConv.id, unread: false, accounts: [`alice@${a.config.domain}`], uri: r1.uri }]);
    const read = await alice.api(`/api/v1/conversations/${aliceConv.id}/read`, { method: 'POST' });
    expect([read.status, brief(read.body)]).toEqual([200, { id: aliceConv.id, unread: false, accounts: [`bob@${b.config.domain}`], uri: r1.uri }]);
  });

  it('a remote Delete moves last_status back to the reply before', async () => {
    const r2 = await post(bob, { status: `@alice@${a.config.domain} a second thought`, in_reply_to_id: r1.id });
    expect((await newestIs(alice, a, r2.uri)).unread).toBe(true);
    expect((await bob.api(`/api/v1/statuses/${r2.id}`, { method: 'DELETE' })).status).toBe(200);
    const c = await newestIs(alice, a, r1.uri);
    expect(brief(c)).toEqual({ id: aliceConv.id, unread: true, accounts: [`bob@${b.config.domain}`], uri: r1.uri });
  });

  it('removed on A only; the next remote reply brings it back, unread', async () => {
    expect((await alice.api(`/api/v1/conversations/${aliceConv.id}`, { method: 'DELETE' })).status).toBe(200);
    expect(await conversations(alice, a)).toEqual([]);
    expect((await conversations(bob, b)).map((c) => c.id)).toEqual([bobConv.id]);
    const r3 = await post(bob, { status: `@alice@${a.config.domain} knock knock`, in_reply_to_id: r1.id });
    const back = await newestIs(alice, a, r3.uri);
    expect(back.id).not.toBe(aliceConv.id);
    expect(brief(back)).toEqual({ id: back.id, unread: true, accounts: [`bob@${b.config.domain}`], uri: r3.uri });
    // The reply is in the DM's thread on A.
    const [row] = await a.services.db.sql.query<{ same: boolean }>(
      `select r.conversation_id = d.conversation_id as same from statuses r, statuses d where r.uri = $1 and d.id = $2`,
      [r3.uri, dm.id],
    );
    expect(row!.same).toBe(true);
  });
});
