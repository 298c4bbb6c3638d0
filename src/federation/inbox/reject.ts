import type { InboxContext } from '@fedify/fedify';
import { Follow, type Reject } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { endFollowFromRemote } from '../../services/follows.ts';
import { remoteQuoteRejected } from '../../services/quotes.ts';
import { localAccountFromUri, resolveActivityActor } from './resolve.ts';

/** The remote target rejected (or later removed) our follow, or refused a quote of ours (Reject of our QuoteRequest). */
export async function onReject(services: Services, ctx: InboxContext<void>, reject: Reject): Promise<void> {
  const by = await resolveActivityActor(services, reject);
  if (!by) return;
  // A Reject of a QuoteRequest of ours (FEP-044f): the quote is refused (or revoked).
  const quoteRequest = reject.objectId && new URL(reject.objectId.href).origin === new URL(services.config.publicUrl).origin ? reject.objectId.href : null;
  if (quoteRequest && (await remoteQuoteRejected(services, by, quoteRequest))) return;
  const object = await reject.getObject({ crossOrigin: 'trust' }).catch(() => null);
  if (!(object instanceof Follow)) return;
  const follower = await localAccountFromUri(services, ctx, object.actorId);
  if (follower) await endFollowFromRemote(services, follower.id, by.id, 'rejected');
}
