/**
 * Fedify, wired to Roost: actor dispatcher and key pairs for local accounts, WebFinger (Fedify
 * answers it from the actor dispatcher), followers/following counters, and the inbox listeners.
 * One Federation per Roost instance; no global state, so several instances share a process.
 */
import type { webcrypto } from 'node:crypto';
import { createFederation, importJwk, type Federation, type KvStore, type MessageQueue } from '@fedify/fedify';
import { Accept, Block, Delete, Follow, Move, Undo, Reject, Update, type Recipient } from '@fedify/vocab';
import type { Services } from '../context.ts';
import { AccountKeySchema, FollowSchema } from '../db/entities/index.ts';
import { findLocalAccount } from '../services/accounts.ts';
import { localActor } from './convert/to-as.ts';
import { movedToUri } from '../services/moves.ts';
import { onFollow } from './inbox/follow.ts';
import { onAccept } from './inbox/accept.ts';
import { onReject } from './inbox/reject.ts';
import { onUndo } from './inbox/undo.ts';
import { onBlock } from './inbox/block.ts';
import { onUpdate } from './inbox/update.ts';
import { onDelete } from './inbox/delete.ts';
import { onMove } from './inbox/move.ts';

export type RoostFederation = Federation<void>;

/** The remote accounts that follow `accountId` (accepted), as Fedify recipients. */
async function remoteFollowerRecipients(services: Services, accountId: string): Promise<Recipient[]> {
  const rows = await services.db.sql.query<{ uri: string; inbox_url: string | null; shared_inbox_url: string | null }>(
    `select a.uri, a.inbox_url, a.shared_inbox_url from follows f join accounts a on a.id = f.account_id
      where f.target_account_id = $1 and f.state = 'accepted' and a.domain is not null and a.suspended_at is null`,
    [accountId],
  );
  return rows.map((r) => ({
    id: new URL(r.uri),
    inboxId: r.inbox_url ? new URL(r.inbox_url) : null,
    endpoints: r.shared_inbox_url ? { sharedInbox: new URL(r.shared_inbox_url) } : null,
  }));
}

export interface FederationDeps {
  services: Services;
  kv: KvStore;
  queue: MessageQueue;
}

export function createRoostFederation({ services, kv, queue }: FederationDeps): RoostFederation {
  const { config } = services;
  const log = services.log.child({ module: 'federation' });
  const federation = createFederation<void>({
    kv,
    queue,
    manuallyStartQueue: true,
    origin: config.publicUrl,
    allowPrivateAddress: config.federation.allowPrivateAddresses,
    userAgent: { software: `Roost/${services.version}`, url: new URL(config.publicUrl) },
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

  federation
    .setActorDispatcher('/users/{identifier}', async (ctx, identifier) => {
      const account = await visibleLocalAccount(identifier);
      if (!account || account.suspendedAt || account.username !== identifier) return null;
      return localActor(ctx, account, await movedToUri(services, account));
    })
    .mapHandle(async (_ctx, username) => {
      const account = await visibleLocalAccount(username);
      return account && !account.suspendedAt ? account.username : null;
    })
    .setKeyPairsDispatcher(async (_ctx, identifier) => {
      const account = await findLocalAccount(services.db.em(), identifier);
      if (!account) return [];
      let p = keyCache.get(account.id);
      if (!p) {
        p = loadKeys(account.id);
        keyCache.set(account.id, p);
        p.catch(() => keyCache.delete(account.id));
      }
      return p;
    });

  federation
    .setFollowersDispatcher('/users/{identifier}/followers', async (ctx, identifier) => {
      const account = await visibleLocalAccount(identifier);
      if (!account) return null;
      // Over HTTP (a RequestContext) the items stay private; the count is public. Asked from
      // inside, by sendActivity(…, 'followers', …), it answers the remote accepted followers'
      // inboxes: that is how an activity reaches every follower's server (shared inboxes once).
      if ('request' in ctx) return { items: [] };
      return { items: await remoteFollowerRecipients(services, account.id) };
    })
    .setCounter(async (_ctx, identifier) => {
      const account = await visibleLocalAccount(identifier);
      if (!account) return null;
      return services.db.em().count(FollowSchema, { targetAccountId: account.id, state: 'accepted' });
    });
  federation
    .setFollowingDispatcher('/users/{identifier}/following', async (_ctx, identifier) => {
      const account = await visibleLocalAccount(identifier);
      return account ? { items: [] } : null;
    })
    .setCounter(async (_ctx, identifier) => {
      const account = await visibleLocalAccount(identifier);
      if (!account) return null;
      return services.db.em().count(FollowSchema, { accountId: account.id, state: 'accepted' });
    });
  federation.setOutboxDispatcher('/users/{identifier}/outbox', async (_ctx, identifier) => {
    const account = await visibleLocalAccount(identifier);
    return account ? { items: [] } : null;
  });
  // Mastodon's featured collections, at its paths: pinned posts and featured hashtags. Roost has
  // neither posts nor featured tags yet, so both are real, empty collections; peers that fetch
  // them on every profile refresh (Mastodon does) get an answer instead of a 404.
  const noneYet = async (identifier: string) => {
    const account = await visibleLocalAccount(identifier);
    return account && !account.suspendedAt ? 0 : null;
  };
  federation
    .setFeaturedDispatcher('/users/{identifier}/collections/featured', async (_ctx, identifier) =>
      (await noneYet(identifier)) === null ? null : { items: [] },
    )
    .setCounter((_ctx, identifier) => noneYet(identifier));
  federation
    .setFeaturedTagsDispatcher('/users/{identifier}/collections/tags', async (_ctx, identifier) =>
      (await noneYet(identifier)) === null ? null : { items: [] },
    )
    .setCounter((_ctx, identifier) => noneYet(identifier));

  federation
    .setInboxListeners('/users/{identifier}/inbox', '/inbox')
    .on(Follow, (ctx, activity) => onFollow(services, ctx, activity))
    .on(Accept, (ctx, activity) => onAccept(services, ctx, activity))
    .on(Reject, (ctx, activity) => onReject(services, ctx, activity))
    .on(Undo, (ctx, activity) => onUndo(services, ctx, activity))
    .on(Block, (ctx, activity) => onBlock(services, ctx, activity))
    .on(Update, (ctx, activity) => onUpdate(services, ctx, activity))
    .on(Delete, (ctx, activity) => onDelete(services, ctx, activity))
    .on(Move, (ctx, activity) => onMove(services, ctx, activity))
    .onError((_ctx, error) => {
      log.warn({ err: error }, 'inbox activity failed');
    });
  return federation;
}
