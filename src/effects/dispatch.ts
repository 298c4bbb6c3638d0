/**
 * Runs domain events after commit: federate them (Fedify signs and delivers, with its own retry
 * queue). A federation failure never fails the local operation; it is retried by the job queue.
 * Each handler re-reads the follow and acts only if it is still in the state the event was about
 * (a withdrawn request sends no Follow).
 */
import { Accept, Block, Follow, Move, PUBLIC_COLLECTION, Reject, Undo, Update } from '@fedify/vocab';
import type { EntityManager } from '@mikro-orm/core';
import type { Services } from '../context.ts';
import { AccountSchema, FollowSchema, type Account, type Follow as FollowRow } from '../db/entities/index.ts';
import type { RoostFederation } from '../federation/index.ts';
import { localActor } from '../federation/convert/to-as.ts';
import { movedToUri } from '../services/moves.ts';
import { actorProfileFacts } from '../services/account-views.ts';
import type { DomainEvent } from './events.ts';
import { expireMute } from '../services/relationships.ts';

function recipientOf(account: Account) {
  return {
    id: new URL(account.uri),
    inboxId: account.inboxUrl ? new URL(account.inboxUrl) : null,
    endpoints: account.sharedInboxUrl ? { sharedInbox: new URL(account.sharedInboxUrl) } : null,
  };
}

/**
 * Fedify's ordering key for activities about the relationship of two accounts (Follow, Accept,
 * Reject, Undo(Follow), Block, Undo(Block)), whichever of the two sends: activities with one key
 * reach each server one at a time, in the order they were sent, retries included.
 */
function relationshipKey(a: Account, b: Account): string {
  return `relationship ${[a.uri, b.uri].sort().join(' ')}`;
}

/** The follow and both accounts, if the follow is still in one of `states`. */
async function loadFollow(em: EntityManager, followId: string, states: string[]) {
  const follow = await em.findOne(FollowSchema, { id: followId });
  if (!follow || !states.includes(follow.state)) return null;
  const [follower, target] = await Promise.all([
    em.findOneOrFail(AccountSchema, { id: follow.accountId }),
    em.findOneOrFail(AccountSchema, { id: follow.targetAccountId }),
  ]);
  return { follow, follower, target };
}

/** The Follow activity a follow row stands for (embedded in Accept, Reject and Undo). */
function asFollow(follow: FollowRow, follower: Account, target: Account): Follow {
  return new Follow({ id: follow.uri ? new URL(follow.uri) : null, actor: new URL(follower.uri), object: new URL(target.uri) });
}

export function createEffectDispatcher(services: Services, federation: RoostFederation) {
  const log = services.log.child({ module: 'effects' });
  return async function dispatch(event: DomainEvent): Promise<void> {
    const em = services.db.em();
    const ctx = federation.createContext(new URL(services.config.publicUrl), undefined);
    const sendActorUpdate = async (account: Account) => {
      const actor = await localActor(ctx, account, await movedToUri(services, account), await actorProfileFacts(services, account));
      await ctx.sendActivity(
        { identifier: account.username },
        'followers',
        new Update({
          id: new URL(`${account.uri}#updates/${account.updatedAt.getTime()}`),
          actor: ctx.getActorUri(account.username),
          to: PUBLIC_COLLECTION,
          object: actor,
        }),
        // Updates and the Move of one account arrive in order.
        { preferSharedInbox: true, orderingKey: account.uri },
      );
    };
    switch (event.type) {
      case 'follow.requested': {
        const found = await loadFollow(em, event.followId, ['requested']);
        if (!found || found.target.domain === null) return;
        const { follow, follower, target } = found;
        await ctx.sendActivity({ identifier: follower.username }, recipientOf(target), asFollow(follow, follower, target), {
          orderingKey: relationshipKey(follower, target),
        });
        log.info({ followId: follow.id, target: target.uri }, 'Follow sent');
        return;
      }
      case 'follow.accepted': {
        const found = await loadFollow(em, event.followId, ['accepted']);
        if (!found || found.follower.domain === null) return; // local followers need no Accept
        const { follow, follower, target } = found;
        await ctx.sendActivity(
          { identifier: target.username },
          recipientOf(follower),
          new Accept({
            id: new URL(`${target.uri}#accepts/follows/${follow.id}/${follow.machineVersion}`),
            actor: ctx.getActorUri(target.username),
            object: asFollow(follow, follower, target),
          }),
          { orderingKey: relationshipKey(follower, target) },
        );
        log.info({ followId: follow.id, follower: follower.uri }, 'Accept sent');
        return;
      }
      case 'follow.rejected': {
        // A local target rejected a remote request, or removed a remote follower.
        const found = await loadFollow(em, event.followId, ['rejected', 'removed']);
        if (!found || found.follower.domain === null) return;
        const { follow, follower, target } = found;
        await ctx.sendActivity(
          { identifier: target.username },
          recipientOf(follower),
          new Reject({
            id: new URL(`${target.uri}#rejects/follows/${follow.id}/${follow.machineVersion}`),
            actor: ctx.getActorUri(target.username),
            object: asFollow(follow, follower, target),
          }),
          { orderingKey: relationshipKey(follower, target) },
        );
        return;
      }
      case 'follow.undone': {
        // A local follower unfollowed (or withdrew a request to) a remote account.
        const found = await loadFollow(em, event.followId, ['undone', 'cancelled']);
        if (!found || found.target.domain === null) return;
        const { follow, follower, target } = found;
        await ctx.sendActivity(
          { identifier: follower.username },
          recipientOf(target),
          new Undo({
            id: new URL(`${follower.uri}#follows/${follow.id}/undo/${follow.machineVersion}`),
            actor: ctx.getActorUri(follower.username),
            object: asFollow(follow, follower, target),
          }),
          { orderingKey: relationshipKey(follower, target) },
        );
        return;
      }
      case 'mute.expired': {
        // A timed mute's due time came: the unmute goes through the service (a no-op if lifted or renewed).
        if (await expireMute(services, event.accountId, event.targetId)) log.info({ accountId: event.accountId, targetId: event.targetId }, 'mute expired');
        return;
      }
      case 'account.updated': {
        // The profile changed: Update(Person) to every server with a follower. 'followers' makes
        // Fedify ask the followers dispatcher (federation/index.ts), which answers the remote
        // accepted followers when asked from inside; shared inboxes get one copy.
        const account = await em.findOne(AccountSchema, { id: event.accountId, domain: null });
        if (!account || account.suspendedAt) return;
        await sendActorUpdate(account);
        log.info({ accountId: account.id }, 'Update(Person) sent');
        return;
      }
      case 'account.moved': {
        // A local account moved (Mastodon's MoveService): its actor now carries movedTo, then the
        // Move itself reaches every server with a follower, whose followers migrate there.
        const account = await em.findOne(AccountSchema, { id: event.accountId, domain: null });
        if (!account || account.suspendedAt || account.movedToAccountId !== event.targetAccountId) return;
        const target = await em.findOneOrFail(AccountSchema, { id: event.targetAccountId });
        await sendActorUpdate(account);
        await ctx.sendActivity(
          { identifier: account.username },
          'followers',
          new Move({
            // A fresh id each time: a replayed Move must not be taken for one already processed.
            id: new URL(`${account.uri}#moves/${services.ids.next()}`),
            actor: ctx.getActorUri(account.username),
            object: ctx.getActorUri(account.username),
            target: new URL(target.uri),
            to: PUBLIC_COLLECTION,
          }),
          { preferSharedInbox: true, orderingKey: account.uri },
        );
        log.info({ accountId: account.id, target: target.uri }, 'Move sent');
        return;
      }
      case 'block.created': {
        const [row] = await services.db.sql.query<{ account_id: string; target_account_id: string; uri: string | null }>(
          `select account_id::text, target_account_id::text, uri from blocks where id = $1`,
          [event.blockId],
        );
        if (!row?.uri) return; // lifted meanwhile
        const [account, target] = await Promise.all([
          em.findOneOrFail(AccountSchema, { id: row.account_id }),
          em.findOneOrFail(AccountSchema, { id: row.target_account_id }),
        ]);
        await ctx.sendActivity(
          { identifier: account.username },
          recipientOf(target),
          new Block({ id: new URL(row.uri), actor: ctx.getActorUri(account.username), object: new URL(target.uri) }),
          { orderingKey: relationshipKey(account, target) },
        );
        return;
      }
      case 'block.removed': {
        const [account, target] = await Promise.all([
          em.findOneOrFail(AccountSchema, { id: event.accountId }),
          em.findOneOrFail(AccountSchema, { id: event.targetId }),
        ]);
        await ctx.sendActivity(
          { identifier: account.username },
          recipientOf(target),
          new Undo({
            id: new URL(`${event.blockUri}/undo`),
            actor: ctx.getActorUri(account.username),
            object: new Block({ id: new URL(event.blockUri), actor: new URL(account.uri), object: new URL(target.uri) }),
          }),
          { orderingKey: relationshipKey(account, target) },
        );
        return;
      }
    }
  };
}
