/**
 * BlurHash: a short string that describes a blurred version of an image, for placeholders.
 * Encoding is the `blurhash` package's; what is here is the checking of hashes received from
 * other servers (the package's isBlurhashValid does not bound the component count) and reading
 * their header:
 *
 *   [size flag: 1 char][max AC: 1 char][DC: 4 chars][AC: 2 chars each] → 4 + 2·X·Y characters
 *
 * - size flag = (X − 1) + (Y − 1)·9, so X and Y are 1…9;
 * - DC (the average colour) is stored as 24-bit sRGB.
 *
 * Roost generates 4×4 hashes; it accepts hashes of at most 5×5 components from federation.
 */
import { encode } from 'blurhash';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~';
const ALPHABET_INDEX: ReadonlyMap<string, number> = new Map([...ALPHABET].map((c, i) => [c, i]));

/** Components Roost generates for its own media and thumbnails. */
export const BLURHASH_COMPONENTS = { x: 4, y: 4 } as const;
/** The most components per axis accepted in a blurhash received from another server. */
export const MAX_FEDERATED_BLURHASH_COMPONENTS = 5;

function decodeBase83(text: string): number {
  let value = 0;
  for (const c of text) {
    const digit = ALPHABET_INDEX.get(c);
    if (digit === undefined) throw new RangeError(`not a base-83 digit: ${JSON.stringify(c)}`);
    value = value * 83 + digit;
  }
  return value;
}

/**
 * Encodes RGBA pixels (row-major, 4 bytes per pixel, alpha ignored) as a blurhash with
 * componentsX × componentsY components (each 1…9), with the `blurhash` package (Wolt's reference
 * TypeScript encoder). Bad arguments are a RangeError.
 */
export function encodeBlurhash(
  pixels: Uint8ClampedArray | Uint8Array,
  width: number,
  height: number,
  componentsX: number,
  componentsY: number,
): string {
  for (const [name, c] of [['componentsX', componentsX], ['componentsY', componentsY]] as const) {
    if (!Number.isInteger(c) || c < 1 || c > 9) throw new RangeError(`${name} must be an integer from 1 to 9, got ${c}`);
  }
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`width and height must be positive integers, got ${width}x${height}`);
  }
  if (pixels.length !== width * height * 4) {
    throw new RangeError(`expected ${width * height * 4} bytes of RGBA, got ${pixels.length}`);
  }
  const clamped = pixels instanceof Uint8ClampedArray ? pixels : new Uint8ClampedArray(pixels.buffer, pixels.byteOffset, pixels.byteLength);
  return encode(clamped, width, height, componentsX, componentsY);
}

/**
 * The number of components per axis a blurhash declares in its size flag. Throws a RangeError
 * when the first character is not a base-83 digit.
 */
export function blurhashComponents(hash: string): { x: number; y: number } {
  if (hash.length === 0) throw new RangeError('empty blurhash');
  const flag = decodeBase83(hash[0]!);
  return { x: (flag % 9) + 1, y: Math.floor(flag / 9) + 1 };
}

/**
 * Whether a string is a well-formed blurhash with at most `maxComponents` components per axis:
 * only base-83 digits, a size flag within 1…9 per axis, and exactly 4 + 2·X·Y characters.
 */
export function isValidBlurhash(hash: unknown, maxComponents: number = MAX_FEDERATED_BLURHASH_COMPONENTS): boolean {
  if (typeof hash !== 'string' || hash.length < 6) return false;
  for (const c of hash) if (!ALPHABET_INDEX.has(c)) return false;
  const { x, y } = blurhashComponents(hash);
  if (y > 9) return false; // size flag 81…82 would mean 10 rows
  if (x > maxComponents || y > maxComponents) return false;
  return hash.length === 4 + 2 * x * y;
}

/** The average colour (the DC component) of a valid blurhash, as sRGB bytes. */
export function blurhashAverageColor(hash: string): { r: number; g: number; b: number } {
  if (!isValidBlurhash(hash, 9)) throw new RangeError(`invalid blurhash: ${JSON.stringify(hash)}`);
  const dc = decodeBase83(hash.slice(2, 6));
  return { r: dc >> 16, g: (dc >> 8) & 255, b: dc & 255 };
}
