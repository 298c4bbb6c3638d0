/**
 * Media across two real instances (real HTTP, real signatures): a post with two images on A
 * reaches B with both attachments — remote URLs (nothing downloaded), descriptions, blurhash,
 * focal point, sizes — as Documents carrying Mastodon's `blurhash` and `focalPoint`; a hostile
 * blurhash of 9×9 components is dropped while a 5×5 one is kept; an edit on A that reorders the
 * media and changes a description reaches B as an Update(Note), and B's /history shows both
 * versions with their media. A video and an audio post reach B as Documents of their media
 * types (video/mp4, audio/mpeg) and show there as `video` and `audio`. A remote status with a link gets its preview card on B, fetched
 * through the bounded fetcher, as a local one does.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import sharp from 'sharp';
import { encode } from 'blurhash';
import { Mention, PUBLIC_COLLECTION } from '@fedify/vocab';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { followAccount } from '../../src/services/follows.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { MediaCreate, MediaDocument, MediaNote } from '../../src/federation/convert/mastodon-media.ts';
import { sendActivity } from '../../src/federation/delivery.ts';
import { ffmpegOf } from '../../src/services/media-av.ts';

let a: TestRoost;
let b: TestRoost;
let alice: TestUser; // on A
let bob: TestUser; // on B, follows alice

const AP = { accept: 'application/activity+json' };

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
  [alice, bob] = await Promise.all([createTestUser(a, 'alice'), createTestUser(b, 'bob')]);
  const aliceOnB = (await lookupRemoteAccount(b.services, b.federation, a.at('/users/alice')))!;
  await lookupRemoteAccount(a.services, a.federation, b.at('/users/bob'));
  const follow = await followAccount(b.services, bob.account.id, aliceOnB.id);
  await eventually(async () => (await b.services.db.sql.query(`select 1 from follows where id = $1 and state = 'accepted'`, [follow.id])).length > 0, 20_000, 'the Accept');
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

async function upload(u: TestUser, fields: Record<string, string>, color: { r: number; g: number; b: number }, width = 30, height = 20) {
  const png = await sharp({ create: { width, height, channels: 3, background: color } }).png().toBuffer();
  const f = new FormData();
  f.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'x.png');
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  const res = await u.api('/api/v1/media', { method: 'POST', body: f });
  expect(res.status).toBe(200);
  return res.body as { id: string; url: string; blurhash: string; description: string };
}

interface MediaRow {
  id: string;
  position: number;
  type: string;
  remote_url: string | null;
  file_key: string | null;
  description: string | null;
  blurhash: string | null;
  focus_x: number | null;
  focus_y: number | null;
}
async function mediaOn(r: TestRoost, statusId: string): Promise<MediaRow[]> {
  return r.services.db.sql.query<MediaRow>(
    `select id::text, position, type, remote_url, file_key, description, blurhash, focus_x, focus_y
       from media_attachments where status_id = $1 order by position`,
    [statusId],
  );
}
const statusOn = async (r: TestRoost, uri: string) =>
  (await r.services.db.sql.query<{ id: string; edited_at: string | null }>(`select id::text, edited_at from statuses where uri = $1`, [uri]))[0];

let posted: { id: string; uri: string };
let red: Awaited<ReturnType<typeof upload>>;
let blue: Awaited<ReturnType<typeof upload>>;

describe('media between two instances', () => {
  it('a post with two images on A appears on B with both attachments, descriptions, blurhash and focal point', async () => {
    red = await upload(alice, { description: 'A red square', focus: '0.5,-0.25' }, { r: 220, g: 30, b: 30 });
    blue = await upload(alice, { description: 'A blue one' }, { r: 30, g: 30, b: 220 }, 20, 40);
    const res = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'two pictures', media_ids: [red.id, blue.id] } });
    expect(res.status).toBe(200);
    posted = res.body;

    // A serves the Note with Mastodon's Document fields (plain `blurhash` and `focalPoint` keys).
    const note = (await (await fetch(posted.uri, { headers: AP })).json()) as { attachment: unknown[]; '@context': unknown[] };
    expect(note.attachment).toEqual([
      { type: 'Document', mediaType: 'image/png', url: red.url, name: 'A red square', blurhash: red.blurhash, focalPoint: [0.5, -0.25], width: 30, height: 20 },
      { type: 'Document', mediaType: 'image/png', url: blue.url, name: 'A blue one', blurhash: blue.blurhash, width: 20, height: 40 },
    ]);
    expect(note['@context']).toContainEqual({ blurhash: 'toot:blurhash', focalPoint: { '@container': '@list', '@id': 'toot:focalPoint' } });

    const onB = await eventually(() => statusOn(b, posted.uri), 20_000, 'the post on B');
    const rows = await mediaOn(b, onB.id);
    expect(rows.map(({ id: _id, ...r }) => r)).toEqual([
      { position: 1, type: 'image', remote_url: red.url, file_key: null, description: 'A red square', blurhash: red.blurhash, focus_x: 0.5, focus_y: -0.25 },
      { position: 2, type: 'image', remote_url: blue.url, file_key: null, description: 'A blue one', blurhash: blue.blurhash, focus_x: null, focus_y: null },
    ]);
    // Bob reads it through B's API: shown at the remote URL (B downloads nothing).
    const seen = await bob.api(`/api/v1/statuses/${onB.id}`);
    expect(seen.body.media_attachments).toEqual([
      {
        id: rows[0]!.id, type: 'image', url: red.url, preview_url: red.url, remote_url: red.url, preview_remote_url: null, text_url: null,
        meta: { original: { width: 30, height: 20, size: '30x20', aspect: 1.5 }, focus: { x: 0.5, y: -0.25 } },
        description: 'A red square', blurhash: red.blurhash,
      },
      {
        id: rows[1]!.id, type: 'image', url: blue.url, preview_url: blue.url, remote_url: blue.url, preview_remote_url: null, text_url: null,
        meta: { original: { width: 20, height: 40, size: '20x40', aspect: 0.5 } },
        description: 'A blue one', blurhash: blue.blurhash,
      },
    ]);
    // No card for a status with media, nothing fetched from A's files.
    expect(seen.body.card).toBeNull();
  });

  it('drops a hostile blurhash of 9×9 components and a non-http URL; keeps a 5×5 one', async () => {
    const pixels = new Uint8ClampedArray(4 * 4 * 4).fill(128);
    const nineByNine = encode(pixels, 4, 4, 9, 9);
    const fiveByFive = encode(pixels, 4, 4, 5, 5);
    expect([nineByNine.length, fiveByFive.length]).toEqual([4 + 2 * 81, 4 + 2 * 25]);
    const id = b.at(`/users/bob/statuses/hostile-media-${Date.now()}`);
    const note = new MediaNote({
      id: new URL(id),
      attribution: new URL(b.at('/users/bob')),
      to: PUBLIC_COLLECTION,
      content: '<p>hostile @alice</p>',
      tags: [new Mention({ href: new URL(a.at('/users/alice')), name: `@alice@${a.config.domain}` })],
      attachments: [
        new MediaDocument({ url: new URL('https://files.b.test/1.png'), mediaType: 'image/png', name: 'big hash', blurhash: nineByNine }),
        new MediaDocument({ url: new URL('javascript:alert(1)'), mediaType: 'image/png', name: 'script' }),
        new MediaDocument({ url: new URL('https://files.b.test/2.png'), mediaType: 'image/png', name: '<b>small</b> hash', blurhash: fiveByFive, focalPoint: [2, 0] }),
      ],
    });
    const ctx = b.federation.createContext(new URL(b.url), undefined);
    const create = new MediaCreate({ id: new URL(`${id}/activity`), actor: new URL(b.at('/users/bob')), to: PUBLIC_COLLECTION, object: note });
    // Through Roost's delivery (what sends statuses), which posts the JSON built here as it is.
    await sendActivity(b.services, ctx, 'bob', { id: new URL(a.at('/users/alice')), inboxId: new URL(a.at('/users/alice/inbox')), endpoints: null }, create);
    const onA = await eventually(() => statusOn(a, id), 20_000, 'the hostile post on A');
    await settled(a, b);
    expect((await mediaOn(a, onA.id)).map((r) => [r.remote_url, r.description, r.blurhash, r.focus_x])).toEqual([
      ['https://files.b.test/1.png', 'big hash', null, null],
      ['https://files.b.test/2.png', 'small hash', fiveByFive, null],
    ]);
  });

  it('a video and an audio post on A reach B as Documents with their media types, shown there as video and audio', async () => {
    const ff = ffmpegOf(a.services).ffmpegPath!;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'roost-fed-av-'));
    try {
      const make = (name: string, args: string[]) => {
        const file = path.join(dir, name);
        const r = spawnSync(ff, ['-nostdin', '-loglevel', 'error', '-y', ...args, file]);
        expect(r.status).toBe(0);
        return readFileSync(file);
      };
      const send = async (bytes: Buffer, name: string, description: string) => {
        const f = new FormData();
        f.append('file', new Blob([new Uint8Array(bytes)]), name);
        f.append('description', description);
        const res = await alice.api('/api/v1/media', { method: 'POST', body: f });
        expect([res.status, res.body.url === null]).toEqual([200, false]);
        return res.body as { id: string; url: string; blurhash: string | null; type: string };
      };
      const video = await send(make('v.webm', ['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10:duration=1', '-c:v', 'libvpx']), 'v.webm', 'A test card');
      const audio = await send(make('a.wav', ['-f', 'lavfi', '-i', 'sine=duration=1']), 'a.wav', 'A tone');
      for (const [m, type, mediaType] of [[video, 'video', 'video/mp4'], [audio, 'audio', 'audio/mpeg']] as const) {
        const res = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: `a ${type}`, media_ids: [m.id] } });
        expect(res.status).toBe(200);
        const note = (await (await fetch(res.body.uri, { headers: AP })).json()) as { attachment: { type: string; mediaType: string; url: string } };
        expect([note.attachment.type, note.attachment.mediaType, note.attachment.url]).toEqual(['Document', mediaType, m.url]);
        const onB = await eventually(() => statusOn(b, res.body.uri), 20_000, `the ${type} post on B`);
        const seen = (await bob.api(`/api/v1/statuses/${onB.id}`)).body;
        expect(seen.media_attachments).toEqual([
          {
            id: seen.media_attachments[0].id, type, url: m.url, preview_url: null, remote_url: m.url, preview_remote_url: null, text_url: null,
            meta: type === 'video' ? { original: { width: 160, height: 120, size: '160x120', aspect: 160 / 120 } } : null,
            description: type === 'video' ? 'A test card' : 'A tone', blurhash: m.blurhash,
          },
        ]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('an edit on A reordering the media and changing a description shows on B, with a history', async () => {
    const edited = await alice.api(`/api/v1/statuses/${posted.id}`, {
      method: 'PUT',
      body: { status: 'two pictures, swapped', media_ids: [blue.id, red.id], media_attributes: [{ id: blue.id, description: 'A deep blue one' }] },
    });
    expect(edited.status).toBe(200);
    const onB = await eventually(async () => {
      const s = await statusOn(b, posted.uri);
      return s?.edited_at ? s : null;
    }, 20_000, 'the Update on B');
    expect((await mediaOn(b, onB.id)).map((r) => [r.position, r.remote_url, r.description, r.blurhash])).toEqual([
      [1, blue.url, 'A deep blue one', blue.blurhash],
      [2, red.url, 'A red square', red.blurhash],
    ]);
    const seen = (await bob.api(`/api/v1/statuses/${onB.id}`)).body;
    expect(seen.media_attachments.map((m: { url: string; description: string }) => [m.url, m.description])).toEqual([
      [blue.url, 'A deep blue one'],
      [red.url, 'A red square'],
    ]);
    const history = await bob.api(`/api/v1/statuses/${onB.id}/history`);
    expect(history.status).toBe(200);
    expect(history.body.map((v: { content: string; media_attachments: { url: string; description: string }[] }) => [
      v.content,
      v.media_attachments.map((m) => [m.url, m.description]),
    ])).toEqual([
      ['<p>two pictures</p>', [[red.url, 'A red square'], [blue.url, 'A blue one']]],
      ['<p>two pictures, swapped</p>', [[blue.url, 'A deep blue one'], [red.url, 'A red square']]],
    ]);
    expect(history.body[1].created_at).toBe(edited.body.edited_at);
  });
});

describe('preview cards of remote statuses', () => {
  let site: Server;
  let requests: string[] = [];
  beforeAll(async () => {
    site = createServer((req, res) => {
      requests.push(req.url ?? '');
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end('<html><head><meta property="og:title" content="Remote &amp; linked"><meta property="og:description" content="Read on."></head></html>');
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise((r) => site.close(r)));

  it('a remote status with a link gets a card on B; one with media does not', async () => {
    const link = `http://127.0.0.1:${(site.address() as AddressInfo).port}/article`;
    requests = [];
    const posted = (await alice.api('/api/v1/statuses', { method: 'POST', body: { status: `Look: ${link}` } })).body;
    const onB = await eventually(() => statusOn(b, posted.uri), 20_000, 'the post on B');
    const card = await eventually(async () => (await bob.api(`/api/v1/statuses/${onB.id}`)).body.card, 20_000, 'the card on B');
    expect(card).toMatchObject({ url: link, title: 'Remote & linked', description: 'Read on.', type: 'link' });
    // A made its own card of the same page: one fetch each.
    await settled(a, b);
    expect(requests).toEqual(['/article', '/article']);

    const pic = await upload(alice, { description: 'pic' }, { r: 1, g: 1, b: 1 });
    const withMedia = (await alice.api('/api/v1/statuses', { method: 'POST', body: { status: `Also ${link}?x`, media_ids: [pic.id] } })).body;
    const mediaOnB = await eventually(() => statusOn(b, withMedia.uri), 20_000, 'the post with media on B');
    await settled(a, b);
    expect((await bob.api(`/api/v1/statuses/${mediaOnB.id}`)).body.card).toBeNull();
    expect(requests).toEqual(['/article', '/article']);
  });
});
