/**
 * A minimal PNG encoder (8-bit truecolour, with or without alpha, non-interlaced) over node:zlib.
 *
 * Layout (PNG specification, ISO/IEC 15948): the 8-byte signature, then chunks of
 * [length: u32 BE][type: 4 ASCII][data][CRC-32 of type + data: u32 BE]: IHDR, one IDAT holding the
 * zlib stream of filtered scanlines, IEND. Each scanline is prefixed by its filter type; the encoder
 * picks, per row, the filter with the smallest sum of absolute differences (the heuristic the
 * specification recommends), which keeps gradients small.
 */
import { crc32, deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const COLOR_TYPE_RGB = 2;
const COLOR_TYPE_RGBA = 6;

export interface PngOptions {
  /**
   * Keep the alpha channel. Default: only when some pixel is not fully opaque (an opaque image is
   * written as RGB, a quarter smaller before compression).
   */
  alpha?: boolean;
  /** zlib compression level, 0…9. Default 6 (level 9 is ~5x slower on images for ~15% smaller output). */
  level?: number;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)) >>> 0, 8 + data.length);
  return out;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

/**
 * Writes one filtered scanline (filter byte + bytes) into `out` at `offset`, choosing the filter
 * (None, Sub, Up, Average, Paeth) with the smallest sum of |signed byte|.
 */
function filterRow(
  row: Uint8Array,
  prev: Uint8Array | null,
  bpp: number,
  out: Uint8Array,
  offset: number,
  scratch: Uint8Array[],
): void {
  const n = row.length;
  let best = 0;
  let bestScore = Infinity;
  for (let type = 0; type < 5; type++) {
    const buf = scratch[type]!;
    let score = 0;
    for (let i = 0; i < n; i++) {
      const x = row[i]!;
      const a = i >= bpp ? row[i - bpp]! : 0;
      const b = prev ? prev[i]! : 0;
      const c = prev && i >= bpp ? prev[i - bpp]! : 0;
      let v: number;
      switch (type) {
        case 0: v = x; break;
        case 1: v = x - a; break;
        case 2: v = x - b; break;
        case 3: v = x - ((a + b) >> 1); break;
        default: v = x - paeth(a, b, c); break;
      }
      v &= 0xff;
      buf[i] = v;
      score += v < 128 ? v : 256 - v;
      if (score >= bestScore) break;
    }
    if (score < bestScore) {
      bestScore = score;
      best = type;
    }
  }
  out[offset] = best;
  out.set(scratch[best]!.subarray(0, n), offset + 1);
}

/** Encodes RGBA pixels (row-major, 4 bytes per pixel) as a PNG file. */
export function encodePng(rgba: Uint8Array | Uint8ClampedArray, width: number, height: number, options: PngOptions = {}): Buffer {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`width and height must be positive integers, got ${width}x${height}`);
  }
  if (width > 0x7fffffff || height > 0x7fffffff) throw new RangeError('PNG dimensions are limited to 2^31 - 1');
  if (rgba.length !== width * height * 4) {
    throw new RangeError(`expected ${width * height * 4} bytes of RGBA, got ${rgba.length}`);
  }
  let alpha = options.alpha;
  if (alpha === undefined) {
    alpha = false;
    for (let i = 3; i < rgba.length; i += 4) {
      if (rgba[i] !== 255) {
        alpha = true;
        break;
      }
    }
  }
  const bpp = alpha ? 4 : 3;
  const stride = width * bpp;

  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = alpha ? COLOR_TYPE_RGBA : COLOR_TYPE_RGB;
  ihdr[10] = 0; // compression: deflate
  ihdr[11] = 0; // filter method: adaptive
  ihdr[12] = 0; // interlace: none

  const filtered = new Uint8Array(height * (stride + 1));
  const scratch = Array.from({ length: 5 }, () => new Uint8Array(stride));
  let prev: Uint8Array | null = null;
  let row = new Uint8Array(stride);
  let spare = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const src = y * width * 4;
    if (alpha) {
      row.set(rgba.subarray(src, src + stride));
    } else {
      for (let x = 0, s = src, d = 0; x < width; x++, s += 4, d += 3) {
        row[d] = rgba[s]!;
        row[d + 1] = rgba[s + 1]!;
        row[d + 2] = rgba[s + 2]!;
      }
    }
    filterRow(row, prev, bpp, filtered, y * (stride + 1), scratch);
    prev = row;
    [row, spare] = [spare, row];
  }

  const idat = deflateSync(filtered, { level: options.level ?? 6 });
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', new Uint8Array(0))]);
}
