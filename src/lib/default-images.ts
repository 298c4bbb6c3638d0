/**
 * The images Mastodon serves for accounts without their own (`/avatars/original/missing.png`,
 * `/headers/original/missing.png`), drawn in code like the server thumbnail (Roost ships no
 * image files): a neutral silhouette on grey for the avatar (400×400, Mastodon's avatar size),
 * a plain grey band for the header (1500×500, its header size). Rendered from SVG by sharp once
 * per process and memoised; the same bytes every run.
 */
import sharp from 'sharp';

export const DEFAULT_AVATAR_SIZE = 400;
export const DEFAULT_HEADER_SIZE = { width: 1500, height: 500 } as const;

const AVATAR_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400" viewBox="0 0 400 400">
<rect width="400" height="400" fill="#c8ccd4"/>
<circle cx="200" cy="158" r="78" fill="#f4f5f7"/>
<path d="M56 400c0-92 64-146 144-146s144 54 144 146z" fill="#f4f5f7"/>
</svg>`;

const HEADER_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="1500" height="500"><rect width="1500" height="500" fill="#d9dde4"/></svg>`;

let avatar: Promise<Buffer> | undefined;
let header: Promise<Buffer> | undefined;

function render(svg: string): Promise<Buffer> {
  return sharp(Buffer.from(svg)).png({ compressionLevel: 9 }).toBuffer();
}

export function defaultAvatarPng(): Promise<Buffer> {
  avatar ??= render(AVATAR_SVG);
  avatar.catch(() => (avatar = undefined));
  return avatar;
}

export function defaultHeaderPng(): Promise<Buffer> {
  header ??= render(HEADER_SVG);
  header.catch(() => (header = undefined));
  return header;
}
