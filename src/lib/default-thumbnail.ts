/**
 * Roost's default server thumbnail and icons, drawn in code (Roost ships no image files).
 *
 * The picture: a bird perched on a branch, a dark silhouette in front of a low sun, on a dusk
 * gradient from indigo through plum to amber — a roost at evening. It is described as a scene in
 * resolution-independent units (the image height is 1), so the @2x thumbnail is the same picture
 * drawn at twice the resolution rather than an upscale, and edges are anti-aliased by coverage
 * computed from signed distances.
 *
 * Everything here is deterministic: the same bytes on every run, so the blurhash, ETags and tests
 * are stable. The scene is drawn here; sharp encodes the PNGs and the `blurhash` package the
 * hash. Results are memoised per process.
 */
import sharp from 'sharp';
import { encodeBlurhash, BLURHASH_COMPONENTS } from './blurhash.ts';

/** RGBA pixels → PNG, with sharp (libvips). */
function encodePng(pixels: Uint8ClampedArray, width: number, height: number): Promise<Buffer> {
  return sharp(Buffer.from(pixels.buffer, pixels.byteOffset, pixels.byteLength), { raw: { width, height, channels: 4 } })
    .png({ compressionLevel: 9, adaptiveFiltering: true })
    .toBuffer();
}

/** Size of the @1x thumbnail (1.905:1, the aspect ratio of link-preview banners); @2x doubles it. */
export const DEFAULT_THUMBNAIL_SIZE = { width: 600, height: 315 } as const;

/** Alt text for the default thumbnail (Mastodon 4.6 exposes it as `thumbnail.description`). */
export const DEFAULT_THUMBNAIL_DESCRIPTION =
  'A bird perched on a branch, a dark silhouette against a low sun, on a dusk sky fading from indigo to amber.';

/** Square icon sizes, the same set Mastodon lists in the instance `icon` array. */
export const DEFAULT_ICON_SIZES = [36, 48, 72, 96, 144, 192, 256, 384, 512] as const;

export interface DefaultThumbnail {
  /** PNG, DEFAULT_THUMBNAIL_SIZE. */
  png: Buffer;
  /** PNG, twice DEFAULT_THUMBNAIL_SIZE in each dimension. */
  png2x: Buffer;
  /** 4×4-component blurhash of the @1x pixels. */
  blurhash: string;
  width: number;
  height: number;
}

type Rgb = readonly [number, number, number];

const SKY_TOP: Rgb = [0x23, 0x26, 0x4f];
const SKY_MIDDLE: Rgb = [0x8c, 0x4a, 0x8a];
const SKY_BOTTOM: Rgb = [0xf4, 0xa2, 0x59];
const SUN: Rgb = [0xff, 0xd9, 0x8a];
const SILHOUETTE: Rgb = [0x1c, 0x17, 0x33];
const WING: Rgb = [0x2e, 0x26, 0x50];
const EYE: Rgb = SUN;

interface Layout {
  /** Width / height of the image. */
  aspect: number;
  sun: { x: number; y: number; r: number };
  /** Where the bird's feet touch the branch, and its size. */
  bird: { x: number; scale: number };
  /** Branch centre line y = y0 + slope·x + wave·sin(3x), half thickness. */
  branch: { y0: number; slope: number; wave: number; half: number };
}

const THUMBNAIL_LAYOUT: Layout = {
  aspect: DEFAULT_THUMBNAIL_SIZE.width / DEFAULT_THUMBNAIL_SIZE.height,
  sun: { x: 0.62, y: 0.5, r: 0.2 },
  bird: { x: 1.2, scale: 1 },
  branch: { y0: 0.88, slope: -0.035, wave: 0.012, half: 0.022 },
};

const ICON_LAYOUT: Layout = {
  aspect: 1,
  sun: { x: 0.5, y: 0.42, r: 0.3 },
  bird: { x: 0.47, scale: 1.3 },
  branch: { y0: 0.84, slope: 0, wave: 0.01, half: 0.03 },
};

// --- signed distance functions (negative inside) -------------------------------------------------

function length(x: number, y: number): number {
  return Math.sqrt(x * x + y * y);
}

function sdCircle(px: number, py: number, cx: number, cy: number, r: number): number {
  return length(px - cx, py - cy) - r;
}

/** An approximation, exact enough for anti-aliasing at the edge. */
function sdEllipse(px: number, py: number, cx: number, cy: number, rx: number, ry: number): number {
  const k = length((px - cx) / rx, (py - cy) / ry);
  return (k - 1) * Math.min(rx, ry);
}

function sdSegment(px: number, py: number, ax: number, ay: number, bx: number, by: number, halfWidth: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)));
  return length(px - ax - t * dx, py - ay - t * dy) - halfWidth;
}

function sdTriangle(px: number, py: number, t: readonly [number, number, number, number, number, number]): number {
  const [x0, y0, x1, y1, x2, y2] = t;
  const d = Math.min(
    sdSegment(px, py, x0, y0, x1, y1, 0),
    sdSegment(px, py, x1, y1, x2, y2, 0),
    sdSegment(px, py, x2, y2, x0, y0, 0),
  );
  // Inside when the point is on the same side of all three edges.
  const s0 = (x1 - x0) * (py - y0) - (y1 - y0) * (px - x0);
  const s1 = (x2 - x1) * (py - y1) - (y2 - y1) * (px - x1);
  const s2 = (x0 - x2) * (py - y2) - (y0 - y2) * (px - x2);
  const inside = (s0 >= 0 && s1 >= 0 && s2 >= 0) || (s0 <= 0 && s1 <= 0 && s2 <= 0);
  return inside ? -d : d;
}

// --- the scene ----------------------------------------------------------------------------------

function mix(a: Rgb, b: Rgb, t: number): [number, number, number] {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
}

function over(base: [number, number, number], color: Rgb, coverage: number): void {
  if (coverage <= 0) return;
  base[0] += (color[0] - base[0]) * coverage;
  base[1] += (color[1] - base[1]) * coverage;
  base[2] += (color[2] - base[2]) * coverage;
}

function branchY(layout: Layout, x: number): number {
  const { y0, slope, wave } = layout.branch;
  return y0 + slope * x + wave * Math.sin(3 * x);
}

/** Colour at scene point (x, y), where y runs 0…1 down the image and x runs 0…aspect. */
function sceneColor(layout: Layout, x: number, y: number, pixel: number): [number, number, number] {
  const coverage = (d: number) => Math.max(0, Math.min(1, 0.5 - d / pixel));

  // Sky: mostly vertical, slightly diagonal, three stops.
  const t = Math.max(0, Math.min(1, 0.85 * y + 0.15 * (x / layout.aspect)));
  const color = t < 0.55 ? mix(SKY_TOP, SKY_MIDDLE, t / 0.55) : mix(SKY_MIDDLE, SKY_BOTTOM, (t - 0.55) / 0.45);

  // Sun with a soft glow.
  const { sun } = layout;
  const dSun = sdCircle(x, y, sun.x, sun.y, sun.r);
  if (dSun > 0) over(color, SUN, 0.35 * Math.max(0, 1 - dSun / 0.3) ** 2);
  over(color, SUN, coverage(dSun));

  // Branch (vertical distance is a fine SDF for a gently sloping line) and a twig.
  const { half } = layout.branch;
  let dSil = Math.abs(y - branchY(layout, x)) - half;
  const twigX = layout.aspect * 0.14;
  dSil = Math.min(dSil, sdSegment(x, y, twigX, branchY(layout, twigX), twigX - 0.09, branchY(layout, twigX) - 0.13, half * 0.45));

  // Bird, facing right, feet on the branch at (bx, by).
  const s = layout.bird.scale;
  const bx = layout.bird.x;
  const by = branchY(layout, bx) - half * 0.6;
  // Outside the bird's bounding box (plus a pixel of margin) only the branch can show.
  if (x < bx - 0.32 * s - pixel || x > bx + 0.28 * s + pixel || y < by - 0.39 * s - pixel || y > by + half + pixel) {
    over(color, SILHOUETTE, coverage(dSil));
    return color;
  }
  const body = sdEllipse(x, y, bx, by - 0.16 * s, 0.15 * s, 0.115 * s);
  const head = sdCircle(x, y, bx + 0.13 * s, by - 0.3 * s, 0.075 * s);
  const beak = sdTriangle(x, y, [bx + 0.19 * s, by - 0.33 * s, bx + 0.265 * s, by - 0.3 * s, bx + 0.19 * s, by - 0.275 * s]);
  const tail = sdTriangle(x, y, [bx - 0.1 * s, by - 0.21 * s, bx - 0.31 * s, by - 0.09 * s, bx - 0.09 * s, by - 0.1 * s]);
  const legs = Math.min(
    sdSegment(x, y, bx - 0.03 * s, by - 0.06 * s, bx - 0.045 * s, by + half * 0.6, 0.009 * s),
    sdSegment(x, y, bx + 0.04 * s, by - 0.06 * s, bx + 0.045 * s, by + half * 0.6, 0.009 * s),
  );
  dSil = Math.min(dSil, body, head, beak, tail, legs);
  over(color, SILHOUETTE, coverage(dSil));

  over(color, WING, coverage(sdEllipse(x, y, bx - 0.035 * s, by - 0.17 * s, 0.095 * s, 0.055 * s)));
  over(color, EYE, coverage(sdCircle(x, y, bx + 0.155 * s, by - 0.315 * s, 0.013 * s)));
  return color;
}

/** Renders the scene to RGBA pixels, sampling each pixel at its centre. */
function render(layout: Layout, width: number, height: number): Uint8ClampedArray {
  const pixels = new Uint8ClampedArray(width * height * 4);
  const pixel = 1 / height;
  for (let py = 0; py < height; py++) {
    for (let px = 0; px < width; px++) {
      const c = sceneColor(layout, (px + 0.5) * pixel, (py + 0.5) * pixel, pixel);
      const i = (py * width + px) * 4;
      pixels[i] = Math.round(c[0]);
      pixels[i + 1] = Math.round(c[1]);
      pixels[i + 2] = Math.round(c[2]);
      pixels[i + 3] = 255;
    }
  }
  return pixels;
}

let thumbnail: Promise<DefaultThumbnail> | undefined;

/**
 * The default server thumbnail: PNG at @1x and @2x and the blurhash of the @1x pixels. Computed
 * on first use (a few hundred milliseconds), then memoised.
 */
export function defaultThumbnail(): Promise<DefaultThumbnail> {
  thumbnail ??= (async () => {
    const { width, height } = DEFAULT_THUMBNAIL_SIZE;
    const pixels = render(THUMBNAIL_LAYOUT, width, height);
    const pixels2x = render(THUMBNAIL_LAYOUT, width * 2, height * 2);
    const [png, png2x] = await Promise.all([encodePng(pixels, width, height), encodePng(pixels2x, width * 2, height * 2)]);
    return { png, png2x, blurhash: encodeBlurhash(pixels, width, height, BLURHASH_COMPONENTS.x, BLURHASH_COMPONENTS.y), width, height };
  })();
  thumbnail.catch(() => (thumbnail = undefined));
  return thumbnail;
}

const icons = new Map<number, Promise<Buffer>>();

/** The default square icon as PNG, `size` pixels on a side (1…1024), memoised per size. */
export function defaultIcon(size: number): Promise<Buffer> {
  if (!Number.isInteger(size) || size < 1 || size > 1024) throw new RangeError(`icon size must be 1…1024, got ${size}`);
  let png = icons.get(size);
  if (!png) {
    png = encodePng(render(ICON_LAYOUT, size, size), size, size);
    icons.set(size, png);
  }
  return png;
}
