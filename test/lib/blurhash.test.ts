import { describe, expect, it } from 'vitest';
import {
  blurhashAverageColor,
  blurhashComponents,
  encodeBlurhash,
  isValidBlurhash,
} from '../../src/lib/blurhash.ts';

function solid(width: number, height: number, r: number, g: number, b: number): Uint8ClampedArray {
  const px = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < px.length; i += 4) px.set([r, g, b, 255], i);
  return px;
}

describe('encodeBlurhash', () => {
  it('1×1 components of a white image: size flag "0", no AC ("0"), DC 0xFFFFFF = "TSUA"', () => {
    // 0xFFFFFF = 16777215 = 29·83³ + 28·83² + 30·83 + 10 → digits T, S, U, A.
    expect(encodeBlurhash(solid(2, 2, 255, 255, 255), 2, 2, 1, 1)).toBe('00TSUA');
  });

  it('4×4 components of a 32×32 white image, derived by hand', () => {
    // Size flag (4-1) + (4-1)·9 = 30 → "U". DC is white → "TSUA".
    // The basis is sampled at x = 0…w-1 (no half-pixel offset), so Σx cos(π·i·x/w) is w for i = 0,
    // 0 for even i > 0 and 1 for odd i: a flat image has small odd AC terms. With linear value 1:
    //   (odd i, j = 0) and (i = 0, odd j): 2/32 = 0.0625; (odd i, odd j): 2/1024; the rest 0.
    // Max AC 0.0625 → quantised floor(0.0625·166 − 0.5) = 9 → "9", maximum value 10/166.
    //   0.0625   → floor(√(0.0625·16.6)·9 + 9.5) = 18 per channel → 18·361 + 18·19 + 18 = 6858 → "~q"
    //   0        → 9 per channel → 3429 → "fQ"
    //   2/1024   → floor(√(0.001953·16.6)·9 + 9.5) = 11 → 4191 → "of"
    // AC order is row by row (j), then i, skipping (0, 0).
    const expected =
      'U9TSUA' +
      ['~q', 'fQ', '~q'].join('') + // j = 0: i = 1, 2, 3
      ['~q', 'of', 'fQ', 'of'].join('') + // j = 1
      ['fQ', 'fQ', 'fQ', 'fQ'].join('') + // j = 2
      ['~q', 'of', 'fQ', 'of'].join(''); // j = 3
    expect(encodeBlurhash(solid(32, 32, 255, 255, 255), 32, 32, 4, 4)).toBe(expected);
  });

  it('structure: length 4 + 2·X·Y, size flag, valid', () => {
    for (const [x, y] of [[1, 1], [4, 4], [5, 5], [9, 9], [3, 7]] as const) {
      const hash = encodeBlurhash(solid(8, 6, 10, 200, 30), 8, 6, x, y);
      expect(hash).toHaveLength(4 + 2 * x * y);
      expect(blurhashComponents(hash)).toEqual({ x, y });
      expect(isValidBlurhash(hash, 9)).toBe(true);
    }
  });

  it('round-trips the average colour of a solid image through the DC term', () => {
    for (const [r, g, b] of [[0, 0, 0], [255, 255, 255], [12, 34, 56], [200, 100, 0], [1, 254, 128]] as const) {
      const hash = encodeBlurhash(solid(16, 9, r, g, b), 16, 9, 4, 4);
      expect(blurhashAverageColor(hash)).toEqual({ r, g, b });
    }
  });

  it('a grey image has equal AC digits per channel', () => {
    const hash = encodeBlurhash(solid(10, 10, 90, 90, 90), 10, 10, 4, 4);
    for (let k = 6; k < hash.length; k += 2) {
      const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~';
      const v = alphabet.indexOf(hash[k]!) * 83 + alphabet.indexOf(hash[k + 1]!);
      const [qr, qg, qb] = [Math.floor(v / 361), Math.floor(v / 19) % 19, v % 19];
      expect(qr).toBe(qg);
      expect(qg).toBe(qb);
    }
  });

  it('a left-to-right gradient puts energy in the first horizontal component', () => {
    const w = 32;
    const h = 8;
    const px = new Uint8ClampedArray(w * h * 4);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) px.set([(x * 255) / (w - 1), 0, 0, 255], (y * w + x) * 4);
    const hash = encodeBlurhash(px, w, h, 4, 4);
    // Component (1, 0) is the first AC pair; its red channel is far from the zero level 9.
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~';
    const v = alphabet.indexOf(hash[6]!) * 83 + alphabet.indexOf(hash[7]!);
    expect(Math.abs(Math.floor(v / 361) - 9)).toBeGreaterThan(5);
  });

  it('rejects bad arguments', () => {
    expect(() => encodeBlurhash(solid(2, 2, 0, 0, 0), 2, 2, 0, 4)).toThrow(RangeError);
    expect(() => encodeBlurhash(solid(2, 2, 0, 0, 0), 2, 2, 4, 10)).toThrow(RangeError);
    expect(() => encodeBlurhash(solid(2, 2, 0, 0, 0), 3, 2, 4, 4)).toThrow(RangeError);
    expect(() => encodeBlurhash(new Uint8Array(0), 0, 0, 4, 4)).toThrow(RangeError);
  });
});

describe('isValidBlurhash', () => {
  it('accepts well-formed hashes up to 5×5 by default', () => {
    expect(isValidBlurhash('LEHV6nWB2yk8pyo0adR*.7kCMdnj')).toBe(true); // 4×3, from the BlurHash README
    expect(isValidBlurhash('UeKUpFxuo~R%0nW;WCnhF6RjaJt757oJodS$')).toBe(true); // 4×4, Mastodon docs
    expect(isValidBlurhash(encodeBlurhash(solid(4, 4, 1, 2, 3), 4, 4, 5, 5))).toBe(true);
  });

  it('rejects more than maxComponents per axis (federation accepts at most 5×5)', () => {
    const sixBySix = encodeBlurhash(solid(4, 4, 1, 2, 3), 4, 4, 6, 6);
    expect(isValidBlurhash(sixBySix)).toBe(false);
    expect(isValidBlurhash(sixBySix, 6)).toBe(true);
    const nineByOne = encodeBlurhash(solid(4, 4, 1, 2, 3), 4, 4, 9, 1);
    expect(isValidBlurhash(nineByOne)).toBe(false);
  });

  it('rejects wrong lengths, foreign characters, non-strings', () => {
    expect(isValidBlurhash('LEHV6nWB2yk8pyo0adR*.7kCMdn')).toBe(false); // one short
    expect(isValidBlurhash('LEHV6nWB2yk8pyo0adR*.7kCMdnjj')).toBe(false); // one long
    expect(isValidBlurhash('LEHV6nWB2yk8pyo0adR*.7kCMdn"')).toBe(false);
    expect(isValidBlurhash('LEHV6nWB2yk8pyo0adR*.7kCMdn\u00e9')).toBe(false);
    expect(isValidBlurhash('')).toBe(false);
    expect(isValidBlurhash('00TSU')).toBe(false);
    expect(isValidBlurhash(null)).toBe(false);
    expect(isValidBlurhash(42)).toBe(false);
    // Size flags 81 and 82 ("~" is 82: x = 2, y = 10) would mean a 10th row, whatever the limit.
    expect(isValidBlurhash('~' + '0'.repeat(3 + 2 * 2 * 10), 10)).toBe(false);
  });

  it('blurhashComponents reads the size flag', () => {
    expect(blurhashComponents('LEHV6nWB2yk8pyo0adR*.7kCMdnj')).toEqual({ x: 4, y: 3 });
    expect(() => blurhashComponents('')).toThrow(RangeError);
    expect(() => blurhashComponents('"abc')).toThrow(RangeError);
  });
});
