import type { InboxContext } from '@fedify/fedify';
import { isActor, type Update } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { persistAccount } from '../convert/from-as.ts';

/** Update(Person): a remote actor changed its profile; only its own update counts. */
export async function onUpdate(services: Services, _ctx: InboxContext<void>, update: Update): Promise<void> {
  const object = await update.getObject().catch(() => null);
  if (!object || !isActor(object) || !object.id || object.id.href !== update.actorId?.href) return;
  await persistAccount(services, object);
}
