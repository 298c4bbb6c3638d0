/**
 * Scheduled statuses through the real server, on an instance whose clock the test drives:
 * scheduled with media or a poll (POST /api/v1/statuses with scheduled_at), listed, read, moved,
 * cancelled; refused as Mastodon refuses (too soon, limits, a bad time) with nothing written;
 * published at their time by the timer, with their media and poll, into the author's statuses and
 * the followers' home; a moved time's old timer publishing nothing; a timer delivered twice
 * publishing once; a publication that cannot be made ending `failed`.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import sharp from 'sharp';
import { capturedStatements, eventually, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';
import { createManualClock } from '../../src/lib/clock.ts';
import { publishScheduledStatus } from '../../src/services/scheduled-statuses.ts';

const T0 = new Date('2026-03-01T12:00:00.000Z');
const clock = createManualClock(T0);
const MIN = 60_000;
const HOUR = 60 * MIN;
let roost: TestRoost;
let author: TestUser;
let follower: TestUser;
let other: TestUser;

beforeAll(async () => {
  roost = await startTestRoost({}, { clock });
  author = await createTestUser(roost, 'planner');
  follower = await createTestUser(roost, 'reader');
  other = await createTestUser(roost, 'stranger');
  expect((await follower.api(`/api/v1/accounts/${author.account.id}/follow`, { method: 'POST' })).status).toBe(200);
});
afterAll(async () => roost?.close());

const iso = (ms: number) => new Date(ms).toISOString();
const sql = () => roost.services.db.sql;
const count = async (table: string, where = 'true') => (await sql().query<{ n: number }>(`select count(*)::int as n from ${table} where ${where}`))[0]!.n;

async function upload(who: TestUser, description: string): Promise<string> {
  const form = new FormData();
  const png = await sharp({ create: { width: 12, height: 8, channels: 3, background: { r: 200, g: 40, b: 90 } } }).png().toBuffer();
  form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'p.png');
  form.append('description', description);
  const res = await who.api('/api/v1/media', { method: 'POST', body: form });
  expect(res.status).toBe(200);
  return res.body.id;
}

async function schedule(who: TestUser, body: Record<string, unknown>) {
  return who.api('/api/v1/statuses', { method: 'POST', body });
}

/** The pending publish timers of a scheduled status. */
async function timers(id: string) {
  const rows = await sql().query<{ run_at: Date; payload: Record<string, unknown> }>(
    `select run_at, payload from jobs where kind = 'timer' and state = 'pending' and dedupe_key = $1`,
    [`scheduled_status.publish:${id}`],
  );
  return rows.map((r) => [new Date(r.run_at).toISOString(), r.payload]);
}

async function reserved(mediaId: string): Promise<string | null> {
  const [row] = await sql().query<{ s: string | null }>(`select scheduled_status_id::text as s from media_attachments where id = $1`, [mediaId]);
  return row!.s;
}

describe('scheduling', () => {
  it("params.application_id is a JSON integer of the app's exact id, as Mastodon sends it", async () => {
    const app = await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Planner', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' } });
    const [row] = await sql().query<{ id: string }>(`select id::text from oauth_applications where client_id = $1`, [app.body.client_id]);
    const { token } = await issueAccessToken(roost.services, { applicationId: row!.id, userId: author.user.id, scopes: ['read', 'write'] });
    const at = iso(clock.now().getTime() + 3 * HOUR);
    const res = await fetch(roost.at('/api/v1/statuses'), {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ status: 'from an app', scheduled_at: at }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(`"application_id":${row!.id},`);
    const id = JSON.parse(text).id as string;
    const again = await (await fetch(roost.at(`/api/v1/scheduled_statuses/${id}`), { headers: { authorization: `Bearer ${token}` } })).text();
    expect(again).toContain(`"application_id":${row!.id},`);
    expect((await author.api(`/api/v1/scheduled_statuses/${id}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('answers the ScheduledStatus with media: the time echoed to the millisecond, the params as sent, the attachments reserved', async () => {
    const m1 = await upload(author, 'first');
    const m2 = await upload(author, 'second');
    const at = iso(clock.now().getTime() + 2 * HOUR + 123);
    const res = await schedule(author, { status: 'Later, with pictures', media_ids: [m2, m1], sensitive: true, spoiler_text: 'cw', visibility: 'unlisted', language: 'en', scheduled_at: at });
    expect(res.status).toBe(200);
    expect(at.endsWith('.123Z')).toBe(true);
    const { media_attachments: media, ...rest } = res.body;
    expect(rest).toEqual({
      id: rest.id,
      scheduled_at: at,
      params: {
        text: 'Later, with pictures',
        poll: null,
        media_ids: [m2, m1],
        sensitive: true,
        spoiler_text: 'cw',
        visibility: 'unlisted',
        scheduled_at: null,
        in_reply_to_id: null,
        language: 'en',
        application_id: null,
        idempotency: null,
        with_rate_limit: false,
      },
    });
    expect(typeof rest.id).toBe('string');
    expect(media.map((m: { id: string; description: string; type: string }) => [m.id, m.description, m.type])).toEqual([[m2, 'second', 'image'], [m1, 'first', 'image']]);
    expect(media[0].url).toMatch(/^http.*\.png$/);
    // Reserved: another status cannot take them; the timer waits for the time.
    expect([await reserved(m1), await reserved(m2)]).toEqual([rest.id, rest.id]);
    const taken = await author.api('/api/v1/statuses', { method: 'POST', body: { status: 'now', media_ids: [m1] } });
    expect([taken.status, taken.body.error]).toEqual([422, `Media ${m1} not found or already attached to another post`]);
    expect(await timers(rest.id)).toEqual([[at, { type: 'scheduled_status.publish', scheduledStatusId: rest.id, scheduledAt: at }]]);
    // The same attachment cannot be reserved twice either.
    const twice = await schedule(author, { status: 'again', media_ids: [m1], scheduled_at: iso(clock.now().getTime() + 3 * HOUR) });
    expect([twice.status, twice.body.error]).toEqual([422, `Media ${m1} not found or already attached to another post`]);
    // GET one, as the author; another account's is a 404.
    expect((await author.api(`/api/v1/scheduled_statuses/${rest.id}`)).body).toEqual(res.body);
    expect((await other.api(`/api/v1/scheduled_statuses/${rest.id}`)).status).toBe(404);
    expect((await other.api(`/api/v1/scheduled_statuses/${rest.id}`, { method: 'PUT', body: { scheduled_at: iso(clock.now().getTime() + 5 * HOUR) } })).status).toBe(404);
    expect((await other.api(`/api/v1/scheduled_statuses/${rest.id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await author.api(`/api/v1/scheduled_statuses/${rest.id}`)).body.scheduled_at).toBe(at);
  });

  it('keeps a poll in params, and the time given with an offset as the same instant in UTC', async () => {
    const res = await schedule(author, {
      status: 'Tea or coffee?',
      poll: { options: ['tea', 'coffee'], expires_in: 3600, multiple: true },
      scheduled_at: '2026-03-01T16:30:00.250+02:00',
    });
    expect(res.status).toBe(200);
    expect(res.body.scheduled_at).toBe('2026-03-01T14:30:00.250Z');
    expect(res.body.params.poll).toEqual({ options: ['tea', 'coffee'], expires_in: 3600, multiple: true });
    expect(res.body.media_attachments).toEqual([]);
    await author.api(`/api/v1/scheduled_statuses/${res.body.id}`, { method: 'DELETE' });
  });

  it('refuses a time not more than 5 minutes ahead, a bad time, and a bad status, with nothing written', async () => {
    const m = await upload(author, 'kept free');
    const before = [await count('scheduled_statuses'), await count('statuses'), await count('jobs'), await count('outbox_events')];
    const now = clock.now().getTime();
    const cases: [Record<string, unknown>, string][] = [
      [{ status: 'soon', media_ids: [m], scheduled_at: iso(now + 5 * MIN) }, 'Validation failed: Scheduled at The scheduled date must be in the future'],
      [{ status: 'soon', scheduled_at: iso(now + MIN) }, 'Validation failed: Scheduled at The scheduled date must be in the future'],
      [{ status: 'when?', scheduled_at: 'next tuesday' }, 'Validation failed: Scheduled at is invalid'],
      [{ status: 'when?', scheduled_at: '2026-02-30T10:00:00Z' }, 'Validation failed: Scheduled at is invalid'],
      [{ status: 'when?', scheduled_at: ['2026-04-01T10:00:00Z'] }, 'Validation failed: Scheduled at is invalid'],
      [{ status: '', scheduled_at: iso(now + HOUR) }, "Validation failed: Text can't be blank"],
      [{ status: 'x'.repeat(501), scheduled_at: iso(now + HOUR) }, 'Validation failed: Text character limit of 500 exceeded'],
      [{ status: 'poll', poll: { options: ['a'], expires_in: 3600 }, scheduled_at: iso(now + HOUR) }, 'Validation failed: Poll options must have more than one item'],
      [{ status: 'nope', media_ids: ['99999'], scheduled_at: iso(now + HOUR) }, 'Media 99999 not found or already attached to another post'],
    ];
    for (const [body, error] of cases) {
      const res = await schedule(author, body);
      expect([res.status, res.body.error]).toEqual([422, error]);
    }
    const tooSoon = await schedule(author, { status: 'soon', scheduled_at: iso(now + 5 * MIN) });
    expect(tooSoon.body.details).toEqual({ scheduled_at: [{ error: 'ERR_INVALID', description: 'The scheduled date must be in the future' }] });
    expect([await count('scheduled_statuses'), await count('statuses'), await count('jobs'), await count('outbox_events')]).toEqual(before);
    expect(await reserved(m)).toBeNull();
    // Just over 5 minutes is enough.
    const ok = await schedule(author, { status: 'just in time', scheduled_at: iso(now + 5 * MIN + 1) });
    expect(ok.status).toBe(200);
    await author.api(`/api/v1/scheduled_statuses/${ok.body.id}`, { method: 'DELETE' });
  });

  it('posts at once when the time is already past, as Mastodon', async () => {
    const res = await schedule(author, { status: 'from the past', scheduled_at: iso(clock.now().getTime() - HOUR) });
    expect(res.status).toBe(200);
    expect(res.body.content).toBe('<p>from the past</p>');
    expect(res.body.created_at).toBe(clock.now().toISOString());
  });

  it('an Idempotency-Key names the scheduled status it created', async () => {
    const body = { status: 'once', scheduled_at: iso(clock.now().getTime() + 7 * HOUR) };
    const headers = { 'idempotency-key': 'sched-key-1' };
    const first = await author.api('/api/v1/statuses', { method: 'POST', body, headers });
    const second = await author.api('/api/v1/statuses', { method: 'POST', body, headers });
    expect(second.body).toEqual(first.body);
    expect(await count('scheduled_statuses', `params->>'text' = 'once'`)).toBe(1);
    await author.api(`/api/v1/scheduled_statuses/${first.body.id}`, { method: 'DELETE' });
  });
});

describe('limits', () => {
  /** Pending scheduled statuses written straight into the table (an account's hundreds). */
  async function fill(who: TestUser, times: Date[]) {
    for (const at of times) {
      await sql().query(
        `insert into scheduled_statuses (id, account_id, scheduled_at, params, state, created_at, updated_at)
         values ($1, $2, $3, '{"text":"filler"}'::jsonb, 'scheduled', $4, $4)`,
        [roost.services.ids.next(), who.account.id, at, clock.now()],
      );
    }
  }

  it('25 on one day: the 26th that day is refused, another day is fine', async () => {
    const busy = await createTestUser(roost, 'busyday');
    const day = Date.parse('2026-03-05T00:00:00.000Z');
    await fill(busy, Array.from({ length: 25 }, (_, i) => new Date(day + i * 30 * MIN)));
    const before = await count('scheduled_statuses');
    const refused = await schedule(busy, { status: 'one more', scheduled_at: '2026-03-05T23:59:59.999Z' });
    expect([refused.status, refused.body.error]).toEqual([422, 'Validation failed: You have exceeded the limit of 25 scheduled posts for today']);
    expect(refused.body.details).toEqual({ base: [{ error: 'ERR_INVALID', description: 'You have exceeded the limit of 25 scheduled posts for today' }] });
    expect(await count('scheduled_statuses')).toBe(before);
    const nextDay = await schedule(busy, { status: 'next day', scheduled_at: '2026-03-06T00:00:00.000Z' });
    expect(nextDay.status).toBe(200);
    // Moving one onto the full day is refused too.
    const moved = await busy.api(`/api/v1/scheduled_statuses/${nextDay.body.id}`, { method: 'PUT', body: { scheduled_at: '2026-03-05T12:00:00.000Z' } });
    expect([moved.status, moved.body.error]).toEqual([422, 'Validation failed: You have exceeded the limit of 25 scheduled posts for today']);
    expect((await busy.api(`/api/v1/scheduled_statuses/${nextDay.body.id}`)).body.scheduled_at).toBe('2026-03-06T00:00:00.000Z');
  });

  it('300 in all: the 301st is refused (with the day rule when both apply)', async () => {
    const prolific = await createTestUser(roost, 'prolific');
    const start = Date.parse('2026-04-01T00:00:00.000Z');
    // 300 over 15 days, 20 a day.
    await fill(prolific, Array.from({ length: 300 }, (_, i) => new Date(start + Math.floor(i / 20) * 24 * HOUR + (i % 20) * MIN)));
    const before = await count('scheduled_statuses');
    const refused = await schedule(prolific, { status: 'too many', scheduled_at: '2026-06-01T00:00:00.000Z' });
    expect([refused.status, refused.body.error]).toEqual([422, 'Validation failed: You have exceeded the limit of 300 scheduled posts']);
    await fill(prolific, Array.from({ length: 5 }, (_, i) => new Date(start + i * MIN)));
    const both = await schedule(prolific, { status: 'too many', scheduled_at: iso(start + HOUR) });
    expect([both.status, both.body.error]).toEqual([
      422,
      'Validation failed: You have exceeded the limit of 300 scheduled posts, You have exceeded the limit of 25 scheduled posts for today',
    ]);
    expect(await count('scheduled_statuses')).toBe(before + 5);
    // Cancelled, published and failed ones do not count.
    await sql().query(`update scheduled_statuses set state = 'cancelled' where account_id = $1 and id in (select id from scheduled_statuses where account_id = $1 limit 10)`, [prolific.account.id]);
    expect((await schedule(prolific, { status: 'room again', scheduled_at: '2026-06-01T00:00:00.000Z' })).status).toBe(200);
  });
});

describe('listing, moving and cancelling', () => {
  it('lists the pending ones newest first with Link headers, 20 by default, 40 at most', async () => {
    const lister = await createTestUser(roost, 'lister');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await schedule(lister, { status: `pending ${i}`, scheduled_at: iso(clock.now().getTime() + (i + 1) * HOUR) });
      ids.push(r.body.id);
    }
    const page = await lister.api('/api/v1/scheduled_statuses?limit=2');
    expect(page.body.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    const link = page.headers.get('link')!;
    expect(link).toContain(`max_id=${ids[1]}`);
    expect(link).toContain(`min_id=${ids[2]}`);
    expect(link).toMatch(/rel="next".*rel="prev"/);
    const next = await lister.api(`/api/v1/scheduled_statuses?limit=2&max_id=${ids[1]}`);
    expect(next.body.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
    const newer = await lister.api(`/api/v1/scheduled_statuses?min_id=${ids[0]}`);
    expect(newer.body.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    // Nobody else's, and an empty list for another account.
    expect((await other.api('/api/v1/scheduled_statuses')).body.every((s: { params: { text: string } }) => !s.params.text.startsWith('pending'))).toBe(true);
    const refusedScope = await createTestUser(roost, 'writeonly', { scopes: ['write'] });
    expect((await refusedScope.api('/api/v1/scheduled_statuses')).status).toBe(403);
    const readOnly = await createTestUser(roost, 'readonly', { scopes: ['read:statuses'] });
    expect((await readOnly.api(`/api/v1/scheduled_statuses/${ids[0]}`, { method: 'DELETE' })).status).toBe(403);
  });

  it('renders a page in a fixed number of statements (5 and 20 alike)', async () => {
    const many = await createTestUser(roost, 'manyplans');
    for (let i = 0; i < 22; i++) {
      const media = i % 2 === 0 ? [await upload(many, `pic ${i}`)] : [];
      const r = await schedule(many, { status: `plan ${i}`, media_ids: media, scheduled_at: iso(clock.now().getTime() + (i + 1) * HOUR + 24 * HOUR * (i % 3)) });
      expect(r.status).toBe(200);
    }
    await many.api('/api/v1/scheduled_statuses?limit=1');
    let five: { body: { media_attachments: unknown[] }[] } | undefined;
    let twenty: typeof five;
    const q5 = await capturedStatements(roost, async () => (five = await many.api('/api/v1/scheduled_statuses?limit=5')));
    const q20 = await capturedStatements(roost, async () => (twenty = await many.api('/api/v1/scheduled_statuses?limit=20')));
    expect([five!.body.length, twenty!.body.length]).toEqual([5, 20]);
    expect(twenty!.body.filter((s) => s.media_attachments.length === 1).length).toBe(10);
    expect(q20).toEqual(q5);
    const max = await many.api('/api/v1/scheduled_statuses?limit=100');
    expect(max.body.length).toBe(22);
  });

  it('PUT moves the time (and the timer); too soon or invalid is refused with nothing changed', async () => {
    const res = await schedule(author, { status: 'movable', scheduled_at: iso(clock.now().getTime() + HOUR) });
    const id = res.body.id;
    const later = iso(clock.now().getTime() + 3 * HOUR + 7);
    const moved = await author.api(`/api/v1/scheduled_statuses/${id}`, { method: 'PUT', body: { scheduled_at: later } });
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({ ...res.body, scheduled_at: later });
    expect(await timers(id)).toEqual([[later, { type: 'scheduled_status.publish', scheduledStatusId: id, scheduledAt: later }]]);
    for (const [at, error] of [
      [iso(clock.now().getTime() + 4 * MIN), 'Validation failed: Scheduled at The scheduled date must be in the future'],
      [iso(clock.now().getTime() - HOUR), 'Validation failed: Scheduled at The scheduled date must be in the future'],
      ['garbage', 'Validation failed: Scheduled at is invalid'],
    ]) {
      const r = await author.api(`/api/v1/scheduled_statuses/${id}`, { method: 'PUT', body: { scheduled_at: at } });
      expect([r.status, r.body.error]).toEqual([422, error]);
    }
    // Without a time, nothing changes.
    expect((await author.api(`/api/v1/scheduled_statuses/${id}`, { method: 'PUT', body: {} })).body.scheduled_at).toBe(later);
    expect(await timers(id)).toEqual([[later, { type: 'scheduled_status.publish', scheduledStatusId: id, scheduledAt: later }]]);
    const [row] = await sql().query<{ state: string; machine_version: number }>(`select state, machine_version from scheduled_statuses where id = $1`, [id]);
    expect(row).toEqual({ state: 'scheduled', machine_version: 1 });
    await author.api(`/api/v1/scheduled_statuses/${id}`, { method: 'DELETE' });
  });

  it('DELETE cancels: gone from the list, its timer dropped, its media free again', async () => {
    const m = await upload(author, 'to free');
    const res = await schedule(author, { status: 'cancel me', media_ids: [m], scheduled_at: iso(clock.now().getTime() + HOUR) });
    const id = res.body.id;
    const del = await author.api(`/api/v1/scheduled_statuses/${id}`, { method: 'DELETE' });
    expect([del.status, del.body]).toEqual([200, {}]);
    expect((await author.api(`/api/v1/scheduled_statuses/${id}`)).status).toBe(404);
    expect((await author.api(`/api/v1/scheduled_statuses/${id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await author.api('/api/v1/scheduled_statuses?limit=40')).body.map((s: { id: string }) => s.id)).not.toContain(id);
    expect(await timers(id)).toEqual([]);
    expect(await reserved(m)).toBeNull();
    const [row] = await sql().query<{ state: string }>(`select state from scheduled_statuses where id = $1`, [id]);
    expect(row!.state).toBe('cancelled');
    const events = await sql().query<{ type: string; actor_version: number; origin: string }>(
      `select type, actor_version, origin from outbox_events where actor_kind = 'scheduled_status' and actor_id = $1 order by id`,
      [id],
    );
    expect(events).toEqual([
      { type: 'scheduled_status.scheduled', actor_version: 0, origin: 'client' },
      { type: 'scheduled_status.cancelled', actor_version: 1, origin: 'client' },
    ]);
    // The picture can be posted now.
    expect((await author.api('/api/v1/statuses', { method: 'POST', body: { status: 'posted after all', media_ids: [m] } })).status).toBe(200);
  });
});

describe('publication at the time (controllable clock)', () => {
  const authorStatuses = async () => (await follower.api(`/api/v1/accounts/${author.account.id}/statuses?limit=40`)).body as { id: string; content: string }[];

  it('publishes with its media and poll into the author\'s statuses and the followers\' home, then is gone from the list', async () => {
    const m = await upload(author, 'the view');
    const at = clock.now().getTime() + 30 * MIN + 500;
    const withMedia = await schedule(author, { status: 'Scheduled with a picture', media_ids: [m], visibility: 'public', scheduled_at: iso(at) });
    const withPoll = await schedule(author, { status: 'Scheduled poll', poll: { options: ['yes', 'no'], expires_in: 600, hide_totals: true }, scheduled_at: iso(at) });
    expect([withMedia.status, withPoll.status]).toEqual([200, 200]);
    clock.advance(29 * MIN);
    await new Promise((r) => setTimeout(r, 300));
    expect((await authorStatuses()).some((s) => s.content.includes('Scheduled'))).toBe(false);

    clock.set(new Date(at));
    const rows = await eventually(async () => {
      const r = await sql().query<{ id: string; state: string; status_id: string | null }>(
        `select id::text, state, status_id::text from scheduled_statuses where id = any($1::bigint[]) order by id`,
        [[withMedia.body.id, withPoll.body.id]],
      );
      return r.every((x) => x.state === 'published') ? r : null;
    }, 20_000, 'both published');
    const [mediaStatusId, pollStatusId] = rows.map((r) => r.status_id!);

    const posted = (await follower.api(`/api/v1/statuses/${mediaStatusId}`)).body;
    expect(posted).toMatchObject({ content: '<p>Scheduled with a picture</p>', visibility: 'public', created_at: iso(at) });
    expect(posted.media_attachments.map((a: { id: string; description: string }) => [a.id, a.description])).toEqual([[m, 'the view']]);
    const polled = (await follower.api(`/api/v1/statuses/${pollStatusId}`)).body;
    expect(polled.poll).toMatchObject({ expires_at: iso(at + 600_000), expired: false, multiple: false, options: [{ title: 'yes', votes_count: null }, { title: 'no', votes_count: null }] });
    // The attachment is the status' now, no longer reserved.
    expect(await reserved(m)).toBeNull();
    const ids = (await authorStatuses()).map((s) => s.id);
    expect(ids).toContain(mediaStatusId);
    expect(ids).toContain(pollStatusId);
    await eventually(async () => {
      const home = (await follower.api('/api/v1/timelines/home?limit=40')).body as { id: string }[];
      return home.some((s) => s.id === mediaStatusId) && home.some((s) => s.id === pollStatusId);
    }, 20_000, "the followers' home");
    const list = (await author.api('/api/v1/scheduled_statuses?limit=40')).body.map((s: { id: string }) => s.id);
    expect(list).not.toContain(withMedia.body.id);
    expect((await author.api(`/api/v1/scheduled_statuses/${withPoll.body.id}`)).status).toBe(404);
    const events = await sql().query<{ type: string; actor_version: number; origin: string; payload: Record<string, unknown> }>(
      `select type, actor_version, origin, payload from outbox_events where actor_kind = 'scheduled_status' and actor_id = $1 order by id`,
      [withMedia.body.id],
    );
    expect(events.map((e) => [e.type, e.actor_version, e.origin])).toEqual([
      ['scheduled_status.scheduled', 0, 'client'],
      ['scheduled_status.published', 1, 'timer'],
    ]);
    expect(events[1]!.payload).toEqual({ type: 'scheduled_status.published', scheduledStatusId: withMedia.body.id, accountId: author.account.id, statusId: mediaStatusId });
    const created = await sql().query<{ origin: string }>(`select origin from outbox_events where type = 'status.created' and actor_id = $1`, [mediaStatusId]);
    expect(created).toEqual([{ origin: 'timer' }]);
  });

  it('a moved time: the old time publishes nothing, the new one publishes', async () => {
    const first = clock.now().getTime() + 20 * MIN;
    const second = clock.now().getTime() + 60 * MIN;
    const res = await schedule(author, { status: 'Moved post', scheduled_at: iso(first) });
    const id = res.body.id;
    expect((await author.api(`/api/v1/scheduled_statuses/${id}`, { method: 'PUT', body: { scheduled_at: iso(second) } })).status).toBe(200);
    // The old timer, had it been delivered anyway, is refused by the actor.
    clock.set(new Date(first + MIN));
    expect(await publishScheduledStatus(roost.services, id, iso(first))).toBe('refused');
    await new Promise((r) => setTimeout(r, 300));
    expect((await author.api(`/api/v1/scheduled_statuses/${id}`)).status).toBe(200);
    expect((await authorStatuses()).some((s) => s.content === '<p>Moved post</p>')).toBe(false);
    clock.set(new Date(second));
    await eventually(async () => (await authorStatuses()).some((s) => s.content === '<p>Moved post</p>'), 20_000, 'the moved post');
    expect(await count('statuses', `text = 'Moved post'`)).toBe(1);
  });

  it('a timer delivered twice (even at once) publishes once', async () => {
    const at = clock.now().getTime() + 10 * MIN;
    const res = await schedule(author, { status: 'Exactly once', scheduled_at: iso(at) });
    const id = res.body.id;
    // The queue's own timer is taken away; the test delivers it, twice at once, then once more.
    await sql().query(`delete from jobs where dedupe_key = $1`, [`scheduled_status.publish:${id}`]);
    clock.set(new Date(at));
    const outcomes = await Promise.all([publishScheduledStatus(roost.services, id, iso(at)), publishScheduledStatus(roost.services, id, iso(at))]);
    expect(outcomes.sort()).toEqual(['published', 'refused']);
    expect(await publishScheduledStatus(roost.services, id, iso(at))).toBe('refused');
    expect(await count('statuses', `text = 'Exactly once'`)).toBe(1);
    expect(await count('outbox_events', `actor_kind = 'scheduled_status' and actor_id = ${id} and type = 'scheduled_status.published'`)).toBe(1);
  });

  it('a publication that cannot be made (the post replied to is gone) ends failed, posts nothing, frees the media', async () => {
    const parent = (await author.api('/api/v1/statuses', { method: 'POST', body: { status: 'parent' } })).body;
    const m = await upload(author, 'orphan');
    const at = clock.now().getTime() + 10 * MIN;
    const res = await schedule(author, { status: 'A reply', in_reply_to_id: parent.id, media_ids: [m], scheduled_at: iso(at) });
    expect(res.body.params.in_reply_to_id).toBe(parent.id);
    expect((await author.api(`/api/v1/statuses/${parent.id}`, { method: 'DELETE' })).status).toBe(200);
    clock.set(new Date(at));
    const [row] = await eventually(async () => {
      const r = await sql().query<{ state: string; failure: string | null; status_id: string | null }>(`select state, failure, status_id::text from scheduled_statuses where id = $1`, [res.body.id]);
      return r[0]!.state === 'failed' ? r : null;
    }, 20_000, 'the failure');
    expect(row).toEqual({ state: 'failed', failure: 'The post you are trying to reply to does not appear to exist.', status_id: null });
    expect(await count('statuses', `text = 'A reply'`)).toBe(0);
    expect(await reserved(m)).toBeNull();
    expect((await author.api(`/api/v1/scheduled_statuses/${res.body.id}`)).status).toBe(404);
  });

  it('an attachment deleted meanwhile (Mastodon lets it go): the publication fails with Mastodon\'s media error', async () => {
    const m = await upload(author, 'deleted later');
    const at = clock.now().getTime() + 10 * MIN;
    const res = await schedule(author, { status: 'Lost its picture', media_ids: [m], scheduled_at: iso(at) });
    expect((await author.api(`/api/v1/media/${m}`, { method: 'DELETE' })).status).toBe(200);
    expect((await author.api(`/api/v1/scheduled_statuses/${res.body.id}`)).body.media_attachments).toEqual([]);
    clock.set(new Date(at));
    const [row] = await eventually(async () => {
      const r = await sql().query<{ state: string; failure: string | null }>(`select state, failure from scheduled_statuses where id = $1`, [res.body.id]);
      return r[0]!.state === 'failed' ? r : null;
    }, 20_000, 'the failure');
    expect(row).toEqual({ state: 'failed', failure: `Media ${m} not found or already attached to another post` });
    expect(await count('statuses', `text = 'Lost its picture'`)).toBe(0);
  });
});
