/**
 * BlurHash: a short string that describes a blurred version of an image, for placeholders.
 *
 * Encoding (the public algorithm, https://github.com/woltapp/blurhash/blob/master/Algorithm.md):
 * the image is converted to linear RGB, projected onto a small grid of cosine basis functions
 * (a 2-D DCT with componentsX × componentsY terms), and the coefficients are quantised and written
 * in base 83:
 *
 *   [size flag: 1 char][max AC: 1 char][DC: 4 chars][AC: 2 chars each] → 4 + 2·X·Y characters
 *
 * - size flag = (X − 1) + (Y − 1)·9, so X and Y are 1…9;
 * - DC (the average colour) is stored as 24-bit sRGB;
 * - AC components are scaled by a shared maximum and each channel is quantised to 19 levels with
 *   a square-root curve.
 *
 * Roost generates 4×4 hashes; it accepts hashes of at most 5×5 components from federation.
 */

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~';
const ALPHABET_INDEX: ReadonlyMap<string, number> = new Map([...ALPHABET].map((c, i) => [c, i]));

/** Components Roost generates for its own media and thumbnails. */
export const BLURHASH_COMPONENTS = { x: 4, y: 4 } as const;
/** The most components per axis accepted in a blurhash received from another server. */
export const MAX_FEDERATED_BLURHASH_COMPONENTS = 5;

function encodeBase83(value: number, length: number): string {
  let out = '';
  for (let i = length - 1; i >= 0; i--) {
    const digit = Math.floor(value / 83 ** i) % 83;
    out += ALPHABET[digit];
  }
  return out;
}

function decodeBase83(text: string): number {
  let value = 0;
  for (const c of text) {
    const digit = ALPHABET_INDEX.get(c);
    if (digit === undefined) throw new RangeError(`not a base-83 digit: ${JSON.stringify(c)}`);
    value = value * 83 + digit;
  }
  return value;
}

/** sRGB byte (0…255) → linear light (0…1), as a lookup table. */
const SRGB_TO_LINEAR = new Float64Array(256);
for (let i = 0; i < 256; i++) {
  const v = i / 255;
  SRGB_TO_LINEAR[i] = v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
}

/** Linear light (clamped to 0…1) → sRGB byte, rounded to nearest. */
function linearToSrgb(value: number): number {
  const v = Math.min(1, Math.max(0, value));
  const encoded = v <= 0.0031308 ? v * 12.92 : 1.055 * v ** (1 / 2.4) - 0.055;
  return Math.trunc(encoded * 255 + 0.5);
}

function signedSqrt(value: number): number {
  return Math.sign(value) * Math.sqrt(Math.abs(value));
}

/**
 * Encodes RGBA pixels (row-major, 4 bytes per pixel, alpha ignored) as a blurhash with
 * componentsX × componentsY components (each 1…9).
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
  if (pixels.length < width * height * 4) {
    throw new RangeError(`expected ${width * height * 4} bytes of RGBA, got ${pixels.length}`);
  }

  // cos(π·i·x / width) for every component i and column x; the same for rows.
  const cosX = new Float64Array(componentsX * width);
  for (let i = 0; i < componentsX; i++) {
    for (let x = 0; x < width; x++) cosX[i * width + x] = Math.cos((Math.PI * i * x) / width);
  }
  const cosY = new Float64Array(componentsY * height);
  for (let j = 0; j < componentsY; j++) {
    for (let y = 0; y < height; y++) cosY[j * height + y] = Math.cos((Math.PI * j * y) / height);
  }

  // factors[(j * componentsX + i) * 3 + channel]
  const factors = new Float64Array(componentsX * componentsY * 3);
  const rowSums = new Float64Array(componentsX * 3);
  for (let y = 0; y < height; y++) {
    // Sum along the row first (separable basis): Σx cosX[i][x]·linear(x, y).
    rowSums.fill(0);
    const rowStart = y * width * 4;
    for (let x = 0; x < width; x++) {
      const p = rowStart + x * 4;
      const r = SRGB_TO_LINEAR[pixels[p]!]!;
      const g = SRGB_TO_LINEAR[pixels[p + 1]!]!;
      const b = SRGB_TO_LINEAR[pixels[p + 2]!]!;
      for (let i = 0; i < componentsX; i++) {
        const c = cosX[i * width + x]!;
        rowSums[i * 3] += c * r;
        rowSums[i * 3 + 1] += c * g;
        rowSums[i * 3 + 2] += c * b;
      }
    }
    for (let j = 0; j < componentsY; j++) {
      const cy = cosY[j * height + y]!;
      for (let i = 0; i < componentsX; i++) {
        const f = (j * componentsX + i) * 3;
        factors[f] += cy * rowSums[i * 3]!;
        factors[f + 1] += cy * rowSums[i * 3 + 1]!;
        factors[f + 2] += cy * rowSums[i * 3 + 2]!;
      }
    }
  }
  const pixelCount = width * height;
  for (let k = 0; k < componentsX * componentsY; k++) {
    const scale = (k === 0 ? 1 : 2) / pixelCount;
    factors[k * 3] *= scale;
    factors[k * 3 + 1] *= scale;
    factors[k * 3 + 2] *= scale;
  }

  let hash = encodeBase83(componentsX - 1 + (componentsY - 1) * 9, 1);

  const acCount = componentsX * componentsY - 1;
  let maximumValue = 1;
  if (acCount > 0) {
    let actualMaximum = 0;
    for (let k = 3; k < factors.length; k++) actualMaximum = Math.max(actualMaximum, Math.abs(factors[k]!));
    const quantisedMaximum = Math.max(0, Math.min(82, Math.floor(actualMaximum * 166 - 0.5)));
    maximumValue = (quantisedMaximum + 1) / 166;
    hash += encodeBase83(quantisedMaximum, 1);
  } else {
    hash += encodeBase83(0, 1);
  }

  const dc = (linearToSrgb(factors[0]!) << 16) + (linearToSrgb(factors[1]!) << 8) + linearToSrgb(factors[2]!);
  hash += encodeBase83(dc, 4);

  const quantiseAc = (v: number): number =>
    Math.max(0, Math.min(18, Math.floor(signedSqrt(v / maximumValue) * 9 + 9.5)));
  for (let k = 1; k <= acCount; k++) {
    const value =
      quantiseAc(factors[k * 3]!) * 19 * 19 + quantiseAc(factors[k * 3 + 1]!) * 19 + quantiseAc(factors[k * 3 + 2]!);
    hash += encodeBase83(value, 2);
  }
  return hash;
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
