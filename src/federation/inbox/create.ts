import type { InboxContext } from '@fedify/fedify';
import { Note, type Create } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { isStatusObject } from '../convert/from-as.ts';
import { newFetchBudget, persistNote } from '../remote-statuses.ts';
import { localAccountFromUri, resolveActivityActor } from './resolve.ts';
import { isVoteShaped, receiveVote } from '../polls.ts';

/** The vote Notes of one Create taken at most (Mastodon's polls have at most 4 options; other servers a few more). */
const MAX_VOTE_NOTES = 20;

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
  if (object instanceof Note && isVoteShaped(object)) {
    // GoToSocial sends a multiple-choice vote as one Create whose `object` is an array of vote
    // Notes, one per choice: each is counted (a few at most, as many as a poll has options).
    const notes: Note[] = [];
    for await (const o of create.getObjects({ suppressError: true })) {
      if (o instanceof Note && isVoteShaped(o)) notes.push(o);
      if (notes.length >= MAX_VOTE_NOTES) break;
    }
    let vote = false;
    for (const note of notes.length ? notes : [object]) vote = (await receiveVote(services, note, by)) !== null || vote;
    if (vote) return;
  }
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
