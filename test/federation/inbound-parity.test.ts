/**
 * Inbound details read as Mastodon reads them, delivered by a fake GoToSocial server over real
 * HTTP with real signatures: an attachment's alt text from `summary` (then `name`); a remote
 * multiple-choice poll without `votersCount` has voters_count null; one Create carrying an array
 * of vote Notes counts each; a reply whose parent is deleted replies to nothing (in_reply_to_id
 * null, in_reply_to_account_id kept), whether the parent was remote or local.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { startFakeSoftware, type FakeSoftware } from '../helpers/fake-software.ts';
import type { Placeholders } from '../fixtures/activitypub/load.ts';

let roost: TestRoost;
let alice: TestUser;
let gts: FakeSoftware;
let values: Placeholders;
let gwen: string;

beforeAll(async () => {
  [roost, gts] = await Promise.all([startTestRoost(), startFakeSoftware('gotosocial')]);
  alice = await createTestUser(roost, 'alice');
  values = {
    local: roost.url,
    local_host: new URL(roost.url).host,
    local_actor: roost.at('/users/alice'),
    local_actor_id: alice.account.id,
    local_note: roost.at('/nothing'),
    local_poll: roost.at('/nothing'),
    now: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    later: new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z'),
  };
  gwen = gts.fixture('actor', values).id as string;
  // gwen follows alice, so her posts concern this server.
  expect((await gts.deliver(roost.at('/users/alice/inbox'), 'follow', values)).status).toBe(202);
  await eventually(async () => (await roost.services.db.sql.query(`select 1 from follows f join accounts a on a.id = f.account_id where a.uri = $1 and f.state = 'accepted'`, [gwen])).length > 0, 20_000, 'the follow');
}, 120_000);
afterAll(async () => {
  await Promise.all([roost?.close(), gts?.close()]);
});

const statusIdOf = async (uri: string) =>
  (await roost.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1 and deleted_at is null`, [uri]))[0]?.id ?? null;

/** GoToSocial's Create(Note) fixture with its Note's id made `id` and `edit` applied to the Note. */
function createNote(id: string, edit: (note: Record<string, any>) => void): Record<string, any> {
  const c = gts.fixture('create-note', values);
  const uri = `${gwen.replace(/\/users\/gwen$/, '')}/users/gwen/statuses/${id}`;
  c.id = `${uri}/activity#Create`;
  c.object.id = uri;
  c.object.url = uri;
  delete c.object.replies;
  edit(c.object);
  return c;
}
async function deliver(activity: Record<string, unknown>) {
  const res = await gts.deliverText(roost.at('/users/alice/inbox'), JSON.stringify(activity));
  expect(res.status, await res.clone().text()).toBe(202);
}

describe('inbound, as Mastodon reads it', () => {
  it("an attachment's alt text is its `summary`, else its `name`", async () => {
    const withSummary = createNote('01HZALT0000000000000000001', (n) => {
      n.attachment[0].summary = 'A cat asleep on a keyboard';
      delete n.attachment[0].name;
    });
    const both = createNote('01HZALT0000000000000000002', (n) => {
      n.attachment[0].summary = 'From summary';
      n.attachment[0].name = 'From name';
      n.attachment[0].url = n.attachment[0].url.replace('01HZCAT', '01HZCAT2');
    });
    const nameOnly = createNote('01HZALT0000000000000000003', (n) => {
      n.attachment[0].summary = '  ';
      n.attachment[0].url = n.attachment[0].url.replace('01HZCAT', '01HZCAT3');
    });
    for (const c of [withSummary, both, nameOnly]) await deliver(c);
    const alts = [];
    for (const c of [withSummary, both, nameOnly]) {
      const id = await eventually(() => statusIdOf(c.object.id), 20_000, c.object.id);
      const r = await alice.api(`/api/v1/statuses/${id}`);
      alts.push(r.body.media_attachments.map((m: { description: string | null }) => m.description));
    }
    expect(alts).toEqual([['A cat asleep on a keyboard'], ['From summary'], ['A cat on a keyboard']]);
  });

  it('a multiple-choice poll without votersCount shows voters_count null; with it, the number', async () => {
    const q = gts.fixture('question', values);
    delete q.object.votersCount;
    await deliver(q);
    const id = await eventually(() => statusIdOf(q.object.id), 20_000, 'the question');
    const r = await alice.api(`/api/v1/statuses/${id}`);
    expect(r.body.poll).toMatchObject({ multiple: true, votes_count: 3, voters_count: null });
    // A tally Update that says it: the number.
    const update = { ...q, type: 'Update', id: `${q.object.id}#updates/1`, object: { ...q.object, votersCount: 2 } };
    await deliver(update);
    await eventually(async () => (await alice.api(`/api/v1/statuses/${id}`)).body.poll.voters_count === 2, 20_000, 'the tally');
  });

  it("one Create carrying an array of vote Notes counts each choice (GoToSocial's multiple-choice vote)", async () => {
    const p = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'Pick any', poll: { options: ['Red', 'Green', 'Blue'], expires_in: 86_400, multiple: true } } });
    expect(p.status).toBe(200);
    const vote = gts.fixture('vote', { ...values, local_poll: p.body.uri });
    const note = (name: string, n: number) => ({ ...vote.object, id: `${vote.object.id}${n}`, name });
    vote.object = [note('Red', 1), note('Blue', 2)];
    await deliver(vote);
    await eventually(async () => (await alice.api(`/api/v1/polls/${p.body.poll.id}`)).body.votes_count === 2, 20_000, 'both votes');
    await settled(roost);
    const r = await alice.api(`/api/v1/polls/${p.body.poll.id}`);
    expect(r.body).toMatchObject({ votes_count: 2, voters_count: 1, options: [{ title: 'Red', votes_count: 1 }, { title: 'Green', votes_count: 0 }, { title: 'Blue', votes_count: 1 }] });
  });

  it('a reply whose parent is deleted replies to nothing: in_reply_to_id null, in_reply_to_account_id kept', async () => {
    // A remote parent (gwen's) and alice's reply to it; gwen deletes the parent.
    const parent = createNote('01HZPARENT0000000000000001', () => {});
    await deliver(parent);
    const parentId = await eventually(() => statusIdOf(parent.object.id), 20_000, 'the parent');
    const gwenId = (await alice.api(`/api/v1/statuses/${parentId}`)).body.account.id as string;
    const reply = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: '@gwen indeed', in_reply_to_id: parentId } });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ in_reply_to_id: parentId, in_reply_to_account_id: gwenId });
    // gwen's own reply to her parent, too.
    const own = createNote('01HZPARENT0000000000000002', (n) => (n.inReplyTo = parent.object.id));
    await deliver(own);
    const ownId = await eventually(() => statusIdOf(own.object.id), 20_000, "gwen's reply");
    expect((await alice.api(`/api/v1/statuses/${ownId}`)).body.in_reply_to_id).toBe(parentId);
    const del = gts.fixture('delete', values);
    del.id = `${parent.object.id}#Delete`;
    del.object = parent.object.id;
    await deliver(del);
    await eventually(async () => (await statusIdOf(parent.object.id)) === null, 20_000, 'the deletion');
    await settled(roost);
    expect((await alice.api(`/api/v1/statuses/${reply.body.id}`)).body).toMatchObject({ in_reply_to_id: null, in_reply_to_account_id: gwenId });
    expect((await alice.api(`/api/v1/statuses/${ownId}`)).body).toMatchObject({ in_reply_to_id: null, in_reply_to_account_id: gwenId });
    // A local parent deleted: the same.
    const mine = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'soon gone' } });
    const answer = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'a reply', in_reply_to_id: mine.body.id } });
    expect((await alice.api(`/api/v1/statuses/${mine.body.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await alice.api(`/api/v1/statuses/${answer.body.id}`)).body).toMatchObject({ in_reply_to_id: null, in_reply_to_account_id: alice.account.id });
  });

  it('a remote status written in the past gets its id from `published`, as Mastodon: it sorts where it was written', async () => {
    const local = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'written now' } });
    expect(local.status).toBe(200);
    const published = new Date(Date.now() - 3 * 86_400_000);
    published.setUTCMilliseconds(0);
    const old = createNote('01HZBACKDATED0000000000001', (n) => (n.published = published.toISOString()));
    await deliver(old);
    const oldId = await eventually(() => statusIdOf(old.object.id), 20_000, 'the backdated note');
    // The id's time is the published time (Mastodon::Snowflake.id_at), not the arrival.
    expect(Number(BigInt(oldId) >> 16n)).toBe(published.getTime());
    expect(BigInt(oldId) < BigInt(local.body.id as string)).toBe(true);
    expect((await alice.api(`/api/v1/statuses/${oldId}`)).body.created_at).toBe(published.toISOString());
    // One published in the future (a skewed clock) gets an id from now.
    const future = createNote('01HZBACKDATED0000000000002', (n) => (n.published = new Date(Date.now() + 86_400_000).toISOString()));
    const before = BigInt(Date.now() - 1000) << 16n;
    await deliver(future);
    const futureId = await eventually(() => statusIdOf(future.object.id), 20_000, 'the future note');
    expect(BigInt(futureId) > before && BigInt(futureId) < BigInt(Date.now() + 1000) << 16n).toBe(true);
  });
});
