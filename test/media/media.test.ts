/**
 * Media attachments through the real server: the synchronous upload (EXIF orientation applied,
 * metadata gone, the file served with its type and size; v1 and v2 alike for an image), the queued
 * one (206 while the job waits → 200), description and focus, bad uploads, ownership, statuses with media (in
 * order, text optional, limits and Mastodon's errors), delete and redraft, only_media, and
 * DELETE /api/v1/media/:id.
 */
import { crc32 } from 'node:zlib';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import sharp from 'sharp';
import { eventually, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { enqueue } from '../../src/jobs/queue.ts';
import { JOBS_NOTIFY_CHANNEL } from '../../src/jobs/schema.ts';
import { MEDIA_QUEUE, mediaOrderingKey, uploadMediaAsync } from '../../src/services/media.ts';
import { unknownKeys, validate } from '../serializers/openapi-check.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let files: string;
beforeAll(async () => {
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
  files = `${roost.services.config.publicUrl}/system/media_attachments/files/`;
}, 60_000);
afterAll(async () => roost?.close());

/** A 300×200 JPEG stored turned (EXIF orientation 6: shown 200×300), with EXIF text that must not survive. */
async function orientedJpeg(): Promise<Buffer> {
  return sharp({ create: { width: 300, height: 200, channels: 3, background: { r: 200, g: 40, b: 40 } } })
    .jpeg()
    .withExif({ IFD0: { Copyright: 'Secret GPS place', Artist: 'Someone Private' } })
    .withMetadata({ orientation: 6 })
    .toBuffer();
}

async function png(width: number, height: number, color = { r: 20, g: 120, b: 200 }): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } }).png().toBuffer();
}

/** A real 1×1 PNG whose header then claims width × height (a decompression bomb's header). */
async function pngClaiming(width: number, height: number): Promise<Buffer> {
  const buf = Buffer.from(await png(1, 1));
  // IHDR: length(4) 'IHDR'(4) width(4) height(4) … crc(4), right after the 8-byte signature.
  buf.writeUInt32BE(width, 16);
  buf.writeUInt32BE(height, 20);
  buf.writeUInt32BE(crc32(buf.subarray(12, 29)), 29);
  return buf;
}

function form(file: Buffer | string | null, fields: Record<string, string> = {}, type = 'image/jpeg'): FormData {
  const f = new FormData();
  if (file !== null) f.append('file', new Blob([typeof file === 'string' ? file : new Uint8Array(file)], { type }), 'upload.bin');
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  return f;
}

const upload = (u: TestUser, body: FormData, version = 'v1') => u.api(`/api/${version}/media`, { method: 'POST', body });
const post = (u: TestUser, body: Record<string, unknown>) => u.api('/api/v1/statuses', { method: 'POST', body });
const countRows = async () => Number((await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from media_attachments`))[0]!.n);
const KEY = /^media_attachments\/files\/(\d{3}\/){6}(original|small)\/[0-9a-f]{16}\.(jpg|png)$/;

describe('POST /api/v1/media (synchronous)', () => {
  it('stores the image turned upright, without its metadata, with a preview, sizes, focus and a 4×4 blurhash', async () => {
    const res = await upload(alice, form(await orientedJpeg(), { description: 'A red card', focus: '0.5,-0.25' }));
    expect(res.status).toBe(200);
    const m = res.body;
    expect(validate('MediaAttachment', m)).toEqual([]);
    // Fields Mastodon's serializer sends that the OpenAPI schema does not list.
    expect(unknownKeys('MediaAttachment', m)).toEqual(['/preview_remote_url', '/text_url', '/meta/original/size', '/meta/small/size']);
    expect(Object.keys(m)).toEqual(['id', 'type', 'url', 'preview_url', 'remote_url', 'preview_remote_url', 'text_url', 'meta', 'description', 'blurhash']);
    expect(m).toMatchObject({ type: 'image', remote_url: null, preview_remote_url: null, text_url: null, description: 'A red card' });
    expect(m.meta).toEqual({
      original: { width: 200, height: 300, size: '200x300', aspect: 200 / 300 },
      small: { width: 200, height: 300, size: '200x300', aspect: 200 / 300 },
      focus: { x: 0.5, y: -0.25 },
    });
    // 4×4 components: size flag (4−1) + (4−1)·9 = 30 ('U'), 4 + 2·16 characters.
    expect(m.blurhash).toMatch(/^U.{35}$/);
    expect(m.url.startsWith(files)).toBe(true);
    expect(m.url.slice(`${roost.services.config.publicUrl}/system/`.length)).toMatch(KEY);
    expect(m.preview_url).toBe(m.url.replace('/original/', '/small/'));

    // Served: the type, the size, the bytes, and no EXIF left.
    const file = await fetch(m.url);
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/jpeg');
    expect(Number(file.headers.get('content-length'))).toBe(bytes.length);
    const [row] = await roost.services.db.sql.query<{ file_size: string; content_type: string }>(`select file_size::text, content_type from media_attachments where id = $1`, [m.id]);
    expect(row).toEqual({ file_size: String(bytes.length), content_type: 'image/jpeg' });
    expect(bytes.includes(Buffer.from('Secret GPS'))).toBe(false);
    expect(bytes.includes(Buffer.from('Someone Private'))).toBe(false);
    const served = await sharp(bytes).metadata();
    expect([served.width, served.height, served.orientation, served.exif]).toEqual([200, 300, undefined, undefined]);

    // GET answers the same attachment; bob does not see it.
    const got = await alice.api(`/api/v1/media/${m.id}`);
    expect([got.status, got.body]).toEqual([200, m]);
    expect((await bob.api(`/api/v1/media/${m.id}`)).status).toBe(404);
  });

  it('makes the small preview within 230,400 pixels (640×360 for 1280×720)', async () => {
    const res = await upload(alice, form(await png(1280, 720), {}, 'image/png'));
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({
      original: { width: 1280, height: 720, size: '1280x720', aspect: 1280 / 720 },
      small: { width: 640, height: 360, size: '640x360', aspect: 640 / 360 },
    });
    expect(res.body.url).toMatch(/\.png$/);
    const small = await fetch(res.body.preview_url);
    expect(small.headers.get('content-type')).toBe('image/png');
    const meta = await sharp(Buffer.from(await small.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([640, 360]);
  });

  it('refuses what it cannot take, with Mastodon’s errors, and stores nothing', async () => {
    const before = await countRows();
    const cases: [FormData, string][] = [
      [form('just some text, not an image', {}, 'image/png'), 'Validation failed: File content type is invalid, File is invalid'],
      [form(Buffer.from('GIF89a but then nothing else of a GIF at all'), {}, 'image/gif'), 'File type of uploaded media could not be verified'],
      [form(await pngClaiming(8000, 4200), {}, 'image/png'), '8000x4200 images are not supported'],
      [form(null, { description: 'no file' }), "Validation failed: File can't be blank"],
    ];
    for (const version of ['v1', 'v2']) {
      for (const [body, error] of cases) {
        const res = await upload(alice, body, version);
        expect([version, res.status, res.body]).toEqual([version, 422, { error }]);
      }
    }
    const focus = await upload(alice, form(await png(10, 10), { focus: '2,0' }, 'image/png'));
    expect(focus.status).toBe(422);
    expect(focus.body.details).toEqual({ focus: [{ error: 'ERR_INVALID', description: 'must be two numbers from -1.0 to 1.0, "x,y"' }] });
    const long = await upload(alice, form(await png(10, 10), { description: 'x'.repeat(1501) }, 'image/png'));
    expect([long.status, long.body.error]).toEqual([422, 'Validation failed: Description is too long (maximum is 1500 characters)']);
    expect(await countRows()).toBe(before);
  });

  it('needs write:media', async () => {
    const reader = await createTestUser(roost, 'reader', { scopes: ['read'] });
    const res = await upload(reader, form(await png(10, 10), {}, 'image/png'));
    expect(res.status).toBe(403);
  });
});

describe('POST /api/v2/media with an image (synchronous, as Mastodon)', () => {
  it('answers 200 with the URLs, and the media attaches at once', async () => {
    const carol = await createTestUser(roost, 'carol');
    const res = await upload(carol, form(await png(1280, 720), { description: 'now', focus: '-1,1' }, 'image/png'), 'v2');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: 'image', description: 'now', remote_url: null, preview_remote_url: null, text_url: null });
    expect(res.body.url).toMatch(new RegExp(`^${files}`));
    expect(res.body.preview_url).toMatch(new RegExp(`^${files}`));
    expect(res.body.meta).toEqual({
      original: { width: 1280, height: 720, size: '1280x720', aspect: 1280 / 720 },
      small: { width: 640, height: 360, size: '640x360', aspect: 640 / 360 },
      focus: { x: -1, y: 1 },
    });
    expect(res.body.blurhash).toMatch(/^U.{35}$/);
    const file = await fetch(res.body.url);
    expect([file.status, file.headers.get('content-type')]).toEqual([200, 'image/png']);
    expect((await carol.api(`/api/v1/media/${res.body.id}`)).status).toBe(200);
    const posted = await post(carol, { status: 'right away', media_ids: [res.body.id], visibility: 'private' });
    expect([posted.status, posted.body.media_attachments?.[0]?.id]).toEqual([200, res.body.id]);
    // Nothing was queued for it.
    const jobs = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from jobs where kind = 'media.process'`);
    expect(jobs[0]!.n).toBe(0);
  });
});

describe('queued processing (uploadMediaAsync, kept for work larger than an image)', () => {
  it('stores url null, 206 while the job waits, then 200 once processed', async () => {
    // Hold alice's processing: a job of her media ordering key that is not due comes first.
    const sql = roost.services.db.sql;
    const blocker = await enqueue(sql, { kind: 'test.hold', queue: MEDIA_QUEUE, payload: {}, runAt: new Date(Date.now() + 3_600_000), orderingKey: mediaOrderingKey(alice.account.id) });
    const id = await uploadMediaAsync(roost.services, alice.account.id, { file: await png(1280, 720), description: 'later', focus: '-1,1' });
    const res = { body: { id } };
    const queued = {
      id: res.body.id,
      type: 'image',
      url: null,
      preview_url: null,
      remote_url: null,
      preview_remote_url: null,
      text_url: null,
      meta: { focus: { x: -1, y: 1 } },
      description: 'later',
      blurhash: null,
    };
    const waiting = await alice.api(`/api/v1/media/${res.body.id}`);
    expect([waiting.status, waiting.body]).toEqual([206, queued]);
    // Not attachable before it is processed; a PUT meanwhile is kept.
    const early = await post(alice, { status: 'too soon', media_ids: [res.body.id] });
    expect([early.status, early.body]).toEqual([422, { error: 'Cannot attach files that have not finished processing. Try again in a moment!' }]);
    const put = await alice.api(`/api/v1/media/${res.body.id}`, { method: 'PUT', body: { description: 'described while waiting' } });
    expect([put.status, put.body.description, put.body.url]).toEqual([206, 'described while waiting', null]);

    await sql.query(`delete from jobs where id = $1`, [blocker]);
    await sql.query(`select pg_notify('${JOBS_NOTIFY_CHANNEL}', '${MEDIA_QUEUE}')`);
    const done = await eventually(async () => {
      const r = await alice.api(`/api/v1/media/${res.body.id}`);
      return r.status === 200 ? r : null;
    });
    expect(done.body).toMatchObject({ id: res.body.id, type: 'image', description: 'described while waiting', remote_url: null });
    expect(done.body.meta).toEqual({
      original: { width: 1280, height: 720, size: '1280x720', aspect: 1280 / 720 },
      small: { width: 640, height: 360, size: '640x360', aspect: 640 / 360 },
      focus: { x: -1, y: 1 },
    });
    expect(done.body.blurhash).toMatch(/^U.{35}$/);
    const file = await fetch(done.body.url);
    expect([file.status, file.headers.get('content-type')]).toEqual([200, 'image/png']);
    expect(Buffer.from(await file.arrayBuffer()).length).toBe(Number(file.headers.get('content-length')));
    // The job is done (its row goes once the handler returned: the pool deletes the jobs finished
    // in one turn together, just after) and the pending upload gone from disk.
    await eventually(async () => (await sql.query<{ n: number }>(`select count(*)::int as n from jobs where kind = 'media.process'`))[0]!.n === 0);
    expect(existsSync(path.join(roost.dataDir, 'media', 'media_attachments', 'pending', res.body.id))).toBe(false);
  });
});

describe('PUT /api/v1/media/:id', () => {
  it('sets the description and the focal point; refuses bad ones and other people’s media', async () => {
    const m = (await upload(alice, form(await png(40, 20), {}, 'image/png'))).body;
    expect(m.meta.focus).toBeUndefined();
    const res = await alice.api(`/api/v1/media/${m.id}`, { method: 'PUT', body: { description: 'Two to one', focus: '-0.5,0.75' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...m, description: 'Two to one', meta: { ...m.meta, focus: { x: -0.5, y: 0.75 } } });
    for (const focus of ['abc', '1.5,0', '0', '0,0,0', 'NaN,1']) {
      const bad = await alice.api(`/api/v1/media/${m.id}`, { method: 'PUT', body: { focus } });
      expect([focus, bad.status, bad.body.error]).toEqual([focus, 422, 'Validation failed: Focus must be two numbers from -1.0 to 1.0, "x,y"']);
    }
    expect((await bob.api(`/api/v1/media/${m.id}`, { method: 'PUT', body: { description: 'mine now' } })).status).toBe(404);
    expect((await alice.api(`/api/v1/media/${m.id}`)).body.description).toBe('Two to one');
  });
});

describe('statuses with media', () => {
  it('attaches up to four in order, renders them, and keeps them for a redraft', async () => {
    const a = (await upload(alice, form(await png(30, 30, { r: 255, g: 0, b: 0 }), { description: 'first' }, 'image/png'))).body;
    const b = (await upload(alice, form(await orientedJpeg(), { description: 'second' }))).body;
    const created = await post(alice, { status: '', media_ids: [b.id, a.id] });
    expect(created.status).toBe(200);
    expect(created.body.content).toBe('');
    expect(created.body.media_attachments).toEqual([b, a]);
    const got = await bob.api(`/api/v1/statuses/${created.body.id}`);
    expect(got.body.media_attachments).toEqual([b, a]);
    expect(validate('Status', got.body)).toEqual([]);

    // Attached: no longer GET/PUT-able as an upload, not deletable, not attachable again.
    expect((await alice.api(`/api/v1/media/${a.id}`)).status).toBe(404);
    const del = await alice.api(`/api/v1/media/${a.id}`, { method: 'DELETE' });
    expect([del.status, del.body]).toEqual([422, { error: 'Media attachment is currently used by a status' }]);
    const again = await post(alice, { status: 'again', media_ids: [a.id] });
    expect([again.status, again.body]).toEqual([422, { error: `Media ${a.id} not found or already attached to another post` }]);

    // only_media: this status and no other.
    await post(alice, { status: 'no pictures here' });
    const only = await bob.api(`/api/v1/accounts/${alice.account.id}/statuses?only_media=true`);
    expect(only.body.map((s: { id: string }) => s.id)).toEqual([created.body.id]);
    // The same predicate on the public and tag timelines.
    const publicOnly = await bob.api('/api/v1/timelines/public?only_media=true');
    expect(publicOnly.body.map((s: { id: string }) => s.id)).toEqual([created.body.id]);

    // Delete and redraft: the answer carries the media, which are free to post again.
    const deleted = await alice.api(`/api/v1/statuses/${created.body.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.media_attachments).toEqual([b, a]);
    expect((await alice.api(`/api/v1/media/${a.id}`)).status).toBe(200);
    const redraft = await post(alice, { status: 'redrafted', media_ids: [a.id, b.id] });
    expect([redraft.status, redraft.body.media_attachments]).toEqual([200, [a, b]]);

    // delete_media: the attachments and their files go.
    const gone = await alice.api(`/api/v1/statuses/${redraft.body.id}?delete_media=true`, { method: 'DELETE' });
    expect(gone.body.media_attachments).toEqual([a, b]);
    expect((await alice.api(`/api/v1/media/${a.id}`)).status).toBe(404);
    expect((await fetch(a.url)).status).toBe(404);
    expect((await fetch(b.preview_url)).status).toBe(404);
  });

  it('refuses others’ and unknown media ids and more than four, writing nothing', async () => {
    const mine = (await upload(alice, form(await png(10, 10), {}, 'image/png'))).body;
    const statuses = async () => Number((await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from statuses`))[0]!.n);
    const before = await statuses();
    const theirs = await post(bob, { status: 'with alice’s picture', media_ids: [mine.id] });
    expect([theirs.status, theirs.body]).toEqual([422, { error: `Media ${mine.id} not found or already attached to another post` }]);
    const unknown = await post(alice, { status: 'x', media_ids: [mine.id, '123456789', 'abc'] });
    expect([unknown.status, unknown.body]).toEqual([422, { error: 'Media 123456789, abc not found or already attached to another post' }]);
    const five = await post(alice, { status: 'x', media_ids: ['1', '2', '3', '4', '5'] });
    expect([five.status, five.body]).toEqual([422, { error: 'Cannot attach more than 4 files' }]);
    const blank = await post(alice, { status: '  ' });
    expect(blank.status).toBe(422);
    expect(await statuses()).toBe(before);
    expect((await alice.api(`/api/v1/media/${mine.id}`)).status).toBe(200);
  });
});

describe('DELETE /api/v1/media/:id', () => {
  it('removes an unattached attachment and its files; others’ and unknown ones are 404', async () => {
    const m = (await upload(alice, form(await png(12, 12), {}, 'image/png'))).body;
    expect((await fetch(m.url)).status).toBe(200);
    expect((await bob.api(`/api/v1/media/${m.id}`, { method: 'DELETE' })).status).toBe(404);
    const res = await alice.api(`/api/v1/media/${m.id}`, { method: 'DELETE' });
    expect([res.status, res.body]).toEqual([200, {}]);
    expect((await alice.api(`/api/v1/media/${m.id}`)).status).toBe(404);
    expect((await fetch(m.url)).status).toBe(404);
    expect((await fetch(m.preview_url)).status).toBe(404);
    expect((await alice.api(`/api/v1/media/${m.id}`, { method: 'DELETE' })).status).toBe(404);
  });
});

describe('persistRemoteMedia (for federation)', () => {
  it('stores remote attachments without fetching them, in order, keeping sane fields only', async () => {
    const { persistRemoteMedia } = await import('../../src/services/media.ts');
    const status = (await post(bob, { status: 'stand-in for a remote note' })).body;
    const four = 'U'.padEnd(36, '0'); // 4×4 (size flag 'U' = 30), 4 + 2·16 base-83 digits: well formed
    const { encode } = await import('blurhash');
    const px = new Uint8ClampedArray(8 * 8 * 4).fill(128);
    const sixBySix = encode(px, 8, 8, 6, 6);
    const fiveByFive = encode(px, 8, 8, 5, 5);
    const ids = await roost.services.db.sql.transaction((sql) =>
      persistRemoteMedia(sql, roost.services, status.id, bob.account.id, [
        { url: 'javascript:alert(1)', mediaType: 'image/png' },
        { url: 'https://remote.example/a.png', mediaType: 'image/png', name: 'First', blurhash: fiveByFive, width: 800, height: 600, focalPoint: [0.1, -0.2] },
        { url: 'https://remote.example/b.jpg', mediaType: 'image/jpeg', name: '  ', blurhash: sixBySix, width: -1, height: 5, focalPoint: [3, 0] },
        { url: 'https://remote.example/c.mp4', mediaType: 'video/mp4', name: 'x'.repeat(2000), blurhash: four },
        { url: 'https://remote.example/d.ogg', mediaType: 'audio/ogg' },
        { url: 'https://remote.example/e.png', mediaType: 'image/png' },
      ]),
    );
    expect(ids).toHaveLength(4);
    const got = (await alice.api(`/api/v1/statuses/${status.id}`)).body.media_attachments;
    expect(got.map((m: { id: string }) => m.id)).toEqual(ids);
    expect(got[0]).toEqual({
      id: ids[0],
      type: 'image',
      url: 'https://remote.example/a.png',
      preview_url: 'https://remote.example/a.png',
      remote_url: 'https://remote.example/a.png',
      preview_remote_url: null,
      text_url: null,
      meta: { original: { width: 800, height: 600, size: '800x600', aspect: 800 / 600 }, focus: { x: expect.closeTo(0.1, 6), y: expect.closeTo(-0.2, 6) } },
      description: 'First',
      blurhash: fiveByFive,
    });
    // 6×6 components: dropped; bad sizes and focus: dropped; a blank name: no description.
    expect(got[1]).toMatchObject({ type: 'image', meta: null, description: null, blurhash: null });
    expect(got[2]).toMatchObject({ type: 'video', url: 'https://remote.example/c.mp4', preview_url: null, description: 'x'.repeat(1500), blurhash: four });
    expect(got[3]).toMatchObject({ type: 'audio', remote_url: 'https://remote.example/d.ogg' });
  });
});

describe('uploads that pass the header check but do not decode, and GIFs', () => {
  async function corruptPng(): Promise<Buffer> {
    const png = Buffer.from(await sharp({ create: { width: 100, height: 100, channels: 3, background: 'red' } }).png({ compressionLevel: 0 }).toBuffer());
    // The header (IHDR) stays sound; the pixel data in the middle does not.
    png.fill(0xab, Math.floor(png.length / 3), Math.floor((2 * png.length) / 3));
    return png;
  }

  it('v1 and v2 refuse at once; a queued one is marked failed by its job: GET and PUT answer Mastodon’s 422', async () => {
    for (const version of ['v1', 'v2']) {
      const sync = await upload(alice, form(await corruptPng(), {}, 'image/png'), version);
      expect([version, sync.status, sync.body]).toEqual([version, 422, { error: 'File type of uploaded media could not be verified' }]);
    }
    const res = { body: { id: await uploadMediaAsync(roost.services, alice.account.id, { file: await corruptPng() }) } };
    const failed = await eventually(async () => {
      const r = await alice.api(`/api/v1/media/${res.body.id}`);
      return r.status === 422 ? r : null;
    });
    expect(failed.body).toEqual({ error: 'Error processing thumbnail for uploaded media' });
    const put = await alice.api(`/api/v1/media/${res.body.id}`, { method: 'PUT', body: { description: 'x' } });
    expect([put.status, put.body]).toEqual([422, { error: 'Error processing thumbnail for uploaded media' }]);
    const attach = await post(alice, { status: 'x', media_ids: [res.body.id] });
    expect([attach.status, attach.body]).toEqual([422, { error: 'Cannot attach files that have not finished processing. Try again in a moment!' }]);
    expect((await alice.api(`/api/v1/media/${res.body.id}`, { method: 'DELETE' })).status).toBe(200);
    expect(existsSync(path.join(roost.dataDir, 'media', 'media_attachments', 'pending', res.body.id))).toBe(false);
  });

  it('makes an animated GIF a gifv (a silent H.264 MP4, Mastodon’s GifTranscoder), in the request; a still GIF stays an image', async () => {
    const frame = (r: number) => sharp({ create: { width: 960, height: 540, channels: 4, background: { r, g: 0, b: 0, alpha: 1 } } }).png().toBuffer();
    const gif = await sharp([await frame(255), await frame(0), await frame(120)], { join: { animated: true } }).gif({ delay: [100, 100, 100] }).toBuffer();
    for (const version of ['v1', 'v2']) {
      const res = await upload(alice, form(gif, {}, 'image/gif'), version);
      expect([version, res.status, res.body.type]).toEqual([version, 200, 'gifv']);
      expect(res.body.url).toMatch(/\/original\/[0-9a-f]{16}\.mp4$/);
      expect(res.body.meta.original).toMatchObject({ width: 960, height: 540 });
      expect(res.body.meta.original.duration).toBeCloseTo(0.3, 1); // three frames of 100 ms
      expect(res.body.meta.small).toEqual({ width: 640, height: 360, size: '640x360', aspect: 640 / 360 });
      expect(res.body.blurhash).toMatch(/^U.{35}$/);
      const file = await fetch(res.body.url);
      expect(file.headers.get('content-type')).toBe('video/mp4');
      const preview = await fetch(res.body.preview_url);
      expect(preview.headers.get('content-type')).toBe('image/png');
      const meta = await sharp(Buffer.from(await preview.arrayBuffer())).metadata();
      expect([meta.width, meta.height]).toEqual([640, 360]);
    }
    const still = await sharp({ create: { width: 30, height: 20, channels: 3, background: 'blue' } }).gif().toBuffer();
    const res = await upload(alice, form(still, {}, 'image/gif'));
    expect([res.status, res.body.type, res.body.meta.original]).toEqual([200, 'image', { width: 30, height: 20, size: '30x20', aspect: 1.5 }]);
    expect(res.body.url).toMatch(/\.gif$/);
  }, 60_000);
});
