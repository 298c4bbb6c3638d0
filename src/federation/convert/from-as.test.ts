/** Reading remote statuses: visibility from the audience (Mastodon's rules) and a Note's fields, sanitised. */
import { describe, it, expect } from 'vitest';
import { Article, Document, Emoji, Hashtag, Image, LanguageString, Mention, Note, Question, PUBLIC_COLLECTION } from '@fedify/vocab';
import { Temporal } from '@js-temporal/polyfill';
import { isStatusObject, noteFields, visibilityFromAudience } from './from-as.ts';

const PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';
const FOLLOWERS = 'https://there.test/users/bob/followers';
const instant = (iso: string) => Temporal.Instant.from(iso) as unknown as globalThis.Temporal.Instant;

describe('visibilityFromAudience', () => {
  it('as Mastodon: Public in to, Public in cc, followers in to, else direct', () => {
    expect(visibilityFromAudience([PUBLIC], [FOLLOWERS], FOLLOWERS)).toBe('public');
    expect(visibilityFromAudience(['as:Public'], [], FOLLOWERS)).toBe('public');
    expect(visibilityFromAudience([FOLLOWERS], [PUBLIC], FOLLOWERS)).toBe('unlisted');
    expect(visibilityFromAudience([FOLLOWERS], ['https://here.test/users/ann'], FOLLOWERS)).toBe('private');
    expect(visibilityFromAudience(['https://here.test/users/ann'], [FOLLOWERS], FOLLOWERS)).toBe('direct');
    expect(visibilityFromAudience([], [], null)).toBe('direct');
  });
});

describe('noteFields', () => {
  const now = new Date('2026-02-01T00:00:00Z');
  it('sanitises content, reads contentMap, bounds dates, keeps the url only on its host, reads tags and attachments', async () => {
    const note = new Note({
      id: new URL('https://there.test/users/bob/statuses/1'),
      url: new URL('https://evil.test/phish'),
      attribution: new URL('https://there.test/users/bob'),
      to: PUBLIC_COLLECTION,
      cc: new URL(FOLLOWERS),
      contents: ['<p>hi<script>alert(1)</script> <a href="https://x.test/" onclick="x()">x</a></p>', new LanguageString('<p>hi</p>', 'de-AT')],
      summary: '<b>careful</b>',
      sensitive: true,
      replyTarget: new URL('https://here.test/users/ann/statuses/5'),
      published: instant('2026-01-01T00:00:00Z'),
      updated: instant('2030-01-01T00:00:00Z'),
      tags: [
        new Mention({ href: new URL('https://here.test/users/ann'), name: '@ann@here.test' }),
        new Mention({ href: new URL('javascript:alert(1)'), name: '@x' }),
        new Hashtag({ href: new URL('https://there.test/tags/Tea'), name: '#Tea' }),
        new Hashtag({ href: new URL('https://there.test/tags/x'), name: '#not a tag' }),
        new Emoji({
          id: new URL('https://there.test/emojis/7'),
          name: ':blob_cat:',
          updated: instant('2025-12-01T00:00:00Z'),
          icon: new Image({ url: new URL('https://there.test/e/blob.png'), mediaType: 'image/png' }),
        }),
        new Emoji({ name: ':evil:', icon: new Image({ url: new URL('javascript:alert(1)') }) }),
        new Emoji({ name: ':no good:', icon: new Image({ url: new URL('https://there.test/e/x.png') }) }),
        new Emoji({ name: ':noicon:' }),
      ],
      attachments: [
        new Document({ url: new URL('https://there.test/m/1.png'), mediaType: 'image/png', name: 'a <i>cat</i>', width: 4, height: 3 }),
        new Image({ url: new URL('ftp://there.test/m/2.png'), mediaType: 'image/png' }),
      ],
    });
    expect(await noteFields(note, { now, maxAttachments: 4 })).toEqual({
      uri: 'https://there.test/users/bob/statuses/1',
      url: 'https://there.test/users/bob/statuses/1',
      content: '<p>hi <a href="https://x.test/" rel="nofollow noopener" target="_blank">x</a></p>',
      spoilerText: 'careful',
      sensitive: true,
      language: 'de-AT',
      published: new Date('2026-01-01T00:00:00Z'),
      // An edit time in the future is taken as now.
      updated: now,
      inReplyToUri: 'https://here.test/users/ann/statuses/5',
      to: [PUBLIC],
      cc: [FOLLOWERS],
      mentionHrefs: ['https://here.test/users/ann'],
      tags: ['Tea'],
      attachments: [
        { url: 'https://there.test/m/1.png', mediaType: 'image/png', name: 'a cat', blurhash: null, width: 4, height: 3, focalPoint: null },
      ],
      // Emoji tags with a shortcode and an http(s) icon only.
      emojis: [{ shortcode: 'blob_cat', url: 'https://there.test/e/blob.png', uri: 'https://there.test/emojis/7', updated: new Date('2025-12-01T00:00:00Z') }],
      quote: null,
      quoteApprovals: null,
    });
  });

  it("reads Mastodon's blurhash and focalPoint of attachments from the JSON as received (plain or toot: keys)", async () => {
    const json = {
      '@context': ['https://www.w3.org/ns/activitystreams', { toot: 'http://joinmastodon.org/ns#', blurhash: 'toot:blurhash', focalPoint: { '@container': '@list', '@id': 'toot:focalPoint' } }],
      id: 'https://there.test/users/bob/statuses/3/activity',
      type: 'Create',
      actor: 'https://there.test/users/bob',
      object: {
        id: 'https://there.test/users/bob/statuses/3',
        type: 'Note',
        attributedTo: 'https://there.test/users/bob',
        content: 'pics',
        attachment: [
          { type: 'Document', mediaType: 'image/jpeg', url: 'https://there.test/m/a.jpg', name: 'A', blurhash: 'LEHV6nWB2yk8pyo0adR*.7kCMdnj', focalPoint: [0.5, -0.25] },
          { type: 'Image', mediaType: 'image/png', url: 'https://there.test/m/b.png', 'toot:blurhash': 'x', focalPoint: [3, 0] },
          { type: 'Video', mediaType: 'video/mp4', url: 'javascript:alert(1)', name: 'never' },
        ],
      },
    };
    const { Create } = await import('@fedify/vocab');
    const create = await Create.fromJsonLd(json);
    const note = (await create.getObject()) as Note;
    const f = await noteFields(note, { now, maxAttachments: 4, raw: await create.toJsonLd() });
    expect(f.attachments).toEqual([
      { url: 'https://there.test/m/a.jpg', mediaType: 'image/jpeg', name: 'A', blurhash: 'LEHV6nWB2yk8pyo0adR*.7kCMdnj', width: null, height: null, focalPoint: [0.5, -0.25] },
      // The blurhash is checked when stored; a focal point out of range is dropped here.
      { url: 'https://there.test/m/b.png', mediaType: 'image/png', name: null, blurhash: 'x', width: null, height: null, focalPoint: null },
    ]);
  });

  it("takes the activity's audience when the object has none; no published date is now", async () => {
    const note = new Note({ id: new URL('https://there.test/n/2'), attribution: new URL('https://there.test/users/bob'), content: 'plain' });
    const f = await noteFields(note, { now, maxAttachments: 4, fallback: { to: [new URL(FOLLOWERS)], cc: [] } });
    expect([f.to, f.cc, f.published, f.updated, f.language, f.content]).toEqual([[FOLLOWERS], [], now, null, null, 'plain']);
  });

  it('stores Notes, Articles and Questions (a status with a poll)', () => {
    expect(isStatusObject(new Note({}))).toBe(true);
    expect(isStatusObject(new Article({}))).toBe(true);
    expect(isStatusObject(new Question({}))).toBe(true);
  });
});
