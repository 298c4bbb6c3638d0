import type { Context } from '@fedify/fedify';
import { isActor, type Activity } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { AccountSchema, type Account } from '../../db/entities/index.ts';
import { persistAccount } from '../convert/from-as.ts';

/** The sending actor of a verified activity, as a (fresh or known) remote account. */
export async function resolveActivityActor(services: Services, activity: Activity): Promise<Account | null> {
  if (!activity.actorId) return null;
  const known = await services.db.em().findOne(AccountSchema, { uri: activity.actorId.href });
  if (known && known.fetchedAt && services.clock.now().getTime() - known.fetchedAt.getTime() < 24 * 3600_000) return known;
  const actor = await activity.getActor();
  if (!actor || !isActor(actor) || actor.id?.href !== activity.actorId.href) return known;
  return persistAccount(services, actor);
}

/** The local account an object id (an actor URI of ours) names. */
export async function localAccountFromUri(services: Services, ctx: Context<void>, uri: URL | null): Promise<Account | null> {
  if (!uri) return null;
  const parsed = ctx.parseUri(uri);
  if (parsed?.type !== 'actor') return null;
  return services.db.em().findOne(AccountSchema, { username: parsed.identifier, domain: null });
}
