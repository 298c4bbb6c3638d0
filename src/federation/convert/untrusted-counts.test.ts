import { describe, it, expect } from 'vitest';
import { Note } from '@fedify/vocab';
import { MAX_UNTRUSTED_COUNT, untrustedCount, untrustedCounts } from './from-as.ts';
import { toAsCreateNote, toAsUpdateNote, type NoteFacts } from './to-as.ts';

const parse = (extra: Record<string, unknown>) =>
  Note.fromJsonLd({ '@context': 'https://www.w3.org/ns/activitystreams', id: 'https://there.test/notes/1', type: 'Note', content: 'hi', ...extra });

describe('untrusted counts (a remote Note’s likes/shares totalItems)', () => {
  it('clamps numbers to [0, 100,000,000] as integers and ignores anything else', () => {
    expect(MAX_UNTRUSTED_COUNT).toBe(100_000_000);
    expect([7, 0, -5, 1e12, 2.9, Number.NaN, Infinity, 'abc', '7', null, undefined, {}].map(untrustedCount)).toEqual([
      7, 0, 0, 100_000_000, 2, null, null, null, null, null, null, null,
    ]);
  });

  it('reads embedded collections only: a bare URL, a missing one or a bogus totalItems is no count', async () => {
    const n = await parse({
      likes: { id: 'https://there.test/notes/1/likes', type: 'Collection', totalItems: 1e12 },
      shares: 'https://there.test/notes/1/shares',
    });
    expect(await untrustedCounts(n)).toEqual({ favourites: 100_000_000, reblogs: null });
    expect(await untrustedCounts(await parse({ likes: { type: 'Collection', totalItems: -5 }, shares: { type: 'Collection', totalItems: 'abc' } }))).toEqual({
      favourites: 0,
      reblogs: null,
    });
    expect(await untrustedCounts(await parse({}))).toEqual({ favourites: null, reblogs: null });
  });

  it('a local Note in its Create and Update carries likes/shares with totalItems, which a peer reads back', async () => {
    const facts: NoteFacts = {
      uri: 'https://here.test/users/ann/statuses/1',
      url: null,
      authorUri: 'https://here.test/users/ann',
      followersUri: 'https://here.test/users/ann/followers',
      visibility: 'public',
      content: '<p>hi</p>',
      language: null,
      spoilerText: '',
      sensitive: false,
      inReplyToUri: null,
      published: new Date('2026-01-02T03:04:05Z'),
      editedAt: new Date('2026-01-03T00:00:00Z'),
      mentions: [],
      hashtags: [],
      counts: { likes: 2, shares: 1 },
    };
    for (const activity of [toAsCreateNote(facts), toAsUpdateNote(facts)]) {
      const doc = (await activity.toJsonLd({ format: 'compact' })) as { '@context': unknown; object: Record<string, unknown> };
      expect(doc.object.likes).toEqual({ id: `${facts.uri}/likes`, type: 'Collection', totalItems: 2 });
      expect(doc.object.shares).toEqual({ id: `${facts.uri}/shares`, type: 'Collection', totalItems: 1 });
      const back = await Note.fromJsonLd({ '@context': doc['@context'], ...doc.object });
      expect(await untrustedCounts(back)).toEqual({ favourites: 2, reblogs: 1 });
    }
    // Without counts (a remote status's facts) there are none.
    const { counts: _c, ...remote } = facts;
    const doc = (await toAsCreateNote(remote).toJsonLd({ format: 'compact' })) as { object: Record<string, unknown> };
    expect(doc.object.likes).toBeUndefined();
  });
});
