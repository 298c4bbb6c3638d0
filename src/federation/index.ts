/**
 * Fedify, wired to Roost: actor dispatcher and key pairs for local accounts, WebFinger (Fedify
 * answers it from the actor dispatcher), followers/following counters, and the inbox listeners.
 * One Federation per Roost instance; no global state, so several instances share a process.
 */
import type { webcrypto } from 'node:crypto';
import {
  createFederation,
  importJwk,
  type Federation,
  type KvStore,
  type MessageQueue,
  type MessageQueueEnqueueOptions,
  type MessageQueueListenOptions,
  type InboxContext,
} from '@fedify/fedify';
import { Accept, Announce, Block, Create, Delete, Emoji, EmojiReact, Flag, Follow, Like, Move, Note, QuoteAuthorization, QuoteRequest, Undo, Reject, Update, type Activity } from '@fedify/vocab';
import type { Services } from '../context.ts';
import { exponentialBackoff } from '../jobs/queue.ts';
import { AccountKeySchema } from '../db/entities/index.ts';
import { localAccountCounters } from '../services/reads/accounts.ts';
import { findLocalAccount } from '../services/accounts.ts';
import { toAsAnnounce, toAsCreateNote, toAsQuoteAuthorization, toAsStatusObject, toAsTombstone } from './convert/to-as.ts';
import { onQuoteRequest } from './quotes.ts';
import { localAuthorization } from '../services/quotes.ts';
import { announceFacts, loadStatusAs, loadStatusesAs, outboxPage, remoteMaySee } from './statuses.ts';
import { onCreate } from './inbox/create.ts';
import { onAnnounce } from './inbox/announce.ts';
import { onLike } from './inbox/like.ts';
import { localActorDocument } from './actor.ts';
import { featuredTagsOf } from '../services/reads/tags.ts';
import { toAsEmoji, toAsFeaturedTags } from './convert/to-as-emojis-tags.ts';
import { emojiFacts, localEmojiById } from '../services/reads/emojis.ts';
import { onFollow } from './inbox/follow.ts';
import { onAccept } from './inbox/accept.ts';
import { onReject } from './inbox/reject.ts';
import { onUndo } from './inbox/undo.ts';
import { onBlock } from './inbox/block.ts';
import { onUpdate } from './inbox/update.ts';
import { onDelete } from './inbox/delete.ts';
import { onMove } from './inbox/move.ts';
import { onFlag } from './inbox/flag.ts';
import {
  authenticatedDocumentLoaderFactory,
  contextLoaderFactory,
  documentLoaderFactory,
  loaderSettings,
  withMemoryKeyCache,
  withShortUnavailableKeys,
} from './loaders.ts';
import { INSTANCE_ACTOR, instanceActorDocument, instanceActorKeyId, instanceActorKeys, instanceActorUsername } from './instance-actor.ts';
import { fetchAuthorizer } from './authorized-fetch.ts';
import { unverifiedCreateHandler } from './inbox/forwarded.ts';
import { parseActivitiesOnce } from './fedify-seams.ts';
import { createInboxFastPath, SIGNATURE_TIME_WINDOW, type InboxFastPath } from './inbox-fast.ts';
import { contextCount, contextPage, featuredStatusIds, FIRST_REPLIES_PAGE, localThread, repliesCount, repliesPage, statusCounters, withNoteCollections } from './collections.ts';

export type RoostFederation = Federation<void>;

/** Items per page of the followers/following collections (Mastodon's FOLLOW_PER_PAGE). */
const COLLECTION_PAGE_SIZE = 12;
/** The cursor of a collection's first page; later cursors are the last follow id of a page. */
const FIRST_PAGE = 'first';

/**
 * One page of the accounts following `accountId` (`side` 'followers') or followed by it
 * ('following'), newest first, as actor URIs; nothing when the account hides its collections.
 */
async function collectionPage(services: Services, accountId: string, side: 'followers' | 'following', cursor: string) {
  const before = cursor === FIRST_PAGE || !/^\d{1,20}$/.test(cursor) ? null : cursor;
  const [self, other] = side === 'followers' ? ['target_account_id', 'account_id'] : ['account_id', 'target_account_id'];
  const rows = await services.db.sql.query<{ id: string; uri: string }>(
    `select f.id::text as id, a.uri from follows f join accounts a on a.id = f.${other}
      where f.${self} = $1 and f.state = 'accepted' and a.suspended_at is null and ($2::bigint is null or f.id < $2::bigint)
        and not exists (select 1 from accounts me where me.id = $1 and me.hide_collections)
      order by f.id desc limit ${COLLECTION_PAGE_SIZE + 1}`,
    [accountId, before],
  );
  const more = rows.length > COLLECTION_PAGE_SIZE;
  const page = rows.slice(0, COLLECTION_PAGE_SIZE);
  return { items: page.map((r) => new URL(r.uri)), nextCursor: more ? page[page.length - 1]!.id : null };
}

/**
 * How Fedify's queue retries a failed inbox task: in place (nativeRetrial), 1 s doubling to a 12 h
 * cap, ±25 % jitter, 22 attempts (about three days). In place matters: one actor's activities
 * (one ordering key, OrderedInbox) wait behind a failing one instead of overtaking it when it is
 * re-enqueued, so they are processed in the order they arrived.
 */
export const FEDIFY_QUEUE_RETRY = {
  nativeRetrial: true,
  maxAttempts: 22,
  backoff: exponentialBackoff({ baseMs: 1_000, factor: 2, maxMs: 12 * 3600_000, jitter: 0.25 }),
} as const;

/** The id of an activity's actor in a queued inbox message (the JSON as received), or null. */
function inboxActorId(message: unknown): string | null {
  const activity = (message as { activity?: unknown } | null)?.activity as Record<string, unknown> | undefined;
  // Expanded JSON-LD names the actor `…#actor: [{"@id": …}]`.
  const raw = activity?.actor ?? activity?.['https://www.w3.org/ns/activitystreams#actor'];
  const actor = Array.isArray(raw) ? raw[0] : raw;
  if (typeof actor === 'string') return actor;
  const id = (actor as { id?: unknown; '@id'?: unknown } | undefined)?.id ?? (actor as { '@id'?: unknown } | undefined)?.['@id'];
  return typeof id === 'string' ? id : null;
}

/**
 * Fedify's inbox queue: each incoming activity is enqueued with its actor as the ordering key, so
 * one sender's activities are processed one at a time in the order they arrived (a Follow, then
 * its Undo, delivered in order by the sender, must not be processed the other way round by
 * parallel workers).
 */
class OrderedInbox implements MessageQueue {
  readonly nativeRetrial: boolean | undefined;
  readonly #queue: MessageQueue;
  constructor(queue: MessageQueue) {
    this.#queue = queue;
    this.nativeRetrial = queue.nativeRetrial;
  }
  enqueue(message: unknown, options?: MessageQueueEnqueueOptions): Promise<void> {
    const actor = inboxActorId(message);
    return this.#queue.enqueue(message, actor && !options?.orderingKey ? { ...options, orderingKey: `inbox ${actor}` } : options);
  }
  listen(handler: (message: unknown) => Promise<void> | void, options?: MessageQueueListenOptions): Promise<void> {
    return this.#queue.listen(handler, options);
  }
}

const fastPaths = new WeakMap<RoostFederation, InboxFastPath>();

/** The shared inbox's fast path of a federation createRoostFederation built (./inbox-fast.ts). */
export function inboxFastPath(federation: RoostFederation): InboxFastPath | undefined {
  return fastPaths.get(federation);
}

export interface FederationDeps {
  services: Services;
  kv: KvStore;
  queue: MessageQueue;
}

export function createRoostFederation({ services, kv, queue }: FederationDeps): RoostFederation {
  const { config } = services;
  const log = services.log.child({ module: 'federation' });
  // The inbox parses an activity once, not twice (./fedify-seams.ts).
  parseActivitiesOnce();
  // Every fetch Fedify makes for us (actors, keys, objects, contexts, signed fetches) goes through
  // the bounded fetcher (./loaders.ts); federation.allowPrivateAddresses reaches it there (Fedify
  // refuses its own allowPrivateAddress/userAgent options next to custom loaders).
  const loaders = loaderSettings(services);
  // Remote keys in memory in front of the store (./loaders.ts): no round trip per signed request.
  const keyMemory = withMemoryKeyCache(kv, services.clock);
  const fedifyKv = withShortUnavailableKeys(keyMemory);
  // The instance actor's keys (./instance-actor.ts): they sign every fetch the default document
  // loader makes (actors, keys, objects, reply parents), and Fedify's shared-inbox fetches.
  const instanceKeys = instanceActorKeys(services);
  const instanceSigningKey = async () => {
    const [rsa] = await instanceKeys();
    return rsa ? { keyId: instanceActorKeyId(services), privateKey: rsa.privateKey } : null;
  };
  const mayFetchDocuments = fetchAuthorizer(services);
  const inboxQueue = new OrderedInbox(queue);
  const documentLoaders = documentLoaderFactory(loaders, fedifyKv, instanceSigningKey);
  const contextLoaders = contextLoaderFactory(loaders, fedifyKv);
  const federation = createFederation<void>({
    kv: fedifyKv,
    // The inbox only: Roost delivers through its own lanes (./delivery.ts), so Fedify has no
    // outbox queue, no fan-out queue and no circuit breaker (those are delivery.ts's).
    queue: { inbox: inboxQueue },
    manuallyStartQueue: true,
    origin: config.publicUrl,
    documentLoaderFactory: documentLoaders,
    contextLoaderFactory: contextLoaders,
    authenticatedDocumentLoaderFactory: authenticatedDocumentLoaderFactory(loaders),
    // A signature's Date (or RFC 9421 `created`) may be this far from now, as Mastodon allows
    // (SignatureVerification: 12 hours either way); Fedify's default is one hour.
    // With a signature clock of its own (the lab's, which jumps), Fedify's check against the wall
    // clock would refuse every signature: the gate checks the window on that clock instead
    // (./inbox-guard.ts guardInbox).
    signatureTimeWindow: services.signatureClock ? false : SIGNATURE_TIME_WINDOW,
  });

  // Key pairs are read once per account and cached as a promise (32 concurrent first requests
  // must not each decode and import the keys).
  const keyCache = new Map<string, Promise<{ privateKey: webcrypto.CryptoKey; publicKey: webcrypto.CryptoKey }[]>>();
  async function loadKeys(accountId: string) {
    const rows = await services.db.em().find(AccountKeySchema, { accountId }, { orderBy: { algorithm: 'desc' } });
    // RSA first: Mastodon verifies RSA signatures, and Fedify uses the first pair for signing.
    rows.sort((a, b) => (a.algorithm === 'RSASSA-PKCS1-v1_5' ? -1 : 0) - (b.algorithm === 'RSASSA-PKCS1-v1_5' ? -1 : 0));
    return Promise.all(
      rows.map(async (r) => ({
        privateKey: await importJwk(r.privateJwk, 'private'),
        publicKey: await importJwk(r.publicJwk, 'public'),
      })),
    );
  }

  /**
   * A local account as the world may see it: a pending sign-up has no actor, WebFinger or
   * collections yet — 404, as Mastodon answers. Pending: not yet approved, or signed up through
   * the API (POST /api/v1/accounts) with its e-mail address not confirmed yet. Accounts an operator
   * created (`roost accounts create`, with or without --confirmed) are not sign-ups.
   */
  async function visibleLocalAccount(username: string) {
    const account = await findLocalAccount(services.db.em(), username);
    if (!account) return null;
    const [user] = await services.db.sql.query<{ pending: boolean }>(
      `select not approved or (confirmed_at is null and created_by_application_id is not null) as pending
         from users where account_id = $1`,
      [account.id],
    );
    return user?.pending ? null : account;
  }

  // A collection's totalItems and first page link come without its dispatcher being asked: for a
  // pending sign-up there is no first cursor (so Fedify asks the dispatcher, which says 404) and
  // no count.
  const counters = async (identifier: string) => ((await visibleLocalAccount(identifier)) ? localAccountCounters(services, identifier) : null);
  // An account that hides its network (Mastodon's "hide your network", accounts.hide_collections)
  // shows how many followers and follows it has, not who: its collections have no first page,
  // and their pages list nobody (Mastodon answers only id, type and totalItems).
  const firstCursorUnlessHidden = async (identifier: string) => {
    const account = await visibleLocalAccount(identifier);
    return account && !account.hideCollections ? FIRST_PAGE : null;
  };

  federation
    .setActorDispatcher('/users/{identifier}', async (ctx, identifier) => {
      if (identifier === INSTANCE_ACTOR) return instanceActorDocument(services, ctx);
      const account = await visibleLocalAccount(identifier);
      if (!account || account.suspendedAt || account.username !== identifier) return null;
      return localActorDocument(services, ctx, account);
    })
    .mapHandle(async (_ctx, username) => {
      const account = await visibleLocalAccount(username);
      if (account) return account.suspendedAt ? null : account.username;
      // acct:HOST@HOST is the instance actor, as Mastodon's representative account is found.
      return username.toLowerCase() === instanceActorUsername(services).toLowerCase() ? INSTANCE_ACTOR : null;
    })
    // WebFinger on a profile URL (https://host/@user, what people paste into a search box), as
    // Mastodon answers it; actor URLs (/users/user) and acct: are understood by Fedify itself.
    .mapAlias((_ctx, resource) => {
      if (resource.origin !== new URL(config.publicUrl).origin) return null;
      const m = /^\/@([A-Za-z0-9_.-]+)\/?$/.exec(resource.pathname);
      return m ? { username: m[1]! } : null;
    })
    .setKeyPairsDispatcher(async (_ctx, identifier) => {
      if (identifier === INSTANCE_ACTOR) return instanceKeys();
      const account = await findLocalAccount(services.db.em(), identifier);
      if (!account) return [];
      let p = keyCache.get(account.id);
      if (!p) {
        p = loadKeys(account.id);
        keyCache.set(account.id, p);
        p.catch(() => keyCache.delete(account.id));
      }
      return p;
    })
    // Authorized fetch (./authorized-fetch.ts); the instance actor is always served.
    .authorize((ctx, identifier) => identifier === INSTANCE_ACTOR || mayFetchDocuments(ctx));

  // Followers and following: the collection says how many and links its first page; pages list
  // actor URIs newest first (nothing when the account hides its collections, as on Mastodon).
  federation
    .setFollowersDispatcher('/users/{identifier}/followers', async (_ctx, identifier, cursor) => {
      const account = await visibleLocalAccount(identifier);
      if (!account) return null;
      if (cursor === null) return { items: [] };
      const page = await collectionPage(services, account.id, 'followers', cursor);
      return { items: page.items.map((id) => ({ id, inboxId: null, endpoints: null })), nextCursor: page.nextCursor };
    })
    .setFirstCursor(async (_ctx, identifier) => firstCursorUnlessHidden(identifier))
    .setCounter(async (_ctx, identifier) => (await counters(identifier))?.followers ?? null)
    .authorize((ctx) => mayFetchDocuments(ctx));
  federation
    .setFollowingDispatcher('/users/{identifier}/following', async (_ctx, identifier, cursor) => {
      const account = await visibleLocalAccount(identifier);
      if (!account) return null;
      return cursor === null ? { items: [] } : collectionPage(services, account.id, 'following', cursor);
    })
    .setFirstCursor(async (_ctx, identifier) => firstCursorUnlessHidden(identifier))
    .setCounter(async (_ctx, identifier) => (await counters(identifier))?.following ?? null)
    .authorize((ctx) => mayFetchDocuments(ctx));
  // The outbox: pages of the account's public and unlisted posts (Create with the Note) and
  // reblogs (Announce), newest first, 20 a page as Mastodon's, in a fixed number of statements
  // (the page, its statuses with mentions and tags, the originals of its reblogs).
  federation
    .setOutboxDispatcher('/users/{identifier}/outbox', async (ctx, identifier, cursor) => {
      const account = await visibleLocalAccount(identifier);
      if (!account || account.suspendedAt) return null;
      if (cursor === null) return { items: [] };
      const page = await outboxPage(services, account.id, cursor === FIRST_PAGE || !/^\d{1,20}$/.test(cursor) ? null : cursor);
      const rows = await loadStatusesAs(services, ctx, page.ids);
      const originals = await loadStatusesAs(services, ctx, [...rows.values()].flatMap((r) => (r.reblogOfId ? [r.reblogOfId] : [])));
      const items = page.ids.flatMap((id): Activity[] => {
        const r = rows.get(id);
        if (!r) return [];
        if (!r.reblogOfId) return [toAsCreateNote(r.note)];
        const original = originals.get(r.reblogOfId);
        return original ? [toAsAnnounce(announceFacts(r, original))] : [];
      });
      return { items, nextCursor: page.next };
    })
    .setFirstCursor(async (_ctx, identifier) => ((await visibleLocalAccount(identifier)) ? FIRST_PAGE : null))
    // The account's post count (Mastodon's outbox totalItems is its statuses_count).
    .setCounter(async (_ctx, identifier) => (await counters(identifier))?.statuses ?? null)
    .authorize((ctx) => mayFetchDocuments(ctx));

  // A local status at its URI: the Note; a deleted one: its Tombstone (Fedify serves an object
  // dispatcher's answer with 200; actors alone get 410). Public and unlisted ones to anybody;
  // private, direct and limited ones only to a signed fetch by an actor who may see them
  // (a follower, a mentioned account), else 401.
  const localStatus = async (identifier: string, id: string) => {
    if (!/^\d{1,20}$/.test(id)) return null;
    const account = await visibleLocalAccount(identifier);
    if (!account || account.suspendedAt) return null;
    const ctx = federation.createContext(new URL(config.publicUrl), undefined);
    const s = await loadStatusAs(services, ctx, id);
    return s && s.local && s.accountId === account.id ? s : null;
  };
  const mayFetch = async (ctx: { getSignedKeyOwner(): Promise<{ id: URL | null } | null> }, identifier: string, id: string) => {
    const s = await localStatus(identifier, id);
    if (!s || s.deleted || s.note.visibility === 'public' || s.note.visibility === 'unlisted') return true;
    const owner = await ctx.getSignedKeyOwner().catch(() => null);
    return owner?.id ? remoteMaySee(services, s.id, owner.id.href) : false;
  };
  federation
    .setObjectDispatcher(Note, '/users/{identifier}/statuses/{id}', async (_ctx, { identifier, id }) => {
      const s = await localStatus(identifier, id);
      if (!s || s.reblogOfId) return null;
      // A status with a poll is a Question (served at the same URI, as Mastodon), with its collections.
      return s.deleted ? (toAsTombstone(s.note.uri) as unknown as Note) : ((await withNoteCollections(services, toAsStatusObject(s.note), s.id)) as unknown as Note);
    })
    .authorize(async (ctx, { identifier, id }) => (await mayFetchDocuments(ctx)) && mayFetch(ctx, identifier, id));
  // A status's replies (public and unlisted ones, oldest first, paged), and the likes and shares
  // collections its Note names (their totalItems only, as Mastodon's), for the statuses anyone may see.
  const publicStatus = async (identifier: string, id: string) => {
    const s = await localStatus(identifier, id);
    return s && !s.deleted && !s.reblogOfId && (s.note.visibility === 'public' || s.note.visibility === 'unlisted') ? s : null;
  };
  // With authorized fetch the requester is known: replies by accounts that block it or its
  // domain are left out (as Mastodon's StatusPolicy); without, everybody is shown the same.
  const requesterId = async (ctx: { getSignedKeyOwner(): Promise<{ id: URL | null } | null> }) => {
    if (!config.federation.authorizedFetch) return null;
    const owner = await ctx.getSignedKeyOwner().catch(() => null);
    if (!owner?.id) return null;
    const [row] = await services.db.sql.query<{ id: string }>(`select id::text from accounts where uri = $1`, [owner.id.href]);
    return row?.id ?? null;
  };
  federation
    .setCollectionDispatcher('replies', Note, '/users/{identifier}/statuses/{id}/replies', async (ctx, { identifier, id }, cursor) => {
      const s = await publicStatus(identifier, id);
      if (!s) return null;
      if (cursor === null) return { items: [] };
      const page = await repliesPage(services, s.id, cursor === FIRST_REPLIES_PAGE || !/^\d{1,20}$/.test(cursor) ? null : cursor, await requesterId(ctx));
      // The items are the replies' URIs, as Mastodon lists them (Fedify types custom collection
      // items as objects, but builds the page with a constructor that takes URLs too).
      return { items: page.uris.map((u) => new URL(u)) as unknown as Note[], nextCursor: page.next };
    })
    .setFirstCursor(async (_ctx, { identifier, id }) => ((await publicStatus(identifier, id)) ? FIRST_REPLIES_PAGE : null))
    // How many replies anybody may see: what a peer measures the thread's completeness by.
    .setCounter(async (_ctx, { identifier, id }) => {
      const s = await publicStatus(identifier, id);
      return s ? repliesCount(services, s.id) : null;
    })
    .authorize((ctx) => mayFetchDocuments(ctx));
  // A thread rooted here as a collection of its statuses (FEP-7888 `context`, Mastodon 4.5's
  // /contexts): the URIs of those anybody may see, oldest first, 60 a page, with their count.
  federation
    .setCollectionDispatcher('context', Note, '/contexts/{id}', async (ctx, { id }, cursor) => {
      if (!(await localThread(services, id))) return null;
      if (cursor === null) return { items: [] };
      const page = await contextPage(services, id, cursor === FIRST_REPLIES_PAGE || !/^\d{1,20}$/.test(cursor) ? null : cursor, await requesterId(ctx));
      return { items: page.uris.map((u) => new URL(u)) as unknown as Note[], nextCursor: page.next };
    })
    .setFirstCursor(async (_ctx, { id }) => ((await localThread(services, id)) ? FIRST_REPLIES_PAGE : null))
    .setCounter(async (_ctx, { id }) => ((await localThread(services, id)) ? contextCount(services, id) : null))
    .authorize((ctx) => mayFetchDocuments(ctx));
  for (const [name, field] of [['likes', 'likes'], ['shares', 'shares']] as const) {
    federation
      .setCollectionDispatcher(name, Note, `/users/{identifier}/statuses/{id}/${name}`, async (_ctx, { identifier, id }) =>
        (await publicStatus(identifier, id)) ? { items: [] } : null,
      )
      .setCounter(async (_ctx, { identifier, id }) => {
        const s = await publicStatus(identifier, id);
        return s ? (await statusCounters(services, s.id))[field] : null;
      })
      .authorize((ctx) => mayFetchDocuments(ctx));
  }
  // The activity of a status: Create for a post, Announce for a reblog (whose uri it is), for
  // public and unlisted ones.
  federation
    .setObjectDispatcher(Announce, '/users/{identifier}/statuses/{id}/activity', async (ctx, { identifier, id }) => {
      const s = await localStatus(identifier, id);
      if (!s || s.deleted || (s.note.visibility !== 'public' && s.note.visibility !== 'unlisted')) return null;
      if (!s.reblogOfId) return toAsCreateNote(s.note) as unknown as Announce;
      const original = (await loadStatusesAs(services, ctx, [s.reblogOfId])).get(s.reblogOfId);
      return original && !original.deleted ? toAsAnnounce(announceFacts(s, original)) : null;
    })
    .authorize((ctx) => mayFetchDocuments(ctx));
  // Mastodon's featured collections, at its paths. Featured: the pinned statuses anyone may see,
  // most recently pinned first, as Notes (an OrderedCollection, as Mastodon's), in a fixed number
  // of statements. Featured hashtags: one Hashtag per featured tag.
  const noneYet = async (identifier: string) => {
    const account = await visibleLocalAccount(identifier);
    return account && !account.suspendedAt ? 0 : null;
  };
  const featuredNotes = async (ctx: Parameters<typeof loadStatusesAs>[1], identifier: string) => {
    const account = await visibleLocalAccount(identifier);
    if (!account || account.suspendedAt) return null;
    const ids = await featuredStatusIds(services, account.id, config.limits.accounts.maxPinnedStatuses);
    const rows = await loadStatusesAs(services, ctx, ids);
    return ids.flatMap((id) => {
      const r = rows.get(id);
      return r && !r.deleted ? [toAsStatusObject(r.note) as unknown as Note] : [];
    });
  };
  federation
    .setFeaturedDispatcher('/users/{identifier}/collections/featured', async (ctx, identifier) => {
      const notes = await featuredNotes(ctx, identifier);
      return notes === null ? null : { items: notes };
    })
    .setCounter(async (_ctx, identifier) => {
      const account = await visibleLocalAccount(identifier);
      if (!account || account.suspendedAt) return null;
      return (await featuredStatusIds(services, account.id, config.limits.accounts.maxPinnedStatuses)).length;
    })
    .authorize((ctx) => mayFetchDocuments(ctx));
  // Featured hashtags: one Hashtag per featured tag, linking the account's statuses with it.
  const featuredTags = async (identifier: string) => {
    const account = await visibleLocalAccount(identifier);
    return account && !account.suspendedAt ? toAsFeaturedTags(config.publicUrl, await featuredTagsOf(services, account.id)) : null;
  };
  federation
    .setFeaturedTagsDispatcher('/users/{identifier}/collections/tags', async (_ctx, identifier) => {
      const items = await featuredTags(identifier);
      return items === null ? null : { items };
    })
    .setCounter(async (_ctx, identifier) => (await featuredTags(identifier))?.length ?? null)
    .authorize((ctx) => mayFetchDocuments(ctx));

  // The stamp a local author gave a quote (FEP-044f QuoteAuthorization), at the URI the Accept
  // named: served while the quote stands (404 once revoked), for other servers to verify.
  federation
    .setObjectDispatcher(QuoteAuthorization, '/users/{identifier}/quote_authorizations/{id}', async (_ctx, { identifier, id }) => {
      const a = await localAuthorization(services, identifier, id);
      return a ? toAsQuoteAuthorization(a) : null;
    })
    .authorize((ctx) => mayFetchDocuments(ctx));

  // A local custom emoji at its id (the Emoji tags of Notes and actors name it), as Mastodon serves it.
  federation.setObjectDispatcher(Emoji, '/emojis/{id}', async (_ctx, { id }) => {
    const emoji = await localEmojiById(services, id);
    return emoji ? toAsEmoji(emojiFacts(services, emoji)) : null;
  });

  // Each listener, watched by the lab when it watches (services.observe): an activity applied or failed.
  type Listener<A extends { id: URL | null }> = (services: Services, ctx: InboxContext<void>, activity: A) => Promise<void>;
  const applied =
    <A extends { id: URL | null }>(listener: Listener<A>) =>
    async (ctx: InboxContext<void>, activity: A): Promise<void> => {
      if (!services.observe) return listener(services, ctx, activity);
      const type = activity.constructor.name;
      try {
        await listener(services, ctx, activity);
        services.observe({ kind: 'applied', id: activity.id?.href ?? null, type, ok: true });
      } catch (error) {
        services.observe({ kind: 'applied', id: activity.id?.href ?? null, type, ok: false, error: (error as Error).message });
        throw error;
      }
    };

  federation
    .setInboxListeners('/users/{identifier}/inbox', '/inbox')
    // What the shared inbox fetches (keys, actors, objects) is signed by the instance actor;
    // a personal inbox's, by its owner (Fedify's default).
    .setSharedKeyDispatcher(() => ({ identifier: INSTANCE_ACTOR }))
    // A Create whose HTTP signature failed: its object is re-fetched from its origin (./inbox/forwarded.ts).
    .onUnverifiedActivity(unverifiedCreateHandler(services))
    .on(Follow, applied(onFollow))
    .on(Accept, applied(onAccept))
    .on(Reject, applied(onReject))
    .on(Undo, applied(onUndo))
    .on(Block, applied(onBlock))
    .on(Update, applied(onUpdate))
    .on(Delete, applied(onDelete))
    .on(Move, applied(onMove))
    .on(Create, applied(onCreate))
    .on(Announce, applied(onAnnounce))
    .on(Like, applied(onLike))
    // A report from another server (./inbox/flag.ts).
    .on(Flag, applied(onFlag))
    .on(QuoteRequest, applied(onQuoteRequest))
    // An emoji reaction (Pleroma, Akkoma, Hollo): accepted and ignored, as Mastodon ignores it
    // (Misskey's reactions come as a Like with `_misskey_reaction`: a favourite, above).
    .on(EmojiReact, (_ctx, activity) => {
      log.debug({ activity: activity.id?.href, actor: activity.actorId?.href }, 'EmojiReact ignored');
    })
    .onError((_ctx, error) => {
      log.warn({ err: error }, 'inbox activity failed');
    });
  // Deliveries signed with a key held in memory skip Fedify's request handling (./inbox-fast.ts).
  fastPaths.set(
    federation,
    createInboxFastPath({ services, keyMemory, queue: inboxQueue, contextLoader: contextLoaders(), documentLoader: documentLoaders() }),
  );
  return federation;
}
