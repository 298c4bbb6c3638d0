import type { InboxContext } from '@fedify/fedify';
import type { Like } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { receiveRemoteFavourite, statusByUri } from '../../services/remote-statuses.ts';
import { resolveActivityActor } from './resolve.ts';

/** Like: a remote account favourites a local status (as Mastodon, Likes of others' statuses are not kept). */
export async function onLike(services: Services, _ctx: InboxContext<void>, like: Like): Promise<void> {
  if (!like.objectId) return;
  const by = await resolveActivityActor(services, like);
  if (!by || by.domain === null || by.suspendedAt) return;
  const status = await statusByUri(services, like.objectId.href);
  if (!status || !status.local || status.deleted || status.reblogOfId) return;
  await receiveRemoteFavourite(services, by.id, status.id, like.id?.href ?? null);
}
