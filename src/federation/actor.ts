/**
 * A local account's actor document as peers see it, with what it needs beyond the row (the
 * account it moved to, the accounts its bio mentions): one function for the actor dispatcher and
 * for the Update(Person) the effects send, so both carry the same document.
 */
import type { Context } from '@fedify/fedify';
import type { Services } from '../context.ts';
import type { Account } from '../db/entities/index.ts';
import { actorProfileFacts } from '../services/account-views.ts';
import { movedToUri } from '../services/moves.ts';
import { localActor } from './convert/to-as.ts';

export async function localActorDocument(services: Services, ctx: Context<unknown>, account: Account) {
  const [movedTo, profile] = await Promise.all([movedToUri(services, account), actorProfileFacts(services, account)]);
  return localActor(ctx, account, movedTo, profile);
}
