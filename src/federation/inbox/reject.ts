import type { InboxContext } from '@fedify/fedify';
import { Follow, type Reject } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { endFollowFromRemote } from '../../services/follows.ts';
import { localAccountFromUri, resolveActivityActor } from './resolve.ts';

/** The remote target rejected (or later removed) our follow. */
export async function onReject(services: Services, ctx: InboxContext<void>, reject: Reject): Promise<void> {
  const by = await resolveActivityActor(services, reject);
  if (!by) return;
  const object = await reject.getObject({ crossOrigin: 'trust' }).catch(() => null);
  if (!(object instanceof Follow)) return;
  const follower = await localAccountFromUri(services, ctx, object.actorId);
  if (follower) await endFollowFromRemote(services, follower.id, by.id, 'rejected');
}
