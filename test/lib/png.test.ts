import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodePng } from '../../src/lib/png.ts';
import { blurhashComponents, isValidBlurhash } from '../../src/lib/blurhash.ts';
import {
  DEFAULT_ICON_SIZES,
  DEFAULT_THUMBNAIL_SIZE,
  defaultIcon,
  defaultThumbnail,
} from '../../src/lib/default-thumbnail.ts';

// An independent CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) so the encoder's use of
// zlib.crc32 is checked against something else.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

interface Chunk {
  type: string;
  data: Buffer;
  crcOk: boolean;
}

/** Splits a PNG into chunks, checking each CRC; throws on a bad signature or truncation. */
function readChunks(png: Buffer): Chunk[] {
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const chunks: Chunk[] = [];
  let at = 8;
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    const crc = png.readUInt32BE(at + 8 + length);
    chunks.push({ type, data, crcOk: crc === crc32(png.subarray(at + 4, at + 8 + length)) });
    at += 12 + length;
  }
  expect(at).toBe(png.length);
  return chunks;
}

interface Decoded {
  width: number;
  height: number;
  colorType: number;
  /** RGBA, for comparison with the input. */
  rgba: Uint8Array;
  filters: Set<number>;
}

/** Enough of a PNG decoder for 8-bit RGB/RGBA, non-interlaced: inflate and unfilter. */
function decode(png: Buffer): Decoded {
  const chunks = readChunks(png);
  for (const c of chunks) expect(c.crcOk, `${c.type} CRC`).toBe(true);
  expect(chunks[0]!.type).toBe('IHDR');
  expect(chunks.at(-1)!.type).toBe('IEND');
  expect(chunks.at(-1)!.data.length).toBe(0);
  const ihdr = chunks[0]!.data;
  expect(ihdr.length).toBe(13);
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  const [bitDepth, colorType, compression, filterMethod, interlace] = ihdr.subarray(8);
  expect([bitDepth, compression, filterMethod, interlace]).toEqual([8, 0, 0, 0]);
  expect([2, 6]).toContain(colorType);
  const bpp = colorType === 6 ? 4 : 3;
  const stride = width * bpp;

  const raw = inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)));
  expect(raw.length).toBe(height * (stride + 1));

  const rgba = new Uint8Array(width * height * 4);
  const filters = new Set<number>();
  let prev = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    filters.add(filter);
    expect(filter).toBeLessThanOrEqual(4);
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const cur = new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? cur[i - bpp]! : 0;
      const b = prev[i]!;
      const c = i >= bpp ? prev[i - bpp]! : 0;
      let predictor = 0;
      if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
        predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      cur[i] = (line[i]! + predictor) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      rgba.set([cur[x * bpp]!, cur[x * bpp + 1]!, cur[x * bpp + 2]!, bpp === 4 ? cur[x * bpp + 3]! : 255], (y * width + x) * 4);
    }
    prev = cur;
  }
  return { width, height, colorType: colorType!, rgba, filters };
}

/** Deterministic noisy test image (so every filter type gets a chance). */
function testImage(width: number, height: number, alpha: boolean): Uint8ClampedArray {
  const px = new Uint8ClampedArray(width * height * 4);
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >>> 16) & 0xff;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const region = (x >> 3) % 4;
      px[i] = region === 0 ? rand() : (x * 7) & 0xff;
      px[i + 1] = region === 1 ? rand() : (y * 5) & 0xff;
      px[i + 2] = region === 2 ? (x * y) & 0xff : 128;
      px[i + 3] = alpha ? (x + y) & 0xff : 255;
    }
  }
  return px;
}

describe('encodePng', () => {
  it('writes signature, IHDR with the size, IDAT, IEND, all with valid CRCs', () => {
    const png = encodePng(testImage(13, 7, false), 13, 7);
    const chunks = readChunks(png);
    expect(chunks.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    expect(chunks.every((c) => c.crcOk)).toBe(true);
    expect(chunks[0]!.data.readUInt32BE(0)).toBe(13);
    expect(chunks[0]!.data.readUInt32BE(4)).toBe(7);
  });

  it('opaque images are written as RGB and decode back to the same pixels', () => {
    const px = testImage(40, 23, false);
    const decoded = decode(encodePng(px, 40, 23));
    expect(decoded.colorType).toBe(2);
    expect([decoded.width, decoded.height]).toEqual([40, 23]);
    expect(Buffer.from(decoded.rgba).equals(Buffer.from(px))).toBe(true);
  });

  it('images with transparency are written as RGBA and decode back to the same pixels', () => {
    const px = testImage(33, 17, true);
    const decoded = decode(encodePng(px, 33, 17));
    expect(decoded.colorType).toBe(6);
    expect(Buffer.from(decoded.rgba).equals(Buffer.from(px))).toBe(true);
  });

  it('alpha can be forced on, and compression level chosen', () => {
    const px = testImage(9, 9, false);
    const decoded = decode(encodePng(px, 9, 9, { alpha: true, level: 1 }));
    expect(decoded.colorType).toBe(6);
    expect(Buffer.from(decoded.rgba).equals(Buffer.from(px))).toBe(true);
  });

  it('uses several filter types on mixed content', () => {
    const decoded = decode(encodePng(testImage(64, 64, false), 64, 64));
    expect(decoded.filters.size).toBeGreaterThan(1);
  });

  it('a 1×1 image works', () => {
    const decoded = decode(encodePng(new Uint8Array([1, 2, 3, 4]), 1, 1));
    expect([...decoded.rgba]).toEqual([1, 2, 3, 4]);
  });

  it('rejects bad sizes', () => {
    expect(() => encodePng(new Uint8Array(16), 2, 3)).toThrow(RangeError);
    expect(() => encodePng(new Uint8Array(0), 0, 0)).toThrow(RangeError);
    expect(() => encodePng(new Uint8Array(8), 1.5, 1)).toThrow(RangeError);
  });
});

describe('default thumbnail and icons', () => {
  it('is a 600×315 PNG, a 1200×630 @2x PNG and a 4×4 blurhash of the @1x pixels', () => {
    const t = defaultThumbnail();
    const x1 = decode(t.png);
    const x2 = decode(t.png2x);
    expect([x1.width, x1.height]).toEqual([DEFAULT_THUMBNAIL_SIZE.width, DEFAULT_THUMBNAIL_SIZE.height]);
    expect([x2.width, x2.height]).toEqual([1200, 630]);
    expect([t.width, t.height]).toEqual([600, 315]);
    expect(isValidBlurhash(t.blurhash)).toBe(true);
    expect(blurhashComponents(t.blurhash)).toEqual({ x: 4, y: 4 });
    // Small enough to serve without fuss.
    expect(t.png.length).toBeLessThan(100_000);
    expect(t.png2x.length).toBeLessThan(250_000);
  });

  it('is memoised and deterministic', () => {
    expect(defaultThumbnail()).toBe(defaultThumbnail());
    expect(defaultThumbnail().blurhash).toBe('UaHc==tPN19c12obWVoLM_Irt3-mI=oMoMWV');
  });

  it('@2x is the same picture as @1x (downscaled @2x ≈ @1x)', () => {
    const x1 = decode(defaultThumbnail().png);
    const x2 = decode(defaultThumbnail().png2x);
    let totalDiff = 0;
    for (let y = 0; y < x1.height; y++) {
      for (let x = 0; x < x1.width; x++) {
        for (let ch = 0; ch < 3; ch++) {
          let sum = 0;
          for (const [dx, dy] of [[0, 0], [1, 0], [0, 1], [1, 1]]) sum += x2.rgba[((2 * y + dy) * x2.width + 2 * x + dx) * 4 + ch]!;
          totalDiff += Math.abs(sum / 4 - x1.rgba[(y * x1.width + x) * 4 + ch]!);
        }
      }
    }
    expect(totalDiff / (x1.width * x1.height * 3)).toBeLessThan(2);
  });

  it('icons are square PNGs of the requested size, memoised', () => {
    for (const size of [DEFAULT_ICON_SIZES[0], 192]) {
      const d = decode(defaultIcon(size));
      expect([d.width, d.height]).toEqual([size, size]);
    }
    expect(defaultIcon(48)).toBe(defaultIcon(48));
    expect(() => defaultIcon(0)).toThrow(RangeError);
    expect(() => defaultIcon(4096)).toThrow(RangeError);
  });
});
