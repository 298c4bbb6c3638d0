/** ActivityPub → rows: remote actors become (or refresh) remote accounts. */
import { isActor, type Actor, type Object as AsObject } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { AccountSchema, type Account } from '../../db/entities/index.ts';
import { RoostError } from '../../lib/errors.ts';
import { followActorRedirect } from '../../services/moves.ts';
import { insertRemoteAccount, refreshRemoteAccount } from '../../services/accounts.ts';

function str(v: unknown): string {
  return v == null ? '' : String(v);
}

export function actorDomain(actorId: URL): string {
  return actorId.host.toLowerCase();
}

/** Inserts or refreshes the remote account for an actor; returns the row. */
export async function persistAccount(services: Services, actor: Actor): Promise<Account> {
  if (!actor.id) throw new RoostError(422, 'Actor has no id');
  const uri = actor.id.href;
  const username = actor.preferredUsername ? str(actor.preferredUsername) : null;
  if (!username) throw new RoostError(422, `Actor ${uri} has no preferredUsername`);
  const now = services.clock.now();
  const fields: Account['fields'] = [];
  for await (const a of actor.getAttachments()) {
    if ('name' in a && 'value' in a && a.constructor.name === 'PropertyValue') {
      fields.push({ name: str((a as { name: unknown }).name), value: str((a as { value: unknown }).value), verified_at: null });
    }
  }
  const icon = await actor.getIcon().catch(() => null);
  const image = await actor.getImage().catch(() => null);
  const data = {
    username,
    domain: actorDomain(actor.id),
    displayName: str(actor.name),
    note: str(actor.summary),
    url: actor.url instanceof URL ? actor.url.href : (actor.url as { href?: URL } | null)?.href?.href ?? uri,
    inboxUrl: actor.inboxId?.href ?? null,
    sharedInboxUrl: actor.endpoints?.sharedInbox?.href ?? null,
    outboxUrl: actor.outboxId?.href ?? null,
    followersUrl: actor.followersId?.href ?? null,
    followingUrl: actor.followingId?.href ?? null,
    featuredUrl: actor.featuredId?.href ?? null,
    actorType: actorTypeName(actor),
    locked: actor.manuallyApprovesFollowers ?? false,
    discoverable: actor.discoverable ?? null,
    indexable: actor.indexable ?? false,
    avatarUrl: icon?.url instanceof URL ? icon.url.href : null,
    headerUrl: image?.url instanceof URL ? image.url.href : null,
    fields,
    alsoKnownAs: actor.aliasIds.map((u) => u.href),
    fetchedAt: now,
    updatedAt: now,
  };
  // The writes belong to the accounts service: a new row is born with its account actor's
  // snapshot, and a change of `locked` is a step of that actor.
  const existing = await services.db.em().findOne(AccountSchema, { uri });
  if (existing) {
    const refreshed = await refreshRemoteAccount(services, existing, data);
    if (await followActorRedirect(services, refreshed.id, actor.successorId?.href ?? null)) return (await services.db.em().findOne(AccountSchema, { id: refreshed.id }))!;
    return refreshed;
  }
  const account = await insertRemoteAccount(services, { uri, ...data });
  if (actor.successorId && (await followActorRedirect(services, account.id, actor.successorId.href))) {
    return (await services.db.em().findOne(AccountSchema, { id: account.id }))!;
  }
  return account;
}

export function actorTypeName(actor: AsObject): string {
  const name = actor.constructor.name;
  return ['Person', 'Service', 'Application', 'Group', 'Organization'].includes(name) ? name : 'Person';
}

export { isActor };
