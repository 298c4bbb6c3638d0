import type { InboxContext } from '@fedify/fedify';
import type { Announce } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { receiveRemoteReblog, statusByUri } from '../../services/remote-statuses.ts';
import { visibilityFromAudience } from '../convert/from-as.ts';
import { fetchRemoteStatus, newFetchBudget } from '../remote-statuses.ts';
import { resolveActivityActor } from './resolve.ts';

/**
 * Announce: a remote account reblogs a status, known or fetched (within REMOTE_FETCH_LIMITS).
 * As Mastodon: only public and unlisted statuses may be reblogged by others (a private one only
 * by its author); the reblog's visibility comes from the Announce's audience.
 */
export async function onAnnounce(services: Services, ctx: InboxContext<void>, announce: Announce): Promise<void> {
  if (!announce.id || !announce.objectId) return;
  const by = await resolveActivityActor(services, announce);
  if (!by || by.domain === null || by.suspendedAt) return;
  if (announce.id.host !== new URL(by.uri).host) return;
  const statusId = await fetchRemoteStatus(services, ctx, announce.objectId, { depth: 0, budget: newFetchBudget() });
  if (!statusId) return;
  const original = await statusByUri(services, announce.objectId.href);
  if (!original || original.reblogOfId) return;
  const distributable = original.visibility === 'public' || original.visibility === 'unlisted';
  if (!distributable && !(original.visibility === 'private' && original.accountId === by.id)) return;
  const visibility = visibilityFromAudience(announce.toIds.map((u) => u.href), announce.ccIds.map((u) => u.href), by.followersUrl ?? null);
  if (visibility === 'direct') return;
  const published = announce.published ? new Date(Math.min(announce.published.epochMilliseconds, services.clock.now().getTime())) : services.clock.now();
  await receiveRemoteReblog(services, { accountId: by.id, uri: announce.id.href, reblogOfId: statusId, visibility, createdAt: published });
}
