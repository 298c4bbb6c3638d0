/** The outbound activity builders: rows in, the exact ActivityPub JSON-LD out (no network, no database). */
import { describe, it, expect } from 'vitest';
import { Person } from '@fedify/vocab';
import {
  toAsAccept,
  toAsBlock,
  toAsFollow,
  toAsMove,
  toAsReject,
  toAsRejectActivity,
  toAsUndoBlock,
  toAsUndoFollow,
  toAsUpdateActor,
  type FollowEnds,
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
