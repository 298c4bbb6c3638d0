import type { InboxContext } from '@fedify/fedify';
import type { Delete } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { deleteRemoteAccount } from '../../services/accounts.ts';

/**
 * Delete(Person): the remote actor is gone. Its account actor steps to `deleted`, its follows end
 * through their follow actors, then the row goes (with its mutes and blocks). Only the actor
 * itself can delete itself.
 */
export async function onDelete(services: Services, _ctx: InboxContext<void>, del: Delete): Promise<void> {
  const actorId = del.actorId?.href;
  if (!actorId || del.objectId?.href !== actorId) return; // deletes of other objects: later issues
  await deleteRemoteAccount(services, actorId);
}
