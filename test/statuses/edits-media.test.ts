/**
 * Editing the media and the poll of a status through the real server (PUT /api/v1/statuses/:id,
 * Mastodon 4.x): attachments added, removed and reordered, their descriptions and focus through
 * `media_attributes[]`, each version in /history with its media (descriptions as they were) and
 * poll options; a poll whose structure changes is a new poll (votes gone), the same poll keeps its
 * votes; and the refusals (another's media, media of another status, too many, media with a poll),
 * each Mastodon's error with every row as it was.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import sharp from 'sharp';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
beforeAll(async () => {
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
}, 60_000);
afterAll(async () => roost?.close());

const sql = () => roost.services.db.sql;
const post = (u: TestUser, body: Record<string, unknown>) => u.api('/api/v1/statuses', { method: 'POST', body });
const edit = (u: TestUser, id: string, body: unknown) => u.api(`/api/v1/statuses/${id}`, { method: 'PUT', body });
const history = async (id: string) => (await apiRequest(roost, `/api/v1/statuses/${id}/history`)).body;

async function upload(u: TestUser, description: string, color: { r: number; g: number; b: number }): Promise<{ id: string; url: string }> {
  const png = await sharp({ create: { width: 8, height: 6, channels: 3, background: color } }).png().toBuffer();
  const f = new FormData();
  f.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'x.png');
  f.append('description', description);
  const res = await u.api('/api/v1/media', { method: 'POST', body: f });
  expect(res.status).toBe(200);
  return res.body;
}

/** Everything an edit may write about a status, to check a refused one wrote nothing. */
async function rowsOf(id: string) {
  const q = (text: string) => sql().query(text, [id]);
  return {
    status: await q(`select text, content, edited_at from statuses where id = $1`),
    edits: await q(`select id::text from status_edits where status_id = $1 order by id`),
    media: await q(`select id::text, position, description, focus_x, focus_y from media_attachments where status_id = $1 order by position`),
    polls: await q(`select id::text, options, votes_count from polls where status_id = $1`),
    events: await q(`select id::text from outbox_events where actor_id = $1 order by id`),
  };
}

describe('editing the media of a status', () => {
  it('adds, reorders, describes and removes attachments; /history shows each version with its media', async () => {
    const red = await upload(alice, 'red', { r: 255, g: 0, b: 0 });
    const green = await upload(alice, 'green', { r: 0, g: 255, b: 0 });
    const blue = await upload(alice, 'blue', { r: 0, g: 0, b: 255 });
    const s = (await post(alice, { status: 'pictures', media_ids: [red.id, green.id] })).body;
    expect(s.media_attachments.map((m: { id: string }) => m.id)).toEqual([red.id, green.id]);

    // Reorder, add blue, describe green anew, set red's focus; the text may go (media stay).
    const e1 = await edit(alice, s.id, {
      status: '',
      media_ids: [green.id, red.id, blue.id],
      media_attributes: [
        { id: green.id, description: 'green, described again' },
        { id: red.id, focus: '0.5,-0.5' },
        { id: '999', description: 'not in media_ids: ignored' },
      ],
    });
    expect(e1.status).toBe(200);
    expect(e1.body.content).toBe('');
    expect(e1.body.media_attachments.map((m: { id: string; description: string }) => [m.id, m.description])).toEqual([
      [green.id, 'green, described again'],
      [red.id, 'red'],
      [blue.id, 'blue'],
    ]);
    expect(e1.body.media_attachments[1].meta.focus).toEqual({ x: 0.5, y: -0.5 });

    // Only a description changes: significant (a new version).
    const e2 = await edit(alice, s.id, { status: '', media_ids: [green.id, red.id, blue.id], media_attributes: [{ id: blue.id, description: 'navy' }] });
    expect(e2.body.media_attachments.map((m: { description: string }) => m.description)).toEqual(['green, described again', 'red', 'navy']);
    // The same again: nothing written.
    const before = await rowsOf(s.id);
    const same = await edit(alice, s.id, { status: '', media_ids: [green.id, red.id, blue.id], media_attributes: [{ id: blue.id, description: 'navy' }] });
    expect([same.status, same.body.edited_at]).toEqual([200, e2.body.edited_at]);
    expect(await rowsOf(s.id)).toEqual(before);

    // Remove red and green: they let go of the status (alice may post them again).
    const e3 = await edit(alice, s.id, { status: 'only blue', media_ids: [blue.id] });
    expect(e3.body.media_attachments.map((m: { id: string }) => m.id)).toEqual([blue.id]);
    expect(await sql().query(`select id::text, status_id::text from media_attachments where id = any($1::bigint[]) order by id`, [[red.id, green.id]])).toEqual(
      [{ id: red.id, status_id: null }, { id: green.id, status_id: null }].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1)),
    );

    const versions = await history(s.id);
    const shown = versions.map((v: { content: string; media_attachments: { id: string; description: string; url: string }[] }) => [
      v.content,
      v.media_attachments.map((m) => `${m.id}:${m.description}`),
    ]);
    expect(shown).toEqual([
      ['<p>pictures</p>', [`${red.id}:red`, `${green.id}:green`]],
      ['', [`${green.id}:green, described again`, `${red.id}:red`, `${blue.id}:blue`]],
      ['', [`${green.id}:green, described again`, `${red.id}:red`, `${blue.id}:navy`]],
      ['<p>only blue</p>', [`${blue.id}:navy`]],
    ]);
    // Each attachment of a version is the full entity (its file, its type).
    expect(versions[0].media_attachments[0]).toMatchObject({ id: red.id, type: 'image', url: red.url, blurhash: expect.any(String) });
    const stored = await sql().query<{ ids: string[]; descriptions: string[] }>(
      `select ordered_media_attachment_ids::text[] as ids, media_descriptions as descriptions from status_edits where status_id = $1 order by id`,
      [s.id],
    );
    expect(stored.map((r) => r.ids)).toEqual([[red.id, green.id], [green.id, red.id, blue.id], [green.id, red.id, blue.id], [blue.id]]);

    // Posted again elsewhere (delete and redraft's way): allowed, they are free.
    const again = await post(alice, { status: 'again', media_ids: [red.id] });
    expect(again.status).toBe(200);
  });

  it("refuses another's media, another status's media, too many and media with a poll, writing nothing", async () => {
    const mine = await upload(alice, 'mine', { r: 1, g: 2, b: 3 });
    const elsewhere = await upload(alice, 'elsewhere', { r: 3, g: 2, b: 1 });
    const bobs = await upload(bob, 'bobs', { r: 9, g: 9, b: 9 });
    await post(alice, { status: 'has it', media_ids: [elsewhere.id] });
    const s = (await post(alice, { status: 'with one', media_ids: [mine.id] })).body;
    const extra = await Promise.all([1, 2, 3, 4].map((i) => upload(alice, `x${i}`, { r: i, g: i, b: i })));
    const before = await rowsOf(s.id);
    const cases: [Record<string, unknown>, number, unknown][] = [
      [{ status: 'x', media_ids: [mine.id, bobs.id] }, 422, { error: `Media ${bobs.id} not found or already attached to another post` }],
      [{ status: 'x', media_ids: [elsewhere.id] }, 422, { error: `Media ${elsewhere.id} not found or already attached to another post` }],
      [{ status: 'x', media_ids: [mine.id, ...extra.map((m) => m.id)] }, 422, { error: 'Cannot attach more than 4 files' }],
      [{ status: 'x', media_ids: [mine.id], poll: { options: ['a', 'b'], expires_in: 600 } }, 422, { error: 'Cannot attach more than 4 files' }],
      [
        { status: 'x', media_ids: [mine.id], media_attributes: [{ id: mine.id, description: 'd'.repeat(1501) }] }, 422,
        { error: 'Validation failed: Description is too long (maximum is 1500 characters)', details: { description: [{ error: 'ERR_TOO_LONG', description: 'is too long (maximum is 1500 characters)' }] } },
      ],
      [
        { status: 'x', media_ids: [mine.id], media_attributes: [{ id: mine.id, focus: '2,0' }] }, 422,
        { error: 'Validation failed: Focus must be two numbers from -1.0 to 1.0, "x,y"', details: { focus: [{ error: 'ERR_INVALID', description: 'must be two numbers from -1.0 to 1.0, "x,y"' }] } },
      ],
      // Without media, the text is required again.
      [{ status: '', media_ids: [] }, 422, { error: "Validation failed: Text can't be blank", details: { text: [{ error: 'ERR_BLANK', description: "can't be blank" }] } }],
    ];
    for (const [body, status, answer] of cases) {
      const res = await edit(alice, s.id, body);
      expect([body, res.status, res.body]).toEqual([body, status, answer]);
    }
    expect(await rowsOf(s.id)).toEqual(before);
    // Bob may not touch alice's status at all.
    expect((await edit(bob, s.id, { status: 'x', media_ids: [bobs.id] })).status).toBe(404);
    expect(await rowsOf(s.id)).toEqual(before);
  });

  it('takes media_ids[] and media_attributes[][…] form-encoded, as Mastodon clients send them', async () => {
    const one = await upload(alice, 'one', { r: 10, g: 20, b: 30 });
    const two = await upload(alice, 'two', { r: 30, g: 20, b: 10 });
    const s = (await post(alice, { status: 'form', media_ids: [one.id] })).body;
    const body = new URLSearchParams([
      ['status', 'form edited'],
      ['media_ids[]', two.id],
      ['media_ids[]', one.id],
      ['media_attributes[][id]', two.id],
      ['media_attributes[][description]', 'second first'],
    ]);
    const res = await edit(alice, s.id, body);
    expect(res.status).toBe(200);
    expect(res.body.media_attachments.map((m: { id: string; description: string }) => [m.id, m.description])).toEqual([
      [two.id, 'second first'],
      [one.id, 'one'],
    ]);
  });
});

describe('editing the poll of a status', () => {
  const vote = (u: TestUser, pollId: string, choices: number[]) => u.api(`/api/v1/polls/${pollId}/votes`, { method: 'POST', body: { choices } });

  it('keeps the poll and its votes when it is the same; replaces it (votes gone) when its options change; history has each version', async () => {
    const s = (await post(alice, { status: 'vote!', poll: { options: ['tea', 'coffee'], expires_in: 3600 } })).body;
    const firstPoll = s.poll;
    expect((await vote(bob, firstPoll.id, [0])).status).toBe(200);

    // The same poll sent again with a new text: kept, with its vote.
    const e1 = await edit(alice, s.id, { status: 'vote now!', poll: { options: ['tea', 'coffee'], expires_in: 3600 } });
    expect(e1.status).toBe(200);
    expect([e1.body.poll.id, e1.body.poll.votes_count, e1.body.poll.expires_at]).toEqual([firstPoll.id, 1, firstPoll.expires_at]);

    // New options: a new poll; the old one and its votes are gone.
    const e2 = await edit(alice, s.id, { status: 'vote now!', poll: { options: ['tea', 'coffee', 'water'], expires_in: 7200, multiple: true } });
    expect(e2.status).toBe(200);
    expect(e2.body.poll).toMatchObject({ multiple: true, votes_count: 0, voters_count: 0, options: [{ title: 'tea' }, { title: 'coffee' }, { title: 'water' }] });
    expect(e2.body.poll.id).not.toBe(firstPoll.id);
    expect(await sql().query(`select 1 from polls where id = $1`, [firstPoll.id])).toEqual([]);
    expect(await sql().query(`select 1 from poll_votes where poll_id = $1`, [firstPoll.id])).toEqual([]);
    expect((await bob.api(`/api/v1/statuses/${s.id}`)).body.poll.voted).toBe(false);
    // The old poll's close timer went with it; the new one has its own.
    const timers = await sql().query<{ dedupe_key: string }>(`select dedupe_key from jobs where dedupe_key like 'poll.close:%' and state = 'pending' and dedupe_key in ($1, $2)`, [
      `poll.close:${firstPoll.id}`,
      `poll.close:${e2.body.poll.id}`,
    ]);
    expect(timers).toEqual([{ dedupe_key: `poll.close:${e2.body.poll.id}` }]);

    // No poll sent: the poll goes (a PUT replaces the status, as Mastodon's).
    const e3 = await edit(alice, s.id, { status: 'no more poll' });
    expect(e3.body.poll).toBeNull();
    expect(await sql().query(`select 1 from polls where status_id = $1`, [s.id])).toEqual([]);

    const versions = await history(s.id);
    expect(versions.map((v: { content: string; poll?: { options: { title: string }[] } }) => [v.content, v.poll?.options.map((o) => o.title) ?? null])).toEqual([
      ['<p>vote!</p>', ['tea', 'coffee']],
      ['<p>vote now!</p>', ['tea', 'coffee']],
      ['<p>vote now!</p>', ['tea', 'coffee', 'water']],
      ['<p>no more poll</p>', null],
    ]);
  });

  it('an edit that only changes hide_totals shows (or hides) the counts from then on, in the status and at /api/v1/polls/:id', async () => {
    const s = (await post(alice, { status: 'secret?', poll: { options: ['yes', 'no'], expires_in: 3600, hide_totals: true } })).body;
    expect((await vote(bob, s.poll.id, [1])).status).toBe(200);
    const counts = async () => {
      const [status, poll] = await Promise.all([bob.api(`/api/v1/statuses/${s.id}`), bob.api(`/api/v1/polls/${s.poll.id}`)]);
      return [status.body.poll.options.map((o: { votes_count: number | null }) => o.votes_count), poll.body.options.map((o: { votes_count: number | null }) => o.votes_count)];
    };
    expect(await counts()).toEqual([[null, null], [null, null]]);
    const shown = await edit(alice, s.id, { status: 'secret?', poll: { options: ['yes', 'no'], expires_in: 3600, hide_totals: false } });
    expect([shown.status, shown.body.poll.id]).toEqual([200, s.poll.id]);
    expect(await counts()).toEqual([[0, 1], [0, 1]]);
    await edit(alice, s.id, { status: 'secret?', poll: { options: ['yes', 'no'], expires_in: 3600, hide_totals: true } });
    expect(await counts()).toEqual([[null, null], [null, null]]);
  });

  it('refuses a bad poll in an edit with Mastodon errors, writing nothing', async () => {
    const s = (await post(alice, { status: 'poll', poll: { options: ['a', 'b'], expires_in: 3600 } })).body;
    const before = await rowsOf(s.id);
    const res = await edit(alice, s.id, { status: 'poll', poll: { options: ['a', 'a'], expires_in: 3600 } });
    expect([res.status, res.body]).toEqual([
      422,
      { error: 'Validation failed: Poll options contain duplicate items', details: { 'poll.options': [{ error: 'ERR_TAKEN', description: 'contain duplicate items' }] } },
    ]);
    const soon = await edit(alice, s.id, { status: 'poll', poll: { options: ['a', 'c'], expires_in: 5 } });
    expect([soon.status, soon.body.error]).toEqual([422, 'Validation failed: Poll expires at is too soon']);
    expect(await rowsOf(s.id)).toEqual(before);
  });
});
