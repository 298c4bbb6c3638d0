import type { InboxContext } from '@fedify/fedify';
import { Announce, Block, Follow, Like, type Undo } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { endFollowFromRemote } from '../../services/follows.ts';
import { unblockAccount } from '../../services/relationships.ts';
import { statusByUri, undoRemoteFavourite, undoRemoteReblog } from '../../services/remote-statuses.ts';
import { localAccountFromUri, resolveActivityActor } from './resolve.ts';

export async function onUndo(services: Services, ctx: InboxContext<void>, undo: Undo): Promise<void> {
  const by = await resolveActivityActor(services, undo);
  if (!by) return;
  const object = await undo.getObject({ crossOrigin: 'trust' }).catch(() => null);
  if (object instanceof Follow) {
    if (object.actorId?.href !== by.uri) return; // only the follower can undo its follow
    const target = await localAccountFromUri(services, ctx, object.objectId);
    if (target) await endFollowFromRemote(services, by.id, target.id, 'undone');
  }
  if (object instanceof Block) {
    if (object.actorId?.href !== by.uri) return; // only the blocker can lift its block
    const target = await localAccountFromUri(services, ctx, object.objectId);
    if (target) await unblockAccount(services, by.id, target.id, 'federation');
  }
  // Undo(Announce): the reblog by its id, else the actor's reblog of the object.
  if (object instanceof Announce) {
    if (object.actorId?.href !== by.uri) return;
    await undoRemoteReblog(services, by.id, object.id?.href ?? null, object.objectId?.href ?? null);
  }
  if (object instanceof Like) {
    if (object.actorId?.href !== by.uri || !object.objectId) return;
    const status = await statusByUri(services, object.objectId.href);
    if (status) await undoRemoteFavourite(services, by.id, status.id);
  }
  // An Undo naming its object by id only (not fetchable, or gone): a reblog of the actor's by that id.
  if (!object && undo.objectId) await undoRemoteReblog(services, by.id, undo.objectId.href, null);
}
