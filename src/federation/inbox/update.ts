import type { InboxContext } from '@fedify/fedify';
import { isActor, Question, type Update } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { AccountSchema } from '../../db/entities/index.ts';
import { isStatusObject, persistAccount } from '../convert/from-as.ts';
import { updateNote } from '../remote-statuses.ts';
import { updateQuestion } from '../polls.ts';

/**
 * Update(Person): a remote actor changed its profile; only its own update counts.
 * Update(Note | Article): its author edited a status we have (unknown ones are not fetched).
 * Update(Question): the same for a status with a poll, and the poll's latest tallies (../polls.ts).
 */
export async function onUpdate(services: Services, ctx: InboxContext<void>, update: Update): Promise<void> {
  const object = await update.getObject().catch(() => null);
  if (!object || !object.id) return;
  if (isActor(object)) {
    if (object.id.href !== update.actorId?.href) return;
    await persistAccount(services, object);
    return;
  }
  if (isStatusObject(object) && update.actorId) {
    const by = await services.db.em().findOne(AccountSchema, { uri: update.actorId.href });
    if (!by || by.domain === null || by.suspendedAt) return;
    const raw = await update.toJsonLd().catch(() => null);
    if (object instanceof Question) await updateQuestion(services, ctx, object, by, raw);
    else await updateNote(services, ctx, object, by, raw);
  }
}
