import type { InboxContext } from '@fedify/fedify';
import type { Delete } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { AccountSchema } from '../../db/entities/index.ts';
import { sqlFromEm } from '../../db/sql.ts';
import { forgetAccountInStats } from '../../services/account-stats.ts';

/**
 * Delete(Person): the remote actor is gone. Its account row goes, and with it (by foreign keys)
 * its follows, mutes and blocks in both directions. Only the actor itself can delete itself.
 */
export async function onDelete(services: Services, _ctx: InboxContext<void>, del: Delete): Promise<void> {
  const actorId = del.actorId?.href;
  if (!actorId || del.objectId?.href !== actorId) return; // deletes of other objects: later issues
  await services.db.em().transactional(async (tx) => {
    const account = await tx.findOne(AccountSchema, { uri: actorId, domain: { $ne: null } });
    if (!account) return;
    await forgetAccountInStats(sqlFromEm(tx), account.id);
    await tx.nativeDelete(AccountSchema, { id: account.id });
  });
}
