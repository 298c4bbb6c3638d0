/** Rows → ActivityPub objects (Fedify vocabulary). */
import { Endpoints, Image, Person, Service, Group, Application, Organization, PropertyValue, type CryptographicKey, type Multikey } from '@fedify/vocab';
import type { Context } from '@fedify/fedify';
import { Temporal as TemporalPolyfill } from '@js-temporal/polyfill';
import type { Account } from '../../db/entities/index.ts';

const ACTOR_CLASSES = { Person, Service, Group, Application, Organization } as const;

export function toAsActor(
  ctx: Context<unknown>,
  account: Account,
  keys: { publicKey: CryptographicKey | null; assertionMethods: Multikey[] },
  movedTo: string | null = null,
): Person | Service | Group | Application | Organization {
  const cls = ACTOR_CLASSES[account.actorType as keyof typeof ACTOR_CLASSES] ?? Person;
  const id = ctx.getActorUri(account.username);
  return new cls({
    id,
    preferredUsername: account.username,
    name: account.displayName || null,
    summary: account.note || null,
    url: account.url ? new URL(account.url) : null,
    published: toInstant(account.createdAt),
    manuallyApprovesFollowers: account.locked,
    discoverable: account.discoverable ?? false,
    indexable: account.indexable,
    inbox: ctx.getInboxUri(account.username),
    outbox: ctx.getOutboxUri(account.username),
    followers: ctx.getFollowersUri(account.username),
    following: ctx.getFollowingUri(account.username),
    featured: ctx.getFeaturedUri(account.username),
    featuredTags: ctx.getFeaturedTagsUri(account.username),
    endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
    publicKey: keys.publicKey,
    assertionMethods: keys.assertionMethods,
    icon: account.avatarUrl ? new Image({ url: new URL(account.avatarUrl) }) : null,
    image: account.headerUrl ? new Image({ url: new URL(account.headerUrl) }) : null,
    attachments: account.fields.map((f) => new PropertyValue({ name: f.name, value: f.value })),
    // alsoKnownAs: the accounts this one says it also is (a Move to it is accepted from those).
    aliases: (account.alsoKnownAs ?? []).map((u) => new URL(u)),
    // movedTo: where this account went (a Move was sent); Mastodon shows the redirect from it.
    successor: movedTo ? new URL(movedTo) : null,
  });
}

/** A local account's actor document with its published keys (RSA first, then Ed25519). */
export async function localActor(ctx: Context<unknown>, account: Account, movedTo: string | null) {
  const pairs = await ctx.getActorKeyPairs(account.username);
  return toAsActor(ctx, account, { publicKey: pairs[0]?.cryptographicKey ?? null, assertionMethods: pairs.map((p) => p.multikey) }, movedTo);
}

/**
 * Fedify's vocabulary is typed against the global Temporal but, like Node 24, runs on the
 * polyfill it depends on; the instant is built with that same polyfill.
 */
export function toInstant(date: Date): Temporal.Instant {
  return TemporalPolyfill.Instant.fromEpochMilliseconds(date.getTime()) as unknown as Temporal.Instant;
}
