/**
 * What real servers send that the vocabulary alone does not cover, read fast from the fixtures
 * (test/fixtures/activitypub/): quotes kept as one link, Misskey's MFM source as a fallback,
 * GoToSocial's interactionPolicy and Mastodon's actor extensions parsed without trouble, and one
 * Create in compacted and expanded JSON-LD read alike. The two-instance proof of the same
 * payloads through the real inbox is test/federation/interop.test.ts.
 */
import { describe, it, expect } from 'vitest';
import { Create, Note, Person } from '@fedify/vocab';
import { actorSummary, noteFields } from './from-as.ts';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fixtureDir, loadFixture, type Software } from '../../../test/fixtures/activitypub/load.ts';

const values = {
  remote: 'https://remote.test',
  remote_hostname: 'remote.test',
  local: 'https://here.test',
  local_host: 'here.test',
  local_actor: 'https://here.test/users/alice',
  local_actor_id: '1',
  local_note: 'https://here.test/users/alice/statuses/1',
  local_poll: 'https://here.test/users/alice/statuses/2',
  local_follow: 'https://here.test/follows/1',
  public_key_pem: '-----BEGIN PUBLIC KEY-----\nMA==\n-----END PUBLIC KEY-----\n',
  now: '2026-01-01T00:00:00Z',
  later: '2026-01-02T00:00:00Z',
};
const now = new Date('2026-02-01T00:00:00Z');
// Contexts are Fedify's preloaded ones, except Pleroma's (its litepub context, from the fixture folder).
const litepub = JSON.parse(readFileSync(path.join(fixtureDir('pleroma'), 'litepub-0.1.jsonld'), 'utf8')) as unknown;
const contextLoader = async (url: string) => {
  if (url === 'https://remote.test/schemas/litepub-0.1.jsonld') return { contextUrl: null, documentUrl: url, document: litepub };
  const { preloadedContexts } = await import('@fedify/vocab-runtime');
  const document = (preloadedContexts as Record<string, unknown>)[url];
  if (!document) throw new Error(`not preloaded: ${url}`);
  return { contextUrl: null, documentUrl: url, document };
};

async function fields(software: Software, name: string, overrides: (o: Record<string, any>) => void = () => {}) {
  const json = loadFixture(software, name, values);
  overrides(json);
  const create = await Create.fromJsonLd(json, { contextLoader, documentLoader: contextLoader });
  const note = await create.getObject({ documentLoader: contextLoader, contextLoader });
  expect(note).toBeInstanceOf(Note);
  return noteFields(note as Note, { now, maxAttachments: 4, raw: json });
}

describe('quotes', () => {
  it('Pleroma quoteUrl/quoteUri, not in the content: appended once as "RE: <url>"', async () => {
    const f = await fields('pleroma', 'create-note');
    const quote = 'https://remote.test/objects/quoted-0000-0000-0000-000000000001';
    expect(f.content).toContain(`RE: <a href="${quote}"`);
    expect(f.content.split(`href="${quote}"`)).toHaveLength(2);
  });
  it('Misskey _misskey_quote, already in the content as "RE: …": not added twice', async () => {
    const f = await fields('misskey', 'create-note');
    expect(f.content.split('href="https://remote.test/notes/9x1a2b3c40"')).toHaveLength(2);
  });
  it('Hollo (all three properties, the link in its content): not added twice', async () => {
    const f = await fields('hollo', 'create-note');
    expect(f.content.split('href="https://remote.test/@someone/0192f5e0-0000-7000-8000-000000000099"')).toHaveLength(2);
  });
});

describe('Misskey _misskey_content', () => {
  it('the HTML content wins when there is one', async () => {
    const f = await fields('misskey', 'create-note');
    expect(f.content).toContain('hello from Misskey');
    expect(f.content).toContain('<a href="https://remote.test/tags/interop"');
  });
  it('without content, the MFM source is the text, escaped', async () => {
    const f = await fields('misskey', 'create-note', (o) => {
      delete o.object.content;
      o.object._misskey_content = 'no html <b>here</b>\n\nsecond';
      delete o.object._misskey_quote;
      delete o.object.quoteUrl;
      delete o.object.quoteUri;
    });
    expect(f.content).toBe('<p>no html &lt;b&gt;here&lt;/b&gt;</p><p>second</p>');
  });
});

describe('Misskey _misskey_summary', () => {
  const actor = async (o: (json: Record<string, any>) => void) => {
    const json = loadFixture('misskey', 'actor', values);
    delete json.publicKey;
    o(json);
    return Person.fromJsonLd(json, { contextLoader, documentLoader: contextLoader });
  };
  it('the HTML summary wins', async () => {
    expect(await actorSummary(await actor(() => {}))).toContain('<span>Misskey user </span>');
  });
  it('without one, the MFM source as escaped text', async () => {
    const a = await actor((j) => {
      delete j.summary;
      j._misskey_summary = 'I <3 cats\nand dogs';
    });
    expect(await actorSummary(a)).toBe('<p>I &lt;3 cats<br>and dogs</p>');
  });
});

describe('extensions parsed without trouble', () => {
  it('GoToSocial interactionPolicy (both forms) on a Note and a Question', async () => {
    const f = await fields('gotosocial', 'create-note');
    expect(f.mentionHrefs).toEqual(['https://here.test/users/alice']);
    expect(f.tags).toEqual(['interop']);
    const q = await Create.fromJsonLd(loadFixture('gotosocial', 'question', values), { contextLoader, documentLoader: contextLoader });
    expect((await q.getObject({ documentLoader: contextLoader, contextLoader }))?.id?.href).toBe('https://remote.test/users/gwen/statuses/01HZPOLL00000000000000001');
  });
  it('Mastodon actor: featured, featuredTags, discoverable, indexable, memorial, Emoji tag', async () => {
    const json = loadFixture('mastodon', 'actor', values);
    delete json.publicKey; // a placeholder key here; the real one is in the interop test
    const actor = await Person.fromJsonLd(json, { contextLoader, documentLoader: contextLoader });
    expect(actor.featuredId?.href).toBe('https://remote.test/users/mona/collections/featured');
    expect(actor.featuredTagsId?.href).toBe('https://remote.test/users/mona/collections/tags');
    expect(actor.discoverable).toBe(true);
    expect(actor.indexable).toBe(true);
    expect(actor.memorial).toBe(false);
  });
});

describe('compacted and expanded JSON-LD', () => {
  it('one Create read alike in both forms', async () => {
    const compact = await fields('mastodon', 'create-note');
    const expanded = await fields('mastodon', 'create-note-expanded');
    expect(expanded.mentionHrefs).toEqual(compact.mentionHrefs);
    expect(expanded.tags).toEqual(compact.tags);
    expect(expanded.to).toEqual(compact.to);
    expect(expanded.attachments.map((a) => a.mediaType)).toEqual(['image/png']);
    expect(expanded.content).toContain('expanded JSON-LD :blobcat:');
    expect(expanded.language).toBe('en');
  });
});
