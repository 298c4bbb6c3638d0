// The default thumbnail and icons: PNGs (decoded here with sharp) of the right sizes, the @2x the
// same picture as the @1x, a 4×4 blurhash of the @1x pixels, all memoised and deterministic.
// (The hand-written PNG encoder these tests once checked chunk by chunk is gone: sharp encodes.)
import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { decode as decodeBlurhash } from 'blurhash';
import { blurhashComponents, isValidBlurhash } from '../../src/lib/blurhash.ts';
import {
  DEFAULT_ICON_SIZES,
  DEFAULT_THUMBNAIL_SIZE,
  defaultIcon,
  defaultThumbnail,
} from '../../src/lib/default-thumbnail.ts';

interface Decoded {
  format: string | undefined;
  width: number;
  height: number;
  /** RGBA. */
  rgba: Buffer;
}

async function decode(png: Buffer): Promise<Decoded> {
  const meta = await sharp(png).metadata();
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { format: meta.format, width: info.width, height: info.height, rgba: data };
}

describe('default thumbnail and icons', () => {
  it('is a 600×315 PNG, a 1200×630 @2x PNG and a 4×4 blurhash of the @1x pixels', async () => {
    const t = await defaultThumbnail();
    const x1 = await decode(t.png);
    const x2 = await decode(t.png2x);
    expect(x1.format).toBe('png');
    expect(x2.format).toBe('png');
    expect([x1.width, x1.height]).toEqual([DEFAULT_THUMBNAIL_SIZE.width, DEFAULT_THUMBNAIL_SIZE.height]);
    expect([x2.width, x2.height]).toEqual([1200, 630]);
    expect([t.width, t.height]).toEqual([600, 315]);
    expect(isValidBlurhash(t.blurhash)).toBe(true);
    expect(blurhashComponents(t.blurhash)).toEqual({ x: 4, y: 4 });
    // Small enough to serve without fuss.
    expect(t.png.length).toBeLessThan(100_000);
    expect(t.png2x.length).toBeLessThan(250_000);
  });

  it('is memoised and deterministic', async () => {
    expect(await defaultThumbnail()).toBe(await defaultThumbnail());
    // (the `blurhash` package's encoding; the hand-written encoder it replaced gave
    // 'UaHc==tPN19c12obWVoLM_Irt3-mI=oMoMWV', the same average colour "Hc==")
    expect((await defaultThumbnail()).blurhash).toBe('UEHc==%dD=050RxUR*s.D$9d%G~R9wxHxHR*');
  });

  it('the blurhash decodes to a blurred version of the picture, not of its mirror image', async () => {
    const t = await defaultThumbnail();
    const small = await sharp(t.png).resize(32, 17, { fit: 'fill' }).ensureAlpha().raw().toBuffer();
    const mirrored = await sharp(t.png).flip().resize(32, 17, { fit: 'fill' }).ensureAlpha().raw().toBuffer();
    const blurred = decodeBlurhash(t.blurhash, 32, 17);
    const diff = (ref: Buffer) => {
      let d = 0;
      for (let i = 0; i < blurred.length; i++) if (i % 4 !== 3) d += Math.abs(blurred[i]! - ref[i]!);
      return d / (32 * 17 * 3);
    };
    expect(diff(small)).toBeLessThan(30);
    expect(diff(mirrored)).toBeGreaterThan(diff(small) * 1.5);
  });

  it('is opaque: a dusk sky from indigo at the top to amber at the bottom', async () => {
    const x1 = await decode((await defaultThumbnail()).png);
    const at = (x: number, y: number) => [...x1.rgba.subarray((y * x1.width + x) * 4, (y * x1.width + x) * 4 + 4)];
    for (let i = 3; i < x1.rgba.length; i += 4) expect(x1.rgba[i]).toBe(255);
    const [r0, , b0] = at(10, 2);
    const [r1, , b1] = at(10, 300);
    expect(b0).toBeGreaterThan(r0!); // indigo
    expect(r1).toBeGreaterThan(b1!); // amber
  });

  it('@2x is the same picture as @1x (downscaled @2x ≈ @1x)', async () => {
    const x1 = await decode((await defaultThumbnail()).png);
    const x2 = await decode((await defaultThumbnail()).png2x);
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

  it('icons are square PNGs of the requested size, memoised', async () => {
    for (const size of [DEFAULT_ICON_SIZES[0], 192]) {
      const d = await decode(await defaultIcon(size));
      expect(d.format).toBe('png');
      expect([d.width, d.height]).toEqual([size, size]);
    }
    expect(defaultIcon(48)).toBe(defaultIcon(48));
    expect(() => defaultIcon(0)).toThrow(RangeError);
    expect(() => defaultIcon(4096)).toThrow(RangeError);
  });
});
