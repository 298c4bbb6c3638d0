import type { InboxContext } from '@fedify/fedify';
import { Note, type Create } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { isStatusObject } from '../convert/from-as.ts';
import { newFetchBudget, persistNote } from '../remote-statuses.ts';
import { localAccountFromUri, resolveActivityActor } from './resolve.ts';
import { isVoteShaped, receiveVote } from '../polls.ts';

/**
 * Create(Note | Article): a remote status, stored once (by its uri) through persistNote. Only the
 * signed actor's own objects are taken: attributed to it, with an id on its host (checked in
 * persistNote), and only when it concerns this server (a local follower of the author, a local
 * account mentioned or addressed, a reply to a local or followed status: Mastodon's
 * related_to_local_activity?). A Question is a status with its poll. A Note with a `name` in reply
 * to a local poll is a vote (../polls.ts receiveVote): counted there, never stored as a status.
 */
export async function onCreate(services: Services, ctx: InboxContext<void>, create: Create): Promise<void> {
  const by = await resolveActivityActor(services, create);
  if (!by || by.domain === null || by.suspendedAt) return;
  const object = await create.getObject().catch(() => null);
  if (!isStatusObject(object)) return;
  if (object instanceof Note && isVoteShaped(object) && (await receiveVote(services, object, by)) !== null) return;
  const deliveredTo = ctx.recipient ? await localAccountFromUri(services, ctx, ctx.getActorUri(ctx.recipient)) : null;
  await persistNote(services, ctx, object, by, {
    depth: 0,
    budget: newFetchBudget(),
    deliveredTo,
    requireLocalRelation: true,
    fallback: { to: create.toIds, cc: create.ccIds },
    // The JSON as received (Fedify keeps it): an attachment's blurhash and focalPoint are read from it.
    raw: await create.toJsonLd().catch(() => null),
  });
}
