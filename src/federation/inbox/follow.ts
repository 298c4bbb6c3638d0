import type { InboxContext } from '@fedify/fedify';
import type { Follow } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { receiveFollow } from '../../services/follows.ts';
import { localAccountFromUri, resolveActivityActor } from './resolve.ts';

export async function onFollow(services: Services, ctx: InboxContext<void>, follow: Follow): Promise<void> {
  if (!follow.id) return;
  const target = await localAccountFromUri(services, ctx, follow.objectId);
  if (!target || target.suspendedAt) return;
  const follower = await resolveActivityActor(services, follow);
  if (!follower || follower.domain === null) return;
  await receiveFollow(services, follower, target, follow.id.href);
}
