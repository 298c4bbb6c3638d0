/** Rows → ActivityPub objects (Fedify vocabulary). */
import {
  Accept,
  Block,
  Endpoints,
  Follow,
  Image,
  Move,
  Person,
  PUBLIC_COLLECTION,
  Reject,
  Service,
  Group,
  Application,
  Organization,
  PropertyValue,
  Undo,
  Update,
  type CryptographicKey,
  type Multikey,
} from '@fedify/vocab';
import type { Context } from '@fedify/fedify';
import { Temporal as TemporalPolyfill } from '@js-temporal/polyfill';
import type { Account } from '../../db/entities/index.ts';
import { formatFieldValue, formatPlainText, handleKey, type MentionTarget } from '../../lib/text-format.ts';

/** What the actor's HTML needs besides the row: the local domain and the accounts its bio mentions. */
export interface ActorProfileFacts {
  localDomain: string;
  /** Known accounts the bio and fields mention, by handleKey (services/account-views.ts mentionTargets). */
  mentions: ReadonlyMap<string, MentionTarget>;
}

const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

/** The media type of a stored image, from its file extension (media-store names files by the sniffed type). */
function imageType(url: string): string | null {
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(new URL(url).pathname)?.[1]?.toLowerCase();
  return (ext && IMAGE_TYPES[ext]) ?? null;
}

/** Mastodon publishes an actor's creation date rounded down to midnight UTC (as the REST created_at). */
function creationDay(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
}

const ACTOR_CLASSES = { Person, Service, Group, Application, Organization } as const;

export function toAsActor(
  ctx: Context<unknown>,
  account: Account,
  keys: { publicKey: CryptographicKey | null; assertionMethods: Multikey[] },
  movedTo: string | null = null,
  profile: ActorProfileFacts = { localDomain: ctx.canonicalOrigin ? new URL(ctx.canonicalOrigin).host : '', mentions: new Map() },
): Person | Service | Group | Application | Organization {
  const cls = ACTOR_CLASSES[account.actorType as keyof typeof ACTOR_CLASSES] ?? Person;
  const id = ctx.getActorUri(account.username);
  // The bio and field values as the REST API renders them (text-format.ts): peers show HTML, and
  // a rel="me" link in a field value is what their link verification looks for.
  const format = {
    baseUrl: ctx.canonicalOrigin,
    localDomain: profile.localDomain,
    resolveMention: (username: string, domain: string | null) => profile.mentions.get(handleKey(username, domain)),
  };
  const image = (url: string | null | undefined) => (url ? new Image({ url: new URL(url), mediaType: imageType(url) }) : null);
  return new cls({
    id,
    preferredUsername: account.username,
    // Always present (Mastodon sends its display name, "" when none).
    name: account.displayName,
    summary: formatPlainText(account.note, format) || null,
    url: account.url ? new URL(account.url) : null,
    published: toInstant(creationDay(account.createdAt)),
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
    icon: image(account.avatarUrl),
    image: image(account.headerUrl),
    attachments: account.fields.map((f) => new PropertyValue({ name: f.name, value: formatFieldValue(f.value, format) })),
    // alsoKnownAs: the accounts this one says it also is (a Move to it is accepted from those).
    aliases: (account.alsoKnownAs ?? []).map((u) => new URL(u)),
    // movedTo: where this account went (a Move was sent); Mastodon shows the redirect from it.
    successor: movedTo ? new URL(movedTo) : null,
  });
}

/** A local account's actor document with its published keys (RSA first, then Ed25519). */
export async function localActor(ctx: Context<unknown>, account: Account, movedTo: string | null, profile?: ActorProfileFacts) {
  const pairs = await ctx.getActorKeyPairs(account.username);
  return toAsActor(ctx, account, { publicKey: pairs[0]?.cryptographicKey ?? null, assertionMethods: pairs.map((p) => p.multikey) }, movedTo, profile);
}

/**
 * Fedify's vocabulary is typed against the global Temporal but, like Node 24, runs on the
 * polyfill it depends on; the instant is built with that same polyfill.
 */
export function toInstant(date: Date): Temporal.Instant {
  return TemporalPolyfill.Instant.fromEpochMilliseconds(date.getTime()) as unknown as Temporal.Instant;
}

// --- Outbound activities: pure builders from rows (effects/dispatch.ts sends them) -----------

/** The two ends of a follow, as the activities name them. */
export interface FollowEnds {
  /** follows.id */
  id: string;
  /** The Follow activity's id (follows.uri), when it has one. */
  uri: string | null;
  /** The follow actor's version: each Accept/Reject/Undo of a new version gets a new id. */
  version: number;
  followerUri: string;
  targetUri: string;
}

/** The Follow activity a follow row stands for (also embedded in Accept, Reject and Undo). */
export function toAsFollow(f: FollowEnds): Follow {
  return new Follow({ id: f.uri ? new URL(f.uri) : null, actor: new URL(f.followerUri), object: new URL(f.targetUri) });
}

/** The local target accepts the follow. */
export function toAsAccept(f: FollowEnds): Accept {
  return new Accept({ id: new URL(`${f.targetUri}#accepts/follows/${f.id}/${f.version}`), actor: new URL(f.targetUri), object: toAsFollow(f) });
}

/** The local target rejects a request, or removes a follower. */
export function toAsReject(f: FollowEnds): Reject {
  return new Reject({ id: new URL(`${f.targetUri}#rejects/follows/${f.id}/${f.version}`), actor: new URL(f.targetUri), object: toAsFollow(f) });
}

/**
 * A Follow refused before any follow row exists (the target hides the follower's domain): the
 * Reject embeds the remote activity by its id; `eventId` (the outbox event) makes its id unique.
 */
export function toAsRejectActivity(r: { targetUri: string; followerUri: string; activityUri: string; eventId: string }): Reject {
  return new Reject({
    id: new URL(`${r.targetUri}#rejects/${r.eventId}`),
    actor: new URL(r.targetUri),
    object: new Follow({ id: new URL(r.activityUri), actor: new URL(r.followerUri), object: new URL(r.targetUri) }),
  });
}

/** The local follower unfollows, or withdraws a request. */
export function toAsUndoFollow(f: FollowEnds): Undo {
  return new Undo({ id: new URL(`${f.followerUri}#follows/${f.id}/undo/${f.version}`), actor: new URL(f.followerUri), object: toAsFollow(f) });
}

export function toAsBlock(b: { uri: string; actorUri: string; targetUri: string }): Block {
  return new Block({ id: new URL(b.uri), actor: new URL(b.actorUri), object: new URL(b.targetUri) });
}

export function toAsUndoBlock(b: { uri: string; actorUri: string; targetUri: string }): Undo {
  return new Undo({ id: new URL(`${b.uri}/undo`), actor: new URL(b.actorUri), object: toAsBlock(b) });
}

/** Update(Person): the actor document to every follower's server. */
export function toAsUpdateActor(actorUri: string, at: Date, actor: Person | Service | Group | Application | Organization): Update {
  return new Update({ id: new URL(`${actorUri}#updates/${at.getTime()}`), actor: new URL(actorUri), to: PUBLIC_COLLECTION, object: actor });
}

/** Move: the account went to `targetUri`; `moveId` is fresh for each (re)sent Move. */
export function toAsMove(m: { actorUri: string; targetUri: string; moveId: string }): Move {
  return new Move({
    id: new URL(`${m.actorUri}#moves/${m.moveId}`),
    actor: new URL(m.actorUri),
    object: new URL(m.actorUri),
    target: new URL(m.targetUri),
    to: PUBLIC_COLLECTION,
  });
}
