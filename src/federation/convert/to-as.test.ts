/** The outbound activity builders: rows in, the exact ActivityPub JSON-LD out (no network, no database). */
import { describe, it, expect } from 'vitest';
import { Person } from '@fedify/vocab';
import {
  toAsAccept,
  toAsBlock,
  toAsFollow,
  toAsMove,
  toAsQuestion,
  toAsStatusObject,
  toAsUpdatePoll,
  toAsVote,
  toAsReject,
  toAsRejectActivity,
  toAsUndoBlock,
  toAsUndoFollow,
  toAsUpdateActor,
  toAsNote,
  toAsCreateNote,
  toAsUpdateNote,
  toAsDeleteNote,
  toAsAnnounce,
  toAsUndoAnnounce,
  toAsLike,
  toAsUndoLike,
  statusAddressing,
  type AnnounceFacts,
  type FollowEnds,
  type NoteFacts,
} from './to-as.ts';

const follow: FollowEnds = {
  id: '42',
  uri: 'https://here.test/users/ann#follows/42',
  version: 3,
  followerUri: 'https://here.test/users/ann',
  targetUri: 'https://there.test/users/bob',
};
const json = async (o: { toJsonLd(): Promise<unknown> }) => {
  const doc = (await o.toJsonLd()) as Record<string, unknown>;
  delete doc['@context'];
  return doc;
};
const followJson = { type: 'Follow', id: follow.uri, actor: follow.followerUri, object: follow.targetUri };

describe('toAs builders', () => {
  it('toAsFollow: the follow row as a Follow (no id when the row has none)', async () => {
    expect(await json(toAsFollow(follow))).toEqual(followJson);
    expect(await json(toAsFollow({ ...follow, uri: null }))).toEqual({ type: 'Follow', actor: follow.followerUri, object: follow.targetUri });
  });

  it('toAsAccept: by the target, a new id per follow version, the Follow embedded', async () => {
    expect(await json(toAsAccept(follow))).toEqual({
      type: 'Accept',
      id: 'https://there.test/users/bob#accepts/follows/42/3',
      actor: follow.targetUri,
      object: followJson,
    });
  });

  it('toAsReject: by the target', async () => {
    expect(await json(toAsReject(follow))).toEqual({
      type: 'Reject',
      id: 'https://there.test/users/bob#rejects/follows/42/3',
      actor: follow.targetUri,
      object: followJson,
    });
  });

  it('toAsRejectActivity: a refused Follow that has no row, embedded by its remote id', async () => {
    expect(
      await json(toAsRejectActivity({ targetUri: 'https://here.test/users/cy', followerUri: 'https://there.test/users/dee', activityUri: 'https://there.test/f/1', eventId: '7' })),
    ).toEqual({
      type: 'Reject',
      id: 'https://here.test/users/cy#rejects/7',
      actor: 'https://here.test/users/cy',
      object: { type: 'Follow', id: 'https://there.test/f/1', actor: 'https://there.test/users/dee', object: 'https://here.test/users/cy' },
    });
  });

  it('toAsUndoFollow: by the follower', async () => {
    expect(await json(toAsUndoFollow(follow))).toEqual({
      type: 'Undo',
      id: 'https://here.test/users/ann#follows/42/undo/3',
      actor: follow.followerUri,
      object: followJson,
    });
  });

  it('toAsBlock and toAsUndoBlock', async () => {
    const b = { uri: 'https://here.test/users/ann#blocks/9', actorUri: 'https://here.test/users/ann', targetUri: 'https://there.test/users/bob' };
    const blockJson = { type: 'Block', id: b.uri, actor: b.actorUri, object: b.targetUri };
    expect(await json(toAsBlock(b))).toEqual(blockJson);
    expect(await json(toAsUndoBlock(b))).toEqual({ type: 'Undo', id: `${b.uri}/undo`, actor: b.actorUri, object: blockJson });
  });

  it('toAsMove: object is the actor itself, public', async () => {
    expect(await json(toAsMove({ actorUri: 'https://here.test/users/ann', targetUri: 'https://there.test/users/ann2', moveId: '5' }))).toEqual({
      type: 'Move',
      id: 'https://here.test/users/ann#moves/5',
      actor: 'https://here.test/users/ann',
      object: 'https://here.test/users/ann',
      target: 'https://there.test/users/ann2',
      to: 'as:Public', // Fedify compacts the public collection's IRI
    });
  });

  it('toAsUpdateActor: the actor document, an id per update time, public', async () => {
    const actor = new Person({ id: new URL('https://here.test/users/ann'), preferredUsername: 'ann' });
    const doc = await json(toAsUpdateActor('https://here.test/users/ann', new Date('2026-01-02T03:04:05.678Z'), actor));
    expect(doc).toMatchObject({
      type: 'Update',
      id: `https://here.test/users/ann#updates/${Date.UTC(2026, 0, 2, 3, 4, 5, 678)}`,
      actor: 'https://here.test/users/ann',
      to: 'as:Public', // Fedify compacts the public collection's IRI
      object: { type: 'Person', id: 'https://here.test/users/ann', preferredUsername: 'ann' },
    });
  });
});

const AS_PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';
const note: NoteFacts = {
  uri: 'https://here.test/users/ann/statuses/1',
  url: 'https://here.test/@ann/1',
  authorUri: 'https://here.test/users/ann',
  followersUri: 'https://here.test/users/ann/followers',
  visibility: 'public',
  content: '<p>Hi <span class="h-card"><a href="https://there.test/@bob" class="u-url mention">@<span>bob</span></a></span> #tea</p>',
  language: 'en',
  spoilerText: 'cw',
  sensitive: true,
  inReplyToUri: 'https://there.test/users/bob/statuses/9',
  conversation: 'tag:here.test,2026-01-02:objectId=7:objectType=Conversation',
  published: new Date('2026-01-02T03:04:05Z'),
  editedAt: null,
  mentions: [{ uri: 'https://there.test/users/bob', acct: 'bob@there.test' }],
  hashtags: [{ name: 'tea', href: 'https://here.test/tags/tea' }],
};
const noteJson = {
  type: 'Note',
  id: note.uri,
  url: note.url,
  attributedTo: note.authorUri,
  to: 'as:Public',
  cc: [note.followersUri, 'https://there.test/users/bob'],
  content: note.content,
  contentMap: { en: note.content },
  summary: 'cw',
  sensitive: true,
  inReplyTo: 'https://there.test/users/bob/statuses/9',
  published: '2026-01-02T03:04:05Z',
  // Mastodon's OStatus terms, and the thread as `context` too.
  context: 'tag:here.test,2026-01-02:objectId=7:objectType=Conversation',
  atomUri: note.uri,
  inReplyToAtomUri: 'https://there.test/users/bob/statuses/9',
  conversation: 'tag:here.test,2026-01-02:objectId=7:objectType=Conversation',
  tag: [
    { type: 'Mention', href: 'https://there.test/users/bob', name: '@bob@there.test' },
    { type: 'Hashtag', href: 'https://here.test/tags/tea', name: '#tea' },
  ],
};

describe('status builders', () => {
  it('statusAddressing: to/cc per visibility as Mastodon (mentions in cc except direct/limited; a reblog cc-s the author first)', () => {
    const a = (visibility: string, reblogOfAuthorUri?: string) =>
      statusAddressing({ visibility, followersUri: 'https://h/f', mentionUris: ['https://m/1', 'https://m/1', 'https://m/2'], reblogOfAuthorUri });
    const hrefs = (x: { to: URL[]; cc: URL[] }) => ({ to: x.to.map(String), cc: x.cc.map(String) });
    expect(hrefs(a('public'))).toEqual({ to: [AS_PUBLIC], cc: ['https://h/f', 'https://m/1', 'https://m/2'] });
    expect(hrefs(a('unlisted'))).toEqual({ to: ['https://h/f'], cc: [AS_PUBLIC, 'https://m/1', 'https://m/2'] });
    expect(hrefs(a('private'))).toEqual({ to: ['https://h/f'], cc: ['https://m/1', 'https://m/2'] });
    expect(hrefs(a('direct'))).toEqual({ to: ['https://m/1', 'https://m/2'], cc: [] });
    expect(hrefs(a('limited'))).toEqual({ to: ['https://m/1', 'https://m/2'], cc: [] });
    expect(hrefs(a('public', 'https://o/a'))).toEqual({ to: [AS_PUBLIC], cc: ['https://o/a', 'https://h/f', 'https://m/1', 'https://m/2'] });
  });

  it('toAsNote: the exact Note (contentMap by language, summary, inReplyTo, Mention and Hashtag tags)', async () => {
    expect(await json(toAsNote(note))).toEqual(noteJson);
  });

  it('toAsNote: no language, no spoiler, not a reply, direct, edited, with an attachment', async () => {
    const doc = await json(
      toAsNote({
        ...note,
        visibility: 'direct',
        language: null,
        spoilerText: '',
        sensitive: false,
        inReplyToUri: null,
        hashtags: [],
        editedAt: new Date('2026-01-03T00:00:00Z'),
        attachments: [{ url: 'https://here.test/m/1.png', mediaType: 'image/png', description: 'a cat', width: 10, height: 20 }],
      }),
    );
    expect(doc).toEqual({
      type: 'Note',
      id: note.uri,
      url: note.url,
      attributedTo: note.authorUri,
      to: 'https://there.test/users/bob',
      content: note.content,
      sensitive: false,
      published: '2026-01-02T03:04:05Z',
      updated: '2026-01-03T00:00:00Z',
      tag: { type: 'Mention', href: 'https://there.test/users/bob', name: '@bob@there.test' },
      attachment: { type: 'Document', url: 'https://here.test/m/1.png', mediaType: 'image/png', name: 'a cat', width: 10, height: 20 },
      context: note.conversation,
      atomUri: note.uri,
      conversation: note.conversation,
    });
  });

  it("toAsCreateNote / toAsUpdateNote with media: Documents with Mastodon's plain blurhash and focalPoint keys", async () => {
    const withMedia: NoteFacts = {
      ...note,
      attachments: [
        { url: 'https://here.test/m/1.png', mediaType: 'image/png', description: 'a cat', width: 10, height: 20, blurhash: 'LEHV6nWB2yk8pyo0adR*.7kCMdnj', focalPoint: [0.5, -0.25] },
        { url: 'https://here.test/m/2.png', mediaType: 'image/png', description: null, blurhash: null, focalPoint: null },
      ],
    };
    for (const activity of [toAsCreateNote(withMedia), toAsUpdateNote({ ...withMedia, editedAt: new Date('2026-01-03T00:00:00Z') })]) {
      const doc = (await activity.toJsonLd({ format: 'compact' })) as { '@context': unknown[]; object: { attachment: unknown[] } };
      expect(doc.object.attachment).toEqual([
        { type: 'Document', url: 'https://here.test/m/1.png', mediaType: 'image/png', name: 'a cat', width: 10, height: 20, blurhash: 'LEHV6nWB2yk8pyo0adR*.7kCMdnj', focalPoint: [0.5, -0.25] },
        { type: 'Document', url: 'https://here.test/m/2.png', mediaType: 'image/png' },
      ]);
      expect(doc['@context']).toContainEqual({ blurhash: 'toot:blurhash', focalPoint: { '@container': '@list', '@id': 'toot:focalPoint' } });
      expect(doc['@context'].at(-1)).toEqual({ ostatus: 'http://ostatus.org#', atomUri: 'ostatus:atomUri', inReplyToAtomUri: 'ostatus:inReplyToAtomUri', conversation: 'ostatus:conversation' });
    }
    // Without media extensions the default context stays as it is.
    const plain = (await toAsCreateNote(note).toJsonLd({ format: 'compact' })) as { '@context': unknown[] };
    expect(JSON.stringify(plain['@context'])).not.toContain('blurhash');
  });

  it('toAsNote: the custom emojis its text uses as Emoji tags (Mastodon\'s EmojiSerializer)', async () => {
    const doc = (await json(
      toAsNote({
        ...note,
        mentions: [],
        hashtags: [],
        emojis: [{ uri: 'https://here.test/emojis/9', shortcode: 'blobcat', url: 'https://here.test/system/custom_emojis/9/original/ab.png', updatedAt: new Date('2026-01-01T00:00:00Z') }],
      }),
    )) as Record<string, unknown>;
    expect(doc.tag).toEqual({
      id: 'https://here.test/emojis/9',
      type: 'Emoji',
      name: ':blobcat:',
      updated: '2026-01-01T00:00:00Z',
      icon: { type: 'Image', mediaType: 'image/png', url: 'https://here.test/system/custom_emojis/9/original/ab.png' },
    });
  });

  it('toAsCreateNote / toAsUpdateNote / toAsDeleteNote', async () => {
    expect(await json(toAsCreateNote(note))).toEqual({
      type: 'Create',
      id: `${note.uri}/activity`,
      actor: note.authorUri,
      published: '2026-01-02T03:04:05Z',
      to: 'as:Public',
      cc: [note.followersUri, 'https://there.test/users/bob'],
      object: noteJson,
    });
    const edited = { ...note, editedAt: new Date('2026-01-03T00:00:00.250Z') };
    expect(await json(toAsUpdateNote(edited))).toEqual({
      type: 'Update',
      id: `${note.uri}#updates/${edited.editedAt.getTime()}`,
      actor: note.authorUri,
      published: '2026-01-03T00:00:00.25Z',
      to: 'as:Public',
      cc: [note.followersUri, 'https://there.test/users/bob'],
      object: { ...noteJson, updated: '2026-01-03T00:00:00.25Z' },
    });
    expect(await json(toAsDeleteNote({ uri: note.uri, authorUri: note.authorUri }))).toEqual({
      type: 'Delete',
      id: `${note.uri}#delete`,
      actor: note.authorUri,
      to: 'as:Public',
      object: { type: 'Tombstone', id: note.uri },
    });
  });

  it('toAsAnnounce / toAsUndoAnnounce: the reblog to Public, cc the original author and followers', async () => {
    const a: AnnounceFacts = {
      uri: 'https://here.test/users/ann/statuses/5/activity',
      id: '5',
      actorUri: 'https://here.test/users/ann',
      followersUri: 'https://here.test/users/ann/followers',
      visibility: 'public',
      objectUri: 'https://there.test/users/bob/statuses/9',
      objectAuthorUri: 'https://there.test/users/bob',
      published: new Date('2026-01-02T03:04:05Z'),
    };
    const announceJson = {
      type: 'Announce',
      id: a.uri,
      actor: a.actorUri,
      published: '2026-01-02T03:04:05Z',
      to: 'as:Public',
      cc: ['https://there.test/users/bob', a.followersUri],
      object: a.objectUri,
    };
    expect(await json(toAsAnnounce(a))).toEqual(announceJson);
    expect(await json(toAsUndoAnnounce(a))).toEqual({
      type: 'Undo',
      id: 'https://here.test/users/ann#announces/5/undo',
      actor: a.actorUri,
      to: 'as:Public',
      object: announceJson,
    });
    // A private reblog (the author's own private post): to followers, cc the author.
    expect(await json(toAsAnnounce({ ...a, visibility: 'private', objectAuthorUri: a.actorUri }))).toMatchObject({
      to: a.followersUri,
      cc: a.actorUri,
    });
  });

  it('toAsLike / toAsUndoLike', async () => {
    const l = { favouriteId: '77', actorUri: 'https://here.test/users/ann', objectUri: 'https://there.test/users/bob/statuses/9' };
    const likeJson = { type: 'Like', id: 'https://here.test/users/ann#likes/77', actor: l.actorUri, object: l.objectUri };
    expect(await json(toAsLike(l))).toEqual(likeJson);
    expect(await json(toAsUndoLike(l))).toEqual({ type: 'Undo', id: 'https://here.test/users/ann#likes/77/undo', actor: l.actorUri, object: likeJson });
  });
});

describe('toAsQuestion', () => {
  const base: NoteFacts = {
    uri: 'https://here.test/users/ann/statuses/1',
    url: 'https://here.test/@ann/1',
    authorUri: 'https://here.test/users/ann',
    followersUri: 'https://here.test/users/ann/followers',
    visibility: 'public',
    content: '<p>Tea or coffee?</p>',
    language: null,
    spoilerText: '',
    sensitive: false,
    inReplyToUri: null,
    published: new Date('2026-05-01T10:00:00Z'),
    editedAt: null,
    mentions: [{ uri: 'https://there.test/users/bob', acct: 'bob@there.test' }],
    hashtags: [{ name: 'drinks', href: 'https://here.test/tags/drinks' }],
  };
  const poll = {
    options: [{ title: 'tea', votes: 3 }, { title: 'coffee', votes: 5 }],
    multiple: false,
    endTime: new Date('2026-05-02T10:00:00Z'),
    closedAt: null,
    votersCount: 8,
  };
  const option = (name: string, totalItems: number) => ({ type: 'Note', name, replies: { type: 'Collection', totalItems } });

  it('a single-choice poll: the Note\'s fields, oneOf Notes with their counts, endTime, votersCount; not closed yet', async () => {
    expect(await json(toAsQuestion({ ...base, poll }))).toEqual({
      id: base.uri,
      type: 'Question',
      votersCount: 8,
      atomUri: base.uri,
      attributedTo: base.authorUri,
      to: 'as:Public',
      cc: [base.followersUri, 'https://there.test/users/bob'],
      content: '<p>Tea or coffee?</p>',
      endTime: '2026-05-02T10:00:00Z',
      oneOf: [option('tea', 3), option('coffee', 5)],
      published: '2026-05-01T10:00:00Z',
      sensitive: false,
      url: base.url,
      tag: [
        { type: 'Mention', href: 'https://there.test/users/bob', name: '@bob@there.test' },
        { type: 'Hashtag', href: 'https://here.test/tags/drinks', name: '#drinks' },
      ],
    });
    // What a status with a poll is, in its Create too.
    expect(await json(toAsStatusObject({ ...base, poll }))).toEqual(await json(toAsQuestion({ ...base, poll })));
    expect(((await json(toAsCreateNote({ ...base, poll }))).object as { type: string }).type).toBe('Question');
    expect((await json(toAsStatusObject(base))).type).toBe('Note');
  });

  it('a multiple-choice poll that ended: anyOf, closed at its end, the last tallies, a content warning, a reply, media', async () => {
    const doc = await json(toAsQuestion({
      ...base, spoilerText: 'drinks', sensitive: true, inReplyToUri: 'https://there.test/notes/9', editedAt: new Date('2026-05-01T11:00:00Z'),
      attachments: [{ url: 'https://here.test/system/a.png', mediaType: 'image/png', description: 'a cup' }],
      poll: { ...poll, multiple: true, closedAt: new Date('2026-05-02T10:00:00Z'), votersCount: 6 },
    }));
    expect(doc).toMatchObject({
      type: 'Question',
      anyOf: [option('tea', 3), option('coffee', 5)],
      closed: '2026-05-02T10:00:00Z',
      updated: '2026-05-01T11:00:00Z',
      votersCount: 6,
      summary: 'drinks',
      sensitive: true,
      inReplyTo: 'https://there.test/notes/9',
      attachment: { type: 'Document', url: 'https://here.test/system/a.png', mediaType: 'image/png', name: 'a cup' },
    });
    expect('oneOf' in doc).toBe(false);
  });

  it('a poll hiding its totals: options without counts', async () => {
    const doc = await json(toAsQuestion({ ...base, poll: { ...poll, options: [{ title: 'tea', votes: null }, { title: 'coffee', votes: null }] } }));
    expect(doc.oneOf).toEqual([{ type: 'Note', name: 'tea', replies: { type: 'Collection' } }, { type: 'Note', name: 'coffee', replies: { type: 'Collection' } }]);
  });

  it('toAsUpdatePoll: an Update of the Question with an id per Update sent', async () => {
    expect(await json(toAsUpdatePoll({ ...base, poll }, '77'))).toMatchObject({
      type: 'Update',
      id: `${base.uri}#updates/poll/77`,
      actor: base.authorUri,
      to: 'as:Public',
      object: { type: 'Question', id: base.uri, oneOf: [option('tea', 3), option('coffee', 5)] },
    });
  });

  it('toAsVote: Create(Note) named after the option, in reply to the Question, to its author only', async () => {
    expect(await json(toAsVote({
      voteId: '5', choice: 1, name: 'coffee', voterUri: 'https://here.test/users/ann',
      questionUri: 'https://there.test/notes/1', pollAuthorUri: 'https://there.test/users/bob',
    }))).toEqual({
      type: 'Create',
      id: 'https://here.test/users/ann#votes/5/1/activity',
      actor: 'https://here.test/users/ann',
      to: 'https://there.test/users/bob',
      object: {
        type: 'Note',
        id: 'https://here.test/users/ann#votes/5/1',
        name: 'coffee',
        attributedTo: 'https://here.test/users/ann',
        inReplyTo: 'https://there.test/notes/1',
        to: 'https://there.test/users/bob',
      },
    });
  });
});
