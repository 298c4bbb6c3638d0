/**
 * The Status, PreviewCard and StatusEdit serializers on fixtures, to the exact JSON: the card of a
 * status, `edited_at`, `application` for the author only (website null when none), the viewer's
 * flags with `muted`, a reblog (no card of its own, the flags of its original), the source `text`
 * on delete, and the versions of an edit (with and without a poll).
 */
import { describe, it, expect } from 'vitest';
import type { Account } from '../../src/db/entities/index.ts';
import { serializeAccount, type AccountView } from '../../src/serializers/account.ts';
import { serializePreviewCard, type PreviewCardRow } from '../../src/serializers/preview-card.ts';
import { serializeStatus, type StatusRow, type StatusView } from '../../src/serializers/status.ts';
import { serializeStatusEdit, type StatusEditRow } from '../../src/serializers/status-edit.ts';
import { unknownKeys, validate } from './openapi-check.ts';

const BASE = 'https://roost.example';

function account(id: string, username: string): Account {
  return {
    id,
    username,
    domain: null,
    uri: `${BASE}/users/${username}`,
    url: `${BASE}/@${username}`,
    displayName: username.toUpperCase(),
    note: '',
    fields: [],
    avatarUrl: null,
    headerUrl: null,
    locked: false,
    actorType: 'Person',
    discoverable: true,
    indexable: true,
    hideCollections: null,
    createdAt: new Date('2026-01-02T03:04:05Z'),
    suspendedAt: null,
    silencedAt: null,
    movedToAccountId: null,
  } as unknown as Account;
}

const alice = account('100', 'alice');
const bob = account('200', 'bob');
const accountView: AccountView = { baseUrl: BASE, localDomain: 'roost.example' };

const card: PreviewCardRow = {
  url: 'https://news.example/article?ref=canonical',
  originalUrl: 'https://news.example/article',
  title: 'A & B: the article',
  description: 'What it is about',
  language: 'en',
  type: 'link',
  authorName: 'Ada Lovelace',
  authorUrl: '',
  providerName: 'Fake News Site',
  providerUrl: '',
  html: '',
  width: 640,
  height: 480,
  imageUrl: 'https://news.example/img/cover.png',
  imageDescription: '',
  embedUrl: '',
  blurhash: null,
  publishedAt: new Date('2026-11-01T10:00:00Z'),
};

const CARD_JSON = {
  url: 'https://news.example/article',
  title: 'A & B: the article',
  description: 'What it is about',
  language: 'en',
  type: 'link',
  author_name: 'Ada Lovelace',
  author_url: '',
  provider_name: 'Fake News Site',
  provider_url: '',
  html: '',
  width: 640,
  height: 480,
  image: 'https://news.example/img/cover.png',
  image_description: '',
  embed_url: '',
  blurhash: null,
  published_at: '2026-11-01T10:00:00.000Z',
  authors: [{ name: 'Ada Lovelace', url: '', account: null }],
};

const status: StatusRow = {
  id: '1000',
  accountId: '100',
  uri: `${BASE}/users/alice/statuses/1000`,
  url: `${BASE}/@alice/1000`,
  text: 'Read https://news.example/article',
  content: '<p>Read <a href="https://news.example/article">news.example/article</a></p>',
  spoilerText: '',
  visibility: 'public',
  sensitive: false,
  language: 'en',
  inReplyToId: null,
  inReplyToAccountId: null,
  reblogOfId: null,
  createdAt: new Date('2026-11-23T10:00:00Z'),
  editedAt: new Date('2026-11-23T10:05:00.123Z'),
  application: { name: 'Roost Client', website: null },
  counts: { replies: 1, reblogs: 2, favourites: 3 },
  card,
};

const reblog: StatusRow = {
  ...status,
  id: '2000',
  accountId: '200',
  uri: `${BASE}/users/bob/statuses/2000/activity`,
  url: null,
  text: '',
  content: '',
  language: null,
  reblogOfId: '1000',
  createdAt: new Date('2026-11-23T11:00:00Z'),
  editedAt: null,
  application: null,
  counts: { replies: 0, reblogs: 0, favourites: 0 },
  card: null,
};

function view(viewerId: string | null): StatusView {
  return {
    baseUrl: BASE,
    viewerId,
    accounts: new Map([
      ['100', alice],
      ['200', bob],
    ]),
    accountView,
    mentions: new Map(),
    tags: new Map([['1000', ['News']]]),
    flags: new Map([['1000', { favourited: true, reblogged: false, bookmarked: false, pinned: true, muted: true }]]),
  };
}

const statuses = new Map([
  ['1000', status],
  ['2000', reblog],
]);

const BASE_JSON = {
  id: '1000',
  uri: `${BASE}/users/alice/statuses/1000`,
  created_at: '2026-11-23T10:00:00.000Z',
  account: serializeAccount(alice, accountView),
  content: '<p>Read <a href="https://news.example/article">news.example/article</a></p>',
  visibility: 'public',
  sensitive: false,
  spoiler_text: '',
  media_attachments: [],
  mentions: [],
  tags: [{ name: 'news', url: `${BASE}/tags/news` }],
  emojis: [],
  reblogs_count: 2,
  favourites_count: 3,
  quotes_count: 0,
  replies_count: 1,
  url: `${BASE}/@alice/1000`,
  in_reply_to_id: null,
  in_reply_to_account_id: null,
  reblog: null,
  poll: null,
  card: CARD_JSON,
  language: 'en',
  edited_at: '2026-11-23T10:05:00.123Z',
  quote: null,
  // No policy on the row: nobody may quote it (a local status's is always set when read).
  quote_approval: { automatic: [], manual: [], current_user: 'denied' },
};

describe('serializeStatus', () => {
  it('renders the card, edited_at, the application and the flags for the author', () => {
    expect(serializeStatus(status, statuses, view('100'))).toStrictEqual({
      ...BASE_JSON,
      // The author may quote their own post.
      quote_approval: { automatic: [], manual: [], current_user: 'automatic' },
      application: { name: 'Roost Client', website: null },
      favourited: true,
      reblogged: false,
      muted: true,
      bookmarked: false,
      pinned: true,
      filtered: [],
    });
  });

  it('hides the application from others, and flags and filtered from nobody signed in', () => {
    expect(serializeStatus(status, statuses, view('200'))).toStrictEqual({
      ...BASE_JSON,
      favourited: true,
      reblogged: false,
      muted: true,
      bookmarked: false,
      filtered: [],
    });
    expect(serializeStatus(status, statuses, view(null))).toStrictEqual(BASE_JSON);
  });

  it('gives a reblog no card of its own, the original with its card, and the original flags', () => {
    const json = serializeStatus(reblog, statuses, view('200'))!;
    expect({ ...json, account: null, reblog: null }).toStrictEqual({
      id: '2000',
      uri: `${BASE}/users/bob/statuses/2000/activity`,
      created_at: '2026-11-23T11:00:00.000Z',
      account: null,
      content: '',
      visibility: 'public',
      sensitive: false,
      spoiler_text: '',
      media_attachments: [],
      mentions: [],
      tags: [],
      emojis: [],
      reblogs_count: 0,
      favourites_count: 0,
      quotes_count: 0,
      replies_count: 0,
      url: null,
      in_reply_to_id: null,
      in_reply_to_account_id: null,
      reblog: null,
      poll: null,
      card: null,
      language: null,
      edited_at: null,
      quote: null,
      quote_approval: { automatic: [], manual: [], current_user: 'denied' },
      favourited: true,
      reblogged: false,
      muted: true,
      bookmarked: false,
      filtered: [],
    });
    expect(json.reblog).toStrictEqual({ ...BASE_JSON, favourited: true, reblogged: false, muted: true, bookmarked: false, filtered: [] });
  });

  it("matches Mastodon's OpenAPI Status and PreviewCard schemas; a card's language and image_description as Mastodon sends them", () => {
    // Mastodon's REST::PreviewCardSerializer sends `language` and `image_description`; its docs
    // (and so the OpenAPI description) do not list them yet: the only keys beyond the schema.
    for (const viewer of ['100', '200', null]) {
      for (const row of [status, reblog]) {
        const json = serializeStatus(row, statuses, view(viewer));
        const card = row === reblog ? '/reblog/card' : '/card';
        expect([viewer, row.id, validate('Status', json), unknownKeys('Status', json)]).toEqual([viewer, row.id, [], [`${card}/language`, `${card}/image_description`]]);
      }
    }
    expect([validate('PreviewCard', CARD_JSON), unknownKeys('PreviewCard', CARD_JSON)]).toEqual([[], ['/language', '/image_description']]);
  });

  it('shows the source text instead of the content when asked (the answer to DELETE)', () => {
    const json = serializeStatus(status, statuses, view('100'), { source: true })!;
    expect([json.text, 'content' in json, json.card?.title]).toEqual(['Read https://news.example/article', false, 'A & B: the article']);
  });
});

describe('serializePreviewCard', () => {
  it('shows the URL as the status linked it, else the card URL; one author from author_name', () => {
    expect(serializePreviewCard(card)).toStrictEqual(CARD_JSON);
    expect(serializePreviewCard({ ...card, originalUrl: null, authorName: '', publishedAt: null, imageUrl: null, language: null })).toStrictEqual({
      ...CARD_JSON,
      url: 'https://news.example/article?ref=canonical',
      author_name: '',
      image: null,
      language: null,
      published_at: null,
      authors: [{ name: '', url: '', account: null }],
    });
  });
});

describe('serializeStatusEdit', () => {
  const edit: StatusEditRow = {
    accountId: '100',
    content: '<p>first</p>',
    spoilerText: 'cw',
    sensitive: true,
    createdAt: new Date('2026-11-23T10:00:00Z'),
    orderedMediaAttachmentIds: null,
    mediaDescriptions: null,
    pollOptions: null,
  };
  const photo = {
    id: '7', accountId: '100', statusId: null, type: 'image' as const, processing: 'complete' as const, fileKey: 'f/o.png', smallKey: 'f/s.png',
    description: 'now', focus: null, meta: null, blurhash: null, remoteUrl: null,
  };
  const editView = { accounts: new Map([['100', alice]]), accountView, media: new Map([['7', photo]]), mediaBaseUrl: 'https://files.example/' };

  it('renders a version, with its poll options only when it recorded some', () => {
    expect(serializeStatusEdit(edit, editView)).toStrictEqual({
      content: '<p>first</p>',
      spoiler_text: 'cw',
      sensitive: true,
      created_at: '2026-11-23T10:00:00.000Z',
      account: serializeAccount(alice, accountView),
      media_attachments: [],
      emojis: [],
    });
    expect(serializeStatusEdit({ ...edit, pollOptions: ['cool', 'uncool'] }, editView)).toStrictEqual({
      content: '<p>first</p>',
      spoiler_text: 'cw',
      sensitive: true,
      created_at: '2026-11-23T10:00:00.000Z',
      account: serializeAccount(alice, accountView),
      poll: { options: [{ title: 'cool' }, { title: 'uncool' }] },
      media_attachments: [],
      emojis: [],
    });
    expect(serializeStatusEdit({ ...edit, pollOptions: [] }, editView)).not.toHaveProperty('poll');
    expect(serializeStatusEdit({ ...edit, accountId: '999' }, editView)).toBeNull();
  });

  it('renders the media a version named, in its order, with the descriptions it had; gone ones left out', () => {
    const json = serializeStatusEdit({ ...edit, orderedMediaAttachmentIds: ['8', '7'], mediaDescriptions: ['gone', 'then'] }, editView)!;
    expect(json.media_attachments).toStrictEqual([
      {
        id: '7', type: 'image', url: 'https://files.example/f/o.png', preview_url: 'https://files.example/f/s.png', remote_url: null,
        preview_remote_url: null, text_url: null, meta: null, description: 'then', blurhash: null,
      },
    ]);
  });
});
