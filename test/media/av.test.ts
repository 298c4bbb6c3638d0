/**
 * Video and audio uploads through the real server, with the packaged ffmpeg: a 20 s 1080p clip
 * (MPEG-4 part 2 + MP3, so it must be transcoded) and a 3-minute Ogg Vorbis file, made here by the
 * same ffmpeg, go through POST /api/v2/media (202, url null; 206 while queued, a status refused
 * with Mastodon's 422; then 200) and come out as Mastodon serves them: H.264/AAC MP4 yuv420p and
 * MP3, whose first frame decodes and whose duration and codecs ffprobe reads back; `meta` in
 * Mastodon's shape; a PNG preview and a blurhash for video. POST /api/v1/media does the same in
 * the request. Bad files (text named .mp4, a truncated MP4, over the pixel or frame-rate limit)
 * get a clear 422 at once and leave no row, no file and no work directory behind; a transcode
 * that times out marks the upload failed. The served Note carries the video as a Document with
 * its media type.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import sharp from 'sharp';
import { eventually, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { enqueue } from '../../src/jobs/queue.ts';
import { JOBS_NOTIFY_CHANNEL } from '../../src/jobs/schema.ts';
import { MEDIA_QUEUE, mediaOrderingKey } from '../../src/services/media.ts';
import { ffmpegOf } from '../../src/services/media-av.ts';

let roost: TestRoost;
let alice: TestUser;
let tmp: string;
let ffmpeg: string;
let ffprobe: string;

function run(bin: string, args: string[]): string {
  const r = spawnSync(bin, args, { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${path.basename(bin)} ${args.join(' ')}: ${r.stderr.toString()}`);
  return r.stdout.toString('latin1');
}

/** Makes a file with the packaged ffmpeg (lavfi sources), returns its path. */
function make(name: string, args: string[]): string {
  const file = path.join(tmp, name);
  run(ffmpeg, ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...args, file]);
  return file;
}

interface Probe {
  streams: { codec_type: string; codec_name: string; width?: number; height?: number; pix_fmt?: string }[];
  format: { duration: string; format_name: string };
}
function probe(file: string): Probe {
  return JSON.parse(run(ffprobe, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file]));
}

/** The first video frame, decoded and scaled to 64×36 RGB (what a player shows first, small enough to compare). */
function firstFrame(file: string): Buffer {
  return Buffer.from(run(ffmpeg, ['-nostdin', '-loglevel', 'error', '-i', file, '-frames:v', '1', '-vf', 'scale=64:36', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-']), 'latin1');
}

async function download(url: string, name: string): Promise<{ file: string; type: string | null }> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const file = path.join(tmp, name);
  writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  return { file, type: res.headers.get('content-type') };
}

function form(file: string | Buffer, name: string, fields: Record<string, string> = {}): FormData {
  const f = new FormData();
  const bytes = typeof file === 'string' ? readFileSync(file) : file;
  f.append('file', new Blob([new Uint8Array(bytes)], { type: 'application/octet-stream' }), name);
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  return f;
}

const upload = (body: FormData, version = 'v2') => alice.api(`/api/${version}/media`, { method: 'POST', body });
const mediaRows = async () => Number((await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from media_attachments`))[0]!.n);
const workDirs = () => readdirSync(path.join(roost.dataDir, 'tmp', 'media')).filter((n) => n.startsWith('work-'));
const uploadTemps = () => readdirSync(path.join(roost.dataDir, 'tmp', 'uploads'));
const pendingDir = () => path.join(roost.dataDir, 'media', 'media_attachments', 'pending');
const pending = () => (existsSync(pendingDir()) ? readdirSync(pendingDir()) : []);

let clip: string; // 20 s, 1920×1080, 30 fps, MPEG-4 part 2 + MP3 in MP4
let song: string; // 3 min Ogg Vorbis

beforeAll(async () => {
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
  ffmpeg = ffmpegOf(roost.services).ffmpegPath!;
  ffprobe = ffmpegOf(roost.services).ffprobePath!;
  tmp = mkdtempSync(path.join(os.tmpdir(), 'roost-av-'));
  // Cheap to make (a fast codec at its lowest quality); what is asserted does not depend on quality.
  clip = make('clip.mp4', [
    '-f', 'lavfi', '-i', 'testsrc=size=1920x1080:rate=30:duration=20', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=20',
    '-c:v', 'mpeg4', '-q:v', '31', '-g', '300', '-c:a', 'libmp3lame', '-b:a', '48k', '-shortest',
  ]);
  song = make('song.ogg', ['-f', 'lavfi', '-i', 'sine=frequency=330:duration=180', '-ac', '1', '-c:a', 'libvorbis', '-q:a', '0']);
}, 120_000);
afterAll(async () => {
  await roost?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Holds alice's media processing (a job of her ordering key on the media lane, not due) until released. */
async function hold(): Promise<() => Promise<void>> {
  const sql = roost.services.db.sql;
  const blocker = await enqueue(sql, { kind: 'test.hold', queue: MEDIA_QUEUE, payload: {}, runAt: new Date(Date.now() + 3_600_000), orderingKey: mediaOrderingKey(alice.account.id) });
  return async () => {
    await sql.query(`delete from jobs where id = $1`, [blocker]);
    await sql.query(`select pg_notify('${JOBS_NOTIFY_CHANNEL}', $1)`, [MEDIA_QUEUE]);
  };
}

async function processed(id: string, timeoutMs = 240_000) {
  return eventually(async () => {
    const r = await alice.api(`/api/v1/media/${id}`);
    return r.status === 200 || r.status === 422 ? r : null;
  }, timeoutMs, `media ${id} processed`);
}

describe('POST /api/v2/media with video (queued)', () => {
  it('a 20 s 1080p clip: 202, 206 while queued (a status refused), then 200 with an H.264/AAC MP4 that plays', async () => {
    const release = await hold();
    const res = await upload(form(clip, 'holiday.mp4', { description: 'Bars and a tone' }));
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: res.body.id, type: 'video', url: null, preview_url: null, remote_url: null, preview_remote_url: null, text_url: null,
      meta: null, description: 'Bars and a tone', blurhash: null,
    });
    const waiting = await alice.api(`/api/v1/media/${res.body.id}`);
    expect([waiting.status, waiting.body.url, waiting.body.type]).toEqual([206, null, 'video']);
    const early = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'too soon', media_ids: [res.body.id] } });
    expect([early.status, early.body]).toEqual([422, { error: 'Cannot attach files that have not finished processing. Try again in a moment!' }]);
    // The upload waits as a file of its own; the request's temporary file is gone.
    expect(pending()).toEqual([res.body.id]);

    await release();
    const done = await processed(res.body.id);
    expect(done.status).toBe(200);
    const m = done.body;
    expect(m).toMatchObject({ id: res.body.id, type: 'video', description: 'Bars and a tone', remote_url: null });
    expect(m.url).toMatch(/\/system\/media_attachments\/files\/(\d{3}\/){6}original\/[0-9a-f]{16}\.mp4$/);
    expect(m.preview_url).toMatch(/\/system\/media_attachments\/files\/(\d{3}\/){6}small\/[0-9a-f]{16}\.png$/);
    expect(m.blurhash).toMatch(/^U.{35}$/);
    // Mastodon's meta: the original as ffprobe reads the output, the small preview's size.
    expect(Object.keys(m.meta)).toEqual(['original', 'small']);
    expect(Object.keys(m.meta.original)).toEqual(['width', 'height', 'frame_rate', 'duration', 'bitrate']);
    expect(m.meta.original).toMatchObject({ width: 1920, height: 1080, frame_rate: '30/1' });
    expect(m.meta.original.duration).toBeCloseTo(20, 0);
    expect(m.meta.original.bitrate).toBeGreaterThan(10_000);
    expect(m.meta.small).toEqual({ width: 640, height: 360, size: '640x360', aspect: 640 / 360 });

    const video = await download(m.url, 'out.mp4');
    expect(video.type).toBe('video/mp4');
    const p = probe(video.file);
    expect(p.format.format_name).toContain('mp4');
    expect(p.streams.map((s) => [s.codec_type, s.codec_name])).toEqual([['video', 'h264'], ['audio', 'aac']]);
    expect(p.streams[0]).toMatchObject({ width: 1920, height: 1080, pix_fmt: 'yuv420p' });
    expect(Number(p.format.duration)).toBeCloseTo(20, 0);
    // The first frame decodes, and shows what the clip's first frame shows.
    const out = firstFrame(video.file);
    const src = firstFrame(clip);
    expect(out.length).toBe(64 * 36 * 3);
    let diff = 0;
    for (let i = 0; i < out.length; i++) diff += Math.abs(out[i]! - src[i]!);
    expect(diff / out.length).toBeLessThan(12);
    // The preview is a PNG of that frame.
    const preview = await download(m.preview_url, 'small.png');
    expect(preview.type).toBe('image/png');
    expect(await sharp(preview.file).metadata()).toMatchObject({ format: 'png', width: 640, height: 360 });

    // Now a status takes it, and serves it as Mastodon does; the Note carries it as a Document.
    const post = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'a clip', media_ids: [m.id] } });
    expect(post.status).toBe(200);
    expect(post.body.media_attachments).toEqual([{ ...m }]);
    // (one attachment is compacted to an object, as JSON-LD compacts a one-element array)
    const note = (await (await fetch(post.body.uri, { headers: { accept: 'application/activity+json' } })).json()) as { attachment: unknown };
    expect(note.attachment).toEqual({ type: 'Document', mediaType: 'video/mp4', url: m.url, name: 'Bars and a tone', blurhash: m.blurhash, width: 1920, height: 1080 });

    // Nothing left behind: no pending upload, no work directory, no job.
    await eventually(async () => (await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from jobs where kind = 'media.process'`))[0]!.n === 0);
    expect(pending()).toEqual([]);
    expect(workDirs()).toEqual([]);
  }, 300_000);
});

describe('POST /api/v2/media with audio (queued)', () => {
  it('a 3-minute Ogg Vorbis file becomes an MP3 of the same length, meta with duration and bitrate, no preview', async () => {
    const res = await upload(form(song, 'song.ogg'));
    expect([res.status, res.body.type, res.body.url]).toEqual([202, 'audio', null]);
    const done = await processed(res.body.id);
    expect(done.status).toBe(200);
    const m = done.body;
    expect(m).toMatchObject({ type: 'audio', preview_url: null, blurhash: null });
    expect(m.url).toMatch(/\/original\/[0-9a-f]{16}\.mp3$/);
    expect(Object.keys(m.meta)).toEqual(['original']);
    expect(Object.keys(m.meta.original)).toEqual(['duration', 'bitrate']);
    expect(m.meta.original.duration).toBeCloseTo(180, 0);
    expect(m.meta.original.bitrate).toBeGreaterThan(8_000);
    const audio = await download(m.url, 'out.mp3');
    expect(audio.type).toBe('audio/mpeg');
    const p = probe(audio.file);
    expect(p.streams.map((s) => [s.codec_type, s.codec_name])).toEqual([['audio', 'mp3']]);
    expect(Number(p.format.duration)).toBeCloseTo(180, 0);
    const post = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'a song', media_ids: [m.id] } });
    expect(post.status).toBe(200);
    const note = (await (await fetch(post.body.uri, { headers: { accept: 'application/activity+json' } })).json()) as { attachment: unknown };
    expect(note.attachment).toEqual({ type: 'Document', mediaType: 'audio/mpeg', url: m.url });
    expect(workDirs()).toEqual([]);
  }, 300_000);
});

describe('POST /api/v1/media with video and audio (synchronous, as Mastodon v1)', () => {
  it('a WebM (VP8 + Vorbis) and a MOV are transcoded in the request; WAV, FLAC and M4A become MP3', async () => {
    const webm = make('s.webm', ['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25:duration=2', '-f', 'lavfi', '-i', 'sine=duration=2', '-c:v', 'libvpx', '-b:v', '200k', '-c:a', 'libvorbis']);
    const mov = make('s.mov', ['-f', 'lavfi', '-i', 'testsrc=size=321x241:rate=24:duration=1', '-c:v', 'mpeg4']);
    for (const [file, name, size, rate] of [[webm, 'a.webm', [320, 240], '25/1'], [mov, 'b.mov', [320, 240], '24/1']] as const) {
      const res = await upload(form(file, name), 'v1');
      expect([name, res.status, res.body.type]).toEqual([name, 200, 'video']);
      // Odd sizes are cropped to even ones (H.264's 4:2:0 needs them).
      expect(res.body.meta.original).toMatchObject({ width: size[0], height: size[1], frame_rate: rate });
      const out = await download(res.body.url, `${name}.mp4`);
      expect(probe(out.file).streams.map((s) => s.codec_name)[0]).toBe('h264');
    }
    // Two at once: the default media.transcodeConcurrency (1) lets one ffmpeg run, the other waits.
    const both = await Promise.all([upload(form(webm, 'c.webm'), 'v1'), upload(form(mov, 'd.mov'), 'v1')]);
    expect(both.map((r) => [r.status, r.body.type])).toEqual([[200, 'video'], [200, 'video']]);
    expect(ffmpegOf(roost.services).peakRunning).toBe(1);
    for (const ext of ['wav', 'flac', 'm4a']) {
      const file = make(`s.${ext}`, ['-f', 'lavfi', '-i', 'sine=duration=3']);
      const res = await upload(form(file, `x.${ext}`), 'v1');
      expect([ext, res.status, res.body.type, res.body.preview_url]).toEqual([ext, 200, 'audio', null]);
      expect(res.body.meta.original.duration).toBeCloseTo(3, 0);
      expect(probe((await download(res.body.url, `${ext}.mp3`)).file).streams.map((s) => s.codec_name)).toEqual(['mp3']);
    }
    expect(workDirs()).toEqual([]);
  }, 120_000);

  it('an H.264/AAC MP4 already in Mastodon’s format is copied, not re-encoded', async () => {
    const h264 = make('h264.mp4', ['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=30:duration=2', '-f', 'lavfi', '-i', 'sine=duration=2', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest']);
    const res = await upload(form(h264, 'h.mp4'), 'v1');
    expect([res.status, res.body.type]).toEqual([200, 'video']);
    const out = (await download(res.body.url, 'h-out.mp4')).file;
    // The same encoded frames: the video stream's packets are byte for byte the input's.
    const packets = (f: string) => run(ffprobe, ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=size', '-of', 'csv=p=0', f]);
    expect(packets(out)).toBe(packets(h264));
  }, 60_000);
});

describe('bad video and audio uploads', () => {
  it('text named .mp4, a truncated MP4, a too large and a too fast video: a clear 422 at once, nothing left behind', async () => {
    const before = await mediaRows();
    // moov at the end (no faststart): cut in half, it has no index and ffprobe cannot read it.
    const whole = readFileSync(make('t.mp4', ['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25:duration=4', '-c:v', 'mpeg4']));
    const truncated = whole.subarray(0, Math.floor(whole.length / 2));
    const huge = make('huge.mp4', ['-f', 'lavfi', '-i', 'color=c=red:size=4000x2200:rate=1:duration=1', '-c:v', 'mpeg4']);
    const fast = make('fast.mp4', ['-f', 'lavfi', '-i', 'color=c=red:size=64x64:rate=240:duration=0.05', '-c:v', 'mpeg4']);
    const cases: [FormData, string][] = [
      [form(Buffer.from('this is not a video, only text\n'.repeat(100)), 'movie.mp4'), 'Validation failed: File content type is invalid, File is invalid'],
      [form(truncated, 'cut.mp4'), 'File type of uploaded media could not be verified'],
      [form(huge, 'huge.mp4'), '4000x2200 videos are not supported'],
      [form(fast, 'fast.mp4'), '240fps videos are not supported'],
    ];
    for (const version of ['v1', 'v2']) {
      for (const [body, error] of cases) {
        const res = await upload(body, version);
        expect([version, res.status, res.body]).toEqual([version, 422, { error }]);
      }
    }
    expect(await mediaRows()).toBe(before);
    expect(pending()).toEqual([]);
    expect(workDirs()).toEqual([]);
    await eventually(async () => uploadTemps().length === 0, 5_000, 'the temporary upload files removed');
  }, 120_000);

  it('a video and an image cannot share a status (Mastodon’s words)', async () => {
    const video = await upload(form(make('v.webm', ['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10:duration=1', '-c:v', 'libvpx']), 'v.webm'), 'v1');
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: 'red' } }).png().toBuffer();
    const image = await upload(form(png, 'i.png'), 'v1');
    const res = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'mixed', media_ids: [image.body.id, video.body.id] } });
    expect([res.status, res.body]).toEqual([422, { error: 'Cannot attach a video to a post that already contains images' }]);
  }, 60_000);
});

describe('bounded in time', () => {
  it('a transcode over media.transcodeTimeoutSeconds is killed: the upload is marked failed (422), its files gone', async () => {
    const slow = await startTestRoost({ media: { transcodeTimeoutSeconds: 1 } });
    try {
      const carol = await createTestUser(slow, 'carol');
      const res = await carol.api('/api/v2/media', { method: 'POST', body: form(clip, 'clip.mp4') });
      expect(res.status).toBe(202);
      const failed = await eventually(async () => {
        const r = await carol.api(`/api/v1/media/${res.body.id}`);
        return r.status !== 206 ? r : null;
      }, 60_000, 'the upload marked failed');
      expect([failed.status, failed.body]).toEqual([422, { error: 'Error processing thumbnail for uploaded media' }]);
      const left = path.join(slow.dataDir, 'tmp', 'media');
      expect(readdirSync(left).filter((n) => n.startsWith('work-'))).toEqual([]);
      expect(existsSync(path.join(slow.dataDir, 'media', 'media_attachments', 'pending', res.body.id))).toBe(false);
      expect(existsSync(path.join(slow.dataDir, 'media', 'media_attachments', 'files'))).toBe(false);
    } finally {
      await slow.close();
    }
  }, 120_000);
});
