/**
 * Uploaded avatars and headers are decoded and re-encoded with bounded pixel counts (a
 * decompression bomb is a 422, refused from its header before anything is decoded), lose their
 * EXIF (GPS positions) on the way, and a failed profile transaction leaves no file behind.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { crc32, deflateSync } from 'node:zlib';
import path from 'node:path';
import sharp from 'sharp';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let me: TestUser;
beforeAll(async () => {
  roost = await startTestRoost({ bodyLimits: { maxImagePixels: 4_000_000 } });
  me = await createTestUser(roost, 'pixels');
});
afterAll(async () => roost?.close());

const upload = (user: TestUser, field: string, data: Uint8Array, name: string) => {
  const form = new FormData();
  form.append(field, new Blob([new Uint8Array(data)]), name);
  return user.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: form });
};

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type, 'latin1'), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** A PNG whose header announces width × height RGBA pixels; only the first rows are in its data. */
function pngBomb(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const rows = Buffer.alloc(4 * (width * 4 + 1));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/** The tags of a TIFF IFD (EXIF is a TIFF structure), as tag → value offset/value field. */
function ifdTags(tiff: Buffer, offset: number): Map<number, { type: number; count: number; value: number; at: number }> {
  const le = tiff.toString('latin1', 0, 2) === 'II';
  const u16 = (o: number) => (le ? tiff.readUInt16LE(o) : tiff.readUInt16BE(o));
  const u32 = (o: number) => (le ? tiff.readUInt32LE(o) : tiff.readUInt32BE(o));
  const tags = new Map<number, { type: number; count: number; value: number; at: number }>();
  const n = u16(offset);
  for (let i = 0; i < n; i++) {
    const e = offset + 2 + i * 12;
    tags.set(u16(e), { type: u16(e + 2), count: u32(e + 4), value: u32(e + 8), at: e + 8 });
  }
  return tags;
}

/** The GPS latitude reference ('N'/'S') an EXIF block carries, or null when it has no GPS IFD. */
function gpsLatitudeRef(exif: Buffer | undefined): string | null {
  if (!exif) return null;
  const tiff = exif.toString('latin1', 0, 4) === 'Exif' ? exif.subarray(6) : exif;
  const le = tiff.toString('latin1', 0, 2) === 'II';
  const ifd0 = le ? tiff.readUInt32LE(4) : tiff.readUInt32BE(4);
  const gps = ifdTags(tiff, ifd0).get(0x8825);
  if (!gps) return null;
  const ref = ifdTags(tiff, gps.value).get(0x0001);
  return ref ? tiff.toString('latin1', ref.at, ref.at + 1) : null;
}

/** Send a request head (no body) and return what comes back before the server closes. */
function headOnly(url: string, head: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(head));
    let text = '';
    const timer = setTimeout(() => socket.destroy(), 3000);
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
  });
}

describe('uploads are checked before they are read', () => {
  it('a bad token on update_credentials is a 401 before any of a 30 MB body is sent', async () => {
    const text = await headOnly(
      roost.url,
      `PATCH /api/v1/accounts/update_credentials HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer not-a-token\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${30 * 1024 * 1024}\r\n\r\n`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 401 /);
    expect(text).toContain('{"error":"The access token is invalid"}');
  });

  it('a valid token still cannot send more than the upload limit, refused on Content-Length', async () => {
    const text = await headOnly(
      roost.url,
      `PATCH /api/v1/accounts/update_credentials HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${me.token}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${90 * 1024 * 1024}\r\n\r\n`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toContain(`{"error":"Request body too large (limit ${33 * 1024 * 1024} bytes)"}`);
  });

  it('any other API route: a bad token with a body is a 401 before the body, the body limit is 1 MiB', async () => {
    const bad = await headOnly(
      roost.url,
      `POST /api/v1/accounts/1/follow HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer not-a-token\r\nContent-Type: application/json\r\nContent-Length: 500000\r\n\r\n`,
    );
    expect(bad).toMatch(/^HTTP\/1\.1 401 /);
    const big = await headOnly(roost.url, `POST /api/v1/apps HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${90 * 1024 * 1024}\r\n\r\n`);
    expect(big).toMatch(/^HTTP\/1\.1 413 /);
    expect(big).toContain('{"error":"Request body too large (limit 1048576 bytes)"}');
  });
});

describe('uploaded images', () => {
  it('refuses a PNG announcing 15000×15000 pixels (900 MB decoded) with a 422, from its header', async () => {
    const bomb = pngBomb(15000, 15000);
    expect(bomb.length).toBeLessThan(200_000);
    const rssBefore = process.memoryUsage().rss;
    const res = await upload(me, 'avatar', bomb, 'bomb.png');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: 'Validation failed: Avatar dimensions must not exceed 4000000 pixels',
      details: { avatar: [{ error: 'ERR_TOO_BIG', description: 'dimensions must not exceed 4000000 pixels' }] },
    });
    // Nothing near 900 MB was allocated for it.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
    expect(existsSync(path.join(roost.dataDir, 'media', 'accounts', 'avatars', me.account.id))).toBe(false);
  });

  it('refuses a real image over the pixel limit, and takes one under it scaled to Mastodon\'s header size', async () => {
    const big = await sharp({ create: { width: 2100, height: 2000, channels: 3, background: { r: 1, g: 2, b: 3 } } }).png().toBuffer();
    const refused = await upload(me, 'header', big, 'big.png');
    expect(refused.status).toBe(422);
    expect(refused.body.details).toEqual({ header: [{ error: 'ERR_TOO_BIG', description: 'dimensions must not exceed 4000000 pixels' }] });

    const ok = await sharp({ create: { width: 3000, height: 1200, channels: 3, background: { r: 1, g: 2, b: 3 } } }).webp().toBuffer();
    const res = await upload(me, 'header', ok, 'ok.webp');
    expect(res.status).toBe(200);
    expect(res.body.header).toMatch(/\.webp$/);
    const served = await fetch(res.body.header);
    expect(served.headers.get('content-type')).toBe('image/webp');
    expect(await sharp(Buffer.from(await served.arrayBuffer())).metadata()).toMatchObject({ format: 'webp', width: 1500, height: 500 });
  });

  it('a file that is not an image behind a PNG signature is a 422, not a 500', async () => {
    const fake = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 7)]);
    const res = await upload(me, 'avatar', fake, 'fake.png');
    expect(res.status).toBe(422);
    expect(res.body.details).toEqual({ avatar: [{ error: 'ERR_INVALID', description: 'must be a PNG, JPEG, GIF or WebP image' }] });
  });

  it('strips EXIF: a JPEG carrying a GPS position is served without it', async () => {
    const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 10, g: 120, b: 200 } } })
      .jpeg()
      .withExif({
        IFD0: { Make: 'RoostCam', Copyright: 'Where I live' },
        IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '52/1 31/1 1234/100', GPSLongitudeRef: 'E', GPSLongitude: '13/1 24/1 0/1' },
      })
      .toBuffer();
    // The upload really carries a GPS position.
    expect(gpsLatitudeRef((await sharp(jpeg).metadata()).exif)).toBe('N');
    expect(jpeg.includes('RoostCam')).toBe(true);

    const res = await upload(me, 'avatar', jpeg, 'holiday.jpg');
    expect(res.status).toBe(200);
    expect(res.body.avatar).toMatch(/\.jpg$/);
    const bytes = Buffer.from(await (await fetch(res.body.avatar)).arrayBuffer());
    const meta = await sharp(bytes).metadata();
    expect(meta).toMatchObject({ format: 'jpeg', width: 64, height: 48 });
    expect(meta.exif).toBeUndefined();
    expect(meta.xmp).toBeUndefined();
    expect(gpsLatitudeRef(meta.exif)).toBeNull();
    expect(bytes.includes('Exif')).toBe(false);
    expect(bytes.includes('RoostCam')).toBe(false);
    expect(bytes.includes('Where I live')).toBe(false);
  });

  it('a failed profile transaction leaves no image file behind', async () => {
    const user = await createTestUser(roost, 'rollback');
    const sql = roost.services.db.sql;
    await sql.query(`create function roost_test_refuse_avatar() returns trigger language plpgsql as $$
      begin
        if new.avatar_url is distinct from old.avatar_url then raise exception 'refused by the test'; end if;
        return new;
      end $$`);
    await sql.query(`create trigger roost_test_refuse_avatar before update on accounts for each row execute function roost_test_refuse_avatar()`);
    try {
      const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 9, g: 9, b: 9 } } }).png().toBuffer();
      const res = await upload(user, 'avatar', png, 'a.png');
      expect(res.status).toBe(500);
      const dir = path.join(roost.dataDir, 'media', 'accounts', 'avatars', user.account.id);
      expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
      expect(existsSync(dir)).toBe(false);
      const after = await user.api('/api/v1/accounts/verify_credentials');
      expect(after.body.avatar).toBe(`${roost.url}/avatars/original/missing.png`);
    } finally {
      await sql.query('drop trigger roost_test_refuse_avatar on accounts');
      await sql.query('drop function roost_test_refuse_avatar()');
    }
    // and once the database takes it, the file is there
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 9, g: 9, b: 9 } } }).png().toBuffer();
    const res = await upload(user, 'avatar', png, 'a.png');
    expect(res.status).toBe(200);
    expect(readdirSync(path.join(roost.dataDir, 'media', 'accounts', 'avatars', user.account.id))).toEqual([path.posix.basename(res.body.avatar)]);
  });

  it('media files: ETag and Last-Modified, 304 on revalidation, HEAD with the length', async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 9, g: 9, b: 9 } } }).png().toBuffer();
    const res = await upload(me, 'avatar', png, 'a.png');
    const first = await fetch(res.body.avatar);
    const body = Buffer.from(await first.arrayBuffer());
    expect(first.headers.get('content-length')).toBe(String(body.length));
    expect(first.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(first.headers.get('last-modified')).toMatch(/GMT$/);
    const again = await fetch(res.body.avatar, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect((await again.arrayBuffer()).byteLength).toBe(0);
    const since = await fetch(res.body.avatar, { headers: { 'if-modified-since': first.headers.get('last-modified')! } });
    expect(since.status).toBe(304);
    const head = await fetch(res.body.avatar, { method: 'HEAD' });
    expect(head.headers.get('content-length')).toBe(String(body.length));
    expect(first.headers.get('accept-ranges')).toBe('bytes');

    const part = await fetch(res.body.avatar, { headers: { range: 'bytes=2-5' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 2-5/${body.length}`);
    expect(part.headers.get('content-length')).toBe('4');
    expect(Buffer.from(await part.arrayBuffer()).equals(body.subarray(2, 6))).toBe(true);
    const tail = await fetch(res.body.avatar, { headers: { range: 'bytes=-3' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).equals(body.subarray(body.length - 3))).toBe(true);
    const beyond = await fetch(res.body.avatar, { headers: { range: `bytes=${body.length}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${body.length}`);
    const otherVersion = await fetch(res.body.avatar, { headers: { range: 'bytes=2-5', 'if-range': '"0-0"' } });
    expect(otherVersion.status).toBe(200);
    expect((await otherVersion.arrayBuffer()).byteLength).toBe(body.length);
  });
});
