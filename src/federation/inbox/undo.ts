import type { InboxContext } from '@fedify/fedify';
import { Block, Follow, type Undo } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { endFollowFromRemote } from '../../services/follows.ts';
import { unblockAccount } from '../../services/relationships.ts';
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
}
