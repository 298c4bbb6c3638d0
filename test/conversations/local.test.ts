/**
 * Direct-message conversations between local users, through the real server: one per participant
 * set and thread, unread on receipt and not for the author, read, removed for one user only and
 * brought back by the next reply, last_status moving back when the last status is deleted, the
 * viewer's flags on last_status, pagination by last status, and a fixed statement count per page.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

beforeAll(async () => {
  roost = await startTestRoost();
  [alice, bob, carol] = [await createTestUser(roost, 'alice'), await createTestUser(roost, 'bob'), await createTestUser(roost, 'carol')];
}, 60_000);
afterAll(async () => roost?.close());

/**
 * The statements of a page request, leaving out the viewer lookup: it is cached for a few seconds
 * (reads/viewer.ts), which a loaded machine may outlast between two captures.
 */
async function pageStatements(fn: () => Promise<unknown>): Promise<string[]> {
  const all = await capturedStatements(roost, fn, 100_000);
  return all.filter((s) => !/ from oauth_access_tokens /.test(s)).map((s) => s.slice(0, 60));
}

async function post(u: TestUser, body: Record<string, unknown>): Promise<{ id: string }> {
  const r = await u.api('/api/v1/statuses', { method: 'POST', body: { visibility: 'direct', ...body } });
  expect(r.status).toBe(200);
  return r.body;
}

interface Conv {
  id: string;
  unread: boolean;
  accounts: { id: string; acct: string }[];
  last_status: { id: string; visibility: string; favourited: boolean; bookmarked: boolean; account: { id: string } } | null;
}

async function conversations(u: TestUser, query = ''): Promise<Conv[]> {
  await settled(roost);
  const r = await u.api(`/api/v1/conversations${query}`);
  expect(r.status).toBe(200);
  return r.body;
}

/** What a test compares: id, unread, the participants' accts and the last status id. */
const brief = (c: Conv) => ({ id: c.id, unread: c.unread, accounts: c.accounts.map((a) => a.acct), last: c.last_status?.id ?? null });

describe('conversations between local users', () => {
  let dm: { id: string };
  let aliceConv: Conv;
  let bobConv: Conv;

  it('a direct status makes one unread conversation for the recipient, a read one for the author', async () => {
    dm = await post(alice, { status: '@bob are you there?' });
    [bobConv] = await conversations(bob);
    [aliceConv] = await conversations(alice);
    expect(Object.keys(bobConv!).sort()).toEqual(['accounts', 'id', 'last_status', 'unread']);
    expect(bobConv!.id).toMatch(/^\d+$/);
    expect(brief(bobConv!)).toEqual({ id: bobConv!.id, unread: true, accounts: ['alice'], last: dm.id });
    expect(bobConv!.accounts[0]!.id).toBe(alice.account.id);
    expect(bobConv!.last_status).toMatchObject({ id: dm.id, visibility: 'direct', account: { id: alice.account.id }, favourited: false });
    expect(brief(aliceConv!)).toEqual({ id: aliceConv!.id, unread: false, accounts: ['bob'], last: dm.id });
    expect(aliceConv!.id).not.toBe(bobConv!.id);
    // Carol, neither author nor mentioned, has none.
    expect(await conversations(carol)).toEqual([]);
  });

  it('POST …/read marks it read and answers the conversation; last_status carries the viewer flags', async () => {
    expect((await bob.api(`/api/v1/statuses/${dm.id}/favourite`, { method: 'POST' })).status).toBe(200);
    const r = await bob.api(`/api/v1/conversations/${bobConv.id}/read`, { method: 'POST' });
    expect(r.status).toBe(200);
    expect(brief(r.body)).toEqual({ id: bobConv.id, unread: false, accounts: ['alice'], last: dm.id });
    expect(r.body.last_status.favourited).toBe(true);
    expect(brief((await conversations(bob))[0]!)).toEqual({ id: bobConv.id, unread: false, accounts: ['alice'], last: dm.id });
    // Not bob's: a 404 for alice, as an id of nothing.
    for (const [method, path] of [['POST', `/api/v1/conversations/${bobConv.id}/read`], ['DELETE', `/api/v1/conversations/${bobConv.id}`], ['POST', '/api/v1/conversations/123456/read']]) {
      const other = await alice.api(path!, { method });
      expect([other.status, other.body]).toEqual([404, { error: 'Record not found' }]);
    }
  });

  it('POST …/unread marks it unread again (Mastodon 4.2) and answers the conversation; not for others', async () => {
    const r = await bob.api(`/api/v1/conversations/${bobConv.id}/unread`, { method: 'POST' });
    expect(r.status).toBe(200);
    expect(brief(r.body)).toEqual({ id: bobConv.id, unread: true, accounts: ['alice'], last: dm.id });
    expect(brief((await conversations(bob))[0]!)).toEqual({ id: bobConv.id, unread: true, accounts: ['alice'], last: dm.id });
    const other = await alice.api(`/api/v1/conversations/${bobConv.id}/unread`, { method: 'POST' });
    expect([other.status, other.body]).toEqual([404, { error: 'Record not found' }]);
    // Alice's own stays read.
    expect(brief((await conversations(alice))[0]!)).toEqual({ id: aliceConv.id, unread: false, accounts: ['bob'], last: dm.id });
    expect(brief((await bob.api(`/api/v1/conversations/${bobConv.id}/read`, { method: 'POST' })).body).unread).toBe(false);
  });

  let reply: { id: string };
  it("a reply joins the same conversation: unread for the other side, not for its author", async () => {
    reply = await post(bob, { status: '@alice yes', in_reply_to_id: dm.id });
    expect((await conversations(alice)).map(brief)).toEqual([{ id: aliceConv.id, unread: true, accounts: ['bob'], last: reply.id }]);
    expect((await conversations(bob)).map(brief)).toEqual([{ id: bobConv.id, unread: false, accounts: ['alice'], last: reply.id }]);
  });

  it('a deleted last status moves last_status back to the one before', async () => {
    const second = await post(bob, { status: '@alice oops', in_reply_to_id: reply.id });
    expect((await conversations(alice)).map(brief)[0]!.last).toBe(second.id);
    expect((await bob.api(`/api/v1/statuses/${second.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await conversations(alice)).map(brief)).toEqual([{ id: aliceConv.id, unread: true, accounts: ['bob'], last: reply.id }]);
    expect((await conversations(bob)).map(brief)).toEqual([{ id: bobConv.id, unread: false, accounts: ['alice'], last: reply.id }]);
    const [row] = await roost.services.db.sql.query<{ status_ids: string[] }>(`select status_ids::text[] from account_conversations where id = $1`, [aliceConv.id]);
    expect(row!.status_ids).toEqual([dm.id, reply.id]);
  });

  it('DELETE hides it for that user only; the next reply brings it back, unread', async () => {
    const r = await alice.api(`/api/v1/conversations/${aliceConv.id}`, { method: 'DELETE' });
    expect([r.status, r.body]).toEqual([200, {}]);
    expect(await conversations(alice)).toEqual([]);
    expect((await conversations(bob)).map(brief)).toEqual([{ id: bobConv.id, unread: false, accounts: ['alice'], last: reply.id }]);
    // The statuses stay.
    expect((await alice.api(`/api/v1/statuses/${reply.id}`)).status).toBe(200);
    const again = await post(bob, { status: '@alice still there?', in_reply_to_id: reply.id });
    const back = await conversations(alice);
    expect(back.map((c) => ({ ...brief(c), id: undefined }))).toEqual([{ id: undefined, unread: true, accounts: ['bob'], last: again.id }]);
    expect(back[0]!.id).not.toBe(aliceConv.id);
    aliceConv = back[0]!;
    // A deleted status that was the only one left removes the conversation.
    expect((await bob.api(`/api/v1/statuses/${again.id}`, { method: 'DELETE' })).status).toBe(200);
    expect(await conversations(alice)).toEqual([]);
    expect((await conversations(bob)).map(brief)).toEqual([{ id: bobConv.id, unread: false, accounts: ['alice'], last: reply.id }]);
  });

  it('another participant set is another conversation; a note to oneself shows oneself; newest first', async () => {
    const group = await post(alice, { status: '@bob @carol both of you' });
    const self = await post(alice, { status: 'note to self' });
    const list = await conversations(alice);
    expect(list.map(brief).map((c) => ({ ...c, id: undefined }))).toEqual([
      { id: undefined, unread: false, accounts: ['alice'], last: self.id },
      { id: undefined, unread: false, accounts: ['bob', 'carol'], last: group.id },
    ]);
    expect((await conversations(carol)).map(brief).map((c) => ({ ...c, id: undefined }))).toEqual([
      { id: undefined, unread: true, accounts: ['alice', 'bob'], last: group.id },
    ]);
    expect((await conversations(bob)).map((c) => c.last_status!.id)).toEqual([group.id, reply.id]);
  });

  it('a recipient who blocks or mutes the author gets no conversation', async () => {
    const dave = await createTestUser(roost, 'dave');
    const erin = await createTestUser(roost, 'erin');
    expect((await dave.api(`/api/v1/accounts/${alice.account.id}/block`, { method: 'POST' })).status).toBe(200);
    expect((await erin.api(`/api/v1/accounts/${alice.account.id}/mute`, { method: 'POST' })).status).toBe(200);
    const s = await post(alice, { status: '@dave @erin hello' });
    expect(await conversations(dave)).toEqual([]);
    expect(await conversations(erin)).toEqual([]);
    expect((await conversations(alice)).map(brief)[0]).toMatchObject({ accounts: ['dave', 'erin'], last: s.id });
  });

  it('pages by last status with Link headers, 20 by default, 40 at most', async () => {
    const all = await conversations(alice);
    expect(all.length).toBe(3);
    const first = await alice.api('/api/v1/conversations?limit=2');
    expect(first.body.map((c: Conv) => c.id)).toEqual(all.slice(0, 2).map((c) => c.id));
    const link = first.headers.get('link')!;
    const lastIds = all.map((c) => c.last_status!.id);
    expect(link).toBe(
      `<${roost.at(`/api/v1/conversations?limit=2&max_id=${lastIds[1]}`)}>; rel="next", <${roost.at(`/api/v1/conversations?limit=2&min_id=${lastIds[0]}`)}>; rel="prev"`,
    );
    const next = await alice.api(`/api/v1/conversations?limit=2&max_id=${lastIds[1]}`);
    expect(next.body.map((c: Conv) => c.id)).toEqual([all[2]!.id]);
    const prev = await alice.api(`/api/v1/conversations?limit=2&min_id=${lastIds[2]}`);
    expect(prev.body.map((c: Conv) => c.id)).toEqual([all[0]!.id, all[1]!.id]);
    expect((await alice.api('/api/v1/conversations?limit=400')).body.length).toBe(3);
  });
});

describe('a page of conversations costs a fixed number of statements', () => {
  it('2 and 8 conversations alike', async () => {
    const reader = await createTestUser(roost, 'reader');
    const writers: TestUser[] = [];
    for (let i = 0; i < 8; i++) writers.push(await createTestUser(roost, `writer${i}`));
    for (const [i, w] of writers.entries()) {
      const s = await post(w, { status: `@reader @alice number ${i} #t${i}` });
      if (i % 2 === 0) expect((await reader.api(`/api/v1/statuses/${s.id}/bookmark`, { method: 'POST' })).status).toBe(200);
    }
    await settled(roost);
    await reader.api('/api/v1/conversations?limit=1');
    let two: Conv[] = [];
    let eight: Conv[] = [];
    const q2 = await pageStatements(async () => (two = (await reader.api('/api/v1/conversations?limit=2')).body));
    const q8 = await pageStatements(async () => (eight = (await reader.api('/api/v1/conversations?limit=8')).body));
    expect([two.length, eight.length]).toEqual([2, 8]);
    expect(eight.map((c) => c.accounts.map((a) => a.acct))).toEqual(writers.map((w) => ['alice', w.account.username]).reverse());
    expect(eight.filter((c) => c.last_status!.bookmarked).length).toBe(4);
    expect(q8).toEqual(q2);
    // The page, the participants, then the status view (statuses with their mentions, tags, media,
    // the viewer's flags and polls; authors).
    expect(q2.length).toBe(4);
  });
});
