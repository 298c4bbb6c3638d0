import type { InboxContext } from '@fedify/fedify';
import type { Delete } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { AccountSchema } from '../../db/entities/index.ts';
import { deleteRemoteAccount } from '../../services/accounts.ts';
import { deleteRemoteStatus } from '../../services/remote-statuses.ts';
import { remoteAuthorizationDeleted } from '../../services/quotes.ts';

/**
 * Delete(Person): the remote actor is gone. Its account actor steps to `deleted`, its follows end
 * through their follow actors, then the row goes (with its mutes and blocks). Only the actor
 * itself can delete itself.
 *
 * Delete(Note | Tombstone | a bare id): one of the actor's statuses (or reblogs) is gone; it is
 * marked deleted and the reblogs of it with it. Only its author can delete it; an unknown
 * actor or status costs no fetch.
 *
 * Delete of a QuoteAuthorization (its id): the quotes it stamped are revoked.
 */
export async function onDelete(services: Services, _ctx: InboxContext<void>, del: Delete): Promise<void> {
  const actorId = del.actorId?.href;
  const objectId = del.objectId?.href;
  if (!actorId || !objectId) return;
  if (objectId === actorId) {
    await deleteRemoteAccount(services, actorId);
    return;
  }
  const by = await services.db.em().findOne(AccountSchema, { uri: actorId });
  if (!by || by.domain === null) return;
  // The Delete of a QuoteAuthorization (FEP-044f): the quoted author took the stamp back.
  if (await remoteAuthorizationDeleted(services, by, objectId)) return;
  await deleteRemoteStatus(services, by.id, objectId);
}
