import type { InboxContext } from '@fedify/fedify';
import { Follow, type Accept } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { remoteFollowAccepted } from '../../services/follows.ts';
import { remoteQuoteAccepted } from '../../services/quotes.ts';
import { localAccountFromUri, resolveActivityActor } from './resolve.ts';

/**
 * The remote target accepted a follow of ours. Mastodon embeds our Follow (whose id lives on our
 * origin, so Fedify would refetch it — we only need its id, which we match against our own rows,
 * and only follows whose target is the Accept's verified actor can be settled this way).
 */
export async function onAccept(services: Services, ctx: InboxContext<void>, accept: Accept): Promise<void> {
  const by = await resolveActivityActor(services, accept);
  if (!by) return;
  // An Accept of a QuoteRequest of ours (FEP-044f): its `result` is the stamp.
  if (accept.objectId && (await remoteQuoteAccepted(services, by, accept.objectId.href, accept.resultId?.href ?? null))) return;
  if (accept.objectId && (await remoteFollowAccepted(services, { uri: accept.objectId.href }, by))) return;
  // Some servers answer with a Follow of their own making: match on its actor.
  const object = await accept.getObject({ crossOrigin: 'trust' }).catch(() => null);
  if (!(object instanceof Follow)) return;
  const follower = await localAccountFromUri(services, ctx, object.actorId);
  if (follower) await remoteFollowAccepted(services, { followerId: follower.id }, by);
}
