import { describe, expect, it } from 'vitest';
import { encode } from 'blurhash';
import { mediaSize, serializeMediaAttachment, type MediaAttachmentRow } from '../../src/serializers/media-attachment.ts';
import { acceptedRemoteBlurhash } from '../../src/services/media.ts';

const BASE = 'https://roost.example/system/';
const local: MediaAttachmentRow = {
  id: '110000000000000001',
  accountId: '1',
  statusId: null,
  type: 'image',
  processing: 'complete',
  fileKey: 'media_attachments/files/110/000/000/000/000/001/original/0123456789abcdef.png',
  smallKey: 'media_attachments/files/110/000/000/000/000/001/small/0123456789abcdef.png',
  description: 'A square',
  focus: { x: -0.5, y: 0.25 },
  meta: { original: mediaSize(640, 480), small: mediaSize(461, 346) },
  blurhash: 'UFBWY:8_0Jxv4mx]t8t64.%M-:IUWGWAt6M}',
  remoteUrl: null,
};

describe('serializeMediaAttachment', () => {
  it('a processed local image: every field of the entity, in order', () => {
    const json = serializeMediaAttachment(local, BASE);
    expect(json).toEqual({
      id: '110000000000000001',
      type: 'image',
      url: `${BASE}media_attachments/files/110/000/000/000/000/001/original/0123456789abcdef.png`,
      preview_url: `${BASE}media_attachments/files/110/000/000/000/000/001/small/0123456789abcdef.png`,
      remote_url: null,
      preview_remote_url: null,
      text_url: null,
      meta: {
        original: { width: 640, height: 480, size: '640x480', aspect: 640 / 480 },
        small: { width: 461, height: 346, size: '461x346', aspect: 461 / 346 },
        focus: { x: -0.5, y: 0.25 },
      },
      description: 'A square',
      blurhash: 'UFBWY:8_0Jxv4mx]t8t64.%M-:IUWGWAt6M}',
    });
    expect(Object.keys(json)).toEqual(['id', 'type', 'url', 'preview_url', 'remote_url', 'preview_remote_url', 'text_url', 'meta', 'description', 'blurhash']);
  });

  it('still processing: no url, no preview; meta only the focus, or null without one', () => {
    const queued: MediaAttachmentRow = { ...local, processing: 'queued', fileKey: null, smallKey: null, meta: null, blurhash: null };
    expect(serializeMediaAttachment(queued, BASE)).toMatchObject({ url: null, preview_url: null, meta: { focus: { x: -0.5, y: 0.25 } }, blurhash: null });
    expect(serializeMediaAttachment({ ...queued, focus: null }, BASE).meta).toBeNull();
  });

  it('a remote attachment not stored here is shown at its remote address', () => {
    const remote: MediaAttachmentRow = { ...local, fileKey: null, smallKey: null, remoteUrl: 'https://elsewhere.example/a.jpg', meta: { original: mediaSize(10, 20) }, focus: null };
    expect(serializeMediaAttachment(remote, BASE)).toMatchObject({
      url: 'https://elsewhere.example/a.jpg',
      preview_url: 'https://elsewhere.example/a.jpg',
      remote_url: 'https://elsewhere.example/a.jpg',
      meta: { original: { width: 10, height: 20, size: '10x20', aspect: 0.5 } },
    });
    expect(serializeMediaAttachment({ ...remote, type: 'video', remoteUrl: 'https://elsewhere.example/v.mp4' }, BASE)).toMatchObject({
      type: 'video',
      url: 'https://elsewhere.example/v.mp4',
      preview_url: null,
    });
  });
});

describe('acceptedRemoteBlurhash: at most 5×5 components', () => {
  const px = new Uint8ClampedArray(8 * 8 * 4).map((_, i) => (i * 37) % 256);
  const hash = (x: number, y: number) => encode(px, 8, 8, x, y);

  it('keeps well-formed hashes up to 5 components per axis', () => {
    for (const [x, y] of [[1, 1], [4, 4], [5, 5], [5, 1], [1, 5], [3, 5]] as const) expect(acceptedRemoteBlurhash(hash(x, y), 5)).toBe(hash(x, y));
  });

  it('drops more components on either axis: the size flag is (X − 1) + (Y − 1)·9', () => {
    for (const [x, y] of [[6, 5], [5, 6], [6, 1], [1, 6], [9, 9]] as const) {
      const h = hash(x, y);
      expect(h.length).toBe(4 + 2 * x * y);
      expect(acceptedRemoteBlurhash(h, 5)).toBeNull();
    }
  });

  it('drops malformed values', () => {
    const good = hash(4, 4);
    for (const bad of [good.slice(0, -1), `${good}00`, good.replace(/.$/, '!'), '', 'U', 42, null, undefined, { hash: good }]) {
      expect(acceptedRemoteBlurhash(bad, 5)).toBeNull();
    }
  });
});
