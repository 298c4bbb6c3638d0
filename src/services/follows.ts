/**
 * Follow relationships, each stepped through its follow actor (actors/follow). The service looks
 * up the facts the machine needs (target locked or remote, requester silenced, requester muted by
 * the target), steps the persisted snapshot in one transaction with the row and the emitted
 * events (written as jobs: the outbox), and effects/dispatch.ts federates them after commit.
 *
 * REST and inbound ActivityPub call the same functions.
 */
import type { EntityManager } from '@mikro-orm/core';
import { followMachine, followState, type FollowEvent, type FollowSnapshot, type FollowOptionsPatch } from '../../actors/follow/follow.machine.ts';
import { step } from '../../actors/runtime/step.ts';
import type { Services } from '../context.ts';
import { AccountSchema, FollowSchema, type Account, type Follow } from '../db/entities/index.ts';
import { sqlFromEm } from '../db/sql.ts';
import { RoostError, notFound } from '../lib/errors.ts';
import { enqueueEffect, type DomainEvent } from '../effects/events.ts';

export type FollowOptions = FollowOptionsPatch;

function followUri(follower: Account, id: string): string {
  return `${follower.uri}#follows/${id}`;
}

async function isMutedBy(em: EntityManager, targetId: string, requesterId: string, now: Date): Promise<boolean> {
  const rows = await sqlFromEm(em).query(
    `select 1 from mutes where account_id = $1 and target_account_id = $2 and (expires_at is null or expires_at > $3)`,
    [targetId, requesterId, now],
  );
  return rows.length > 0;
}

/** Facts about the requester as the target sees it (the mission's pending rule). */
async function requesterFacts(em: EntityManager, requester: Account, target: Account, now: Date) {
  return {
    requesterSilenced: requester.silencedAt !== null && requester.silencedAt !== undefined,
    requesterMutedByTarget: await isMutedBy(em, target.id, requester.id, now),
  };
}

/** Which domain event a machine emission becomes, if it has an effect beyond the rows. */
function effectFor(type: string, followId: string, follower: Account, target: Account): DomainEvent | null {
  switch (type) {
    case 'follow.requested':
      return target.domain !== null ? { type: 'follow.requested', followId } : null;
    case 'follow.accepted':
      return follower.domain !== null ? { type: 'follow.accepted', followId } : null;
    case 'follow.rejected':
    case 'follow.removed':
      return follower.domain !== null ? { type: 'follow.rejected', followId } : null;
    case 'follow.undone':
    case 'follow.cancelled':
      return target.domain !== null ? { type: 'follow.undone', followId } : null;
    default:
      return null;
  }
}

export interface StepFollowResult {
  follow: Follow;
  accepted: boolean;
  /** The domain event types the actor emitted (empty for a no-op or a refusal). */
  emitted: string[];
}

/**
 * Steps the follow actor of (follower, target) with one event, in one transaction with its row and
 * its effects. `uri` names the Follow activity (inbound ones carry the remote id).
 */
export async function stepFollow(
  services: Services,
  follower: Account,
  target: Account,
  event: FollowEvent,
  opts: { uri?: string; em?: EntityManager } = {},
): Promise<StepFollowResult> {
  // An account has no follow actor with itself (the machine refuses to start one): nothing to step.
  if (follower.id === target.id) return { follow: null as never, accepted: false, emitted: [] };
  const run = async (tx: EntityManager): Promise<StepFollowResult> => {
    const sql = sqlFromEm(tx);
    const now = services.clock.now();
    // Serialise concurrent steps of one pair: the row lock, then optimistic versioning below.
    await sql.query(`select id from follows where account_id = $1 and target_account_id = $2 for update`, [follower.id, target.id]);
    let row = await tx.findOne(FollowSchema, { accountId: follower.id, targetAccountId: target.id }, { refresh: true });
    const persisted = row?.machine ? (row.machine as unknown as FollowSnapshot) : undefined;
    const r = step(followMachine, persisted, event, { followerId: follower.id, targetId: target.id });
    if (!r.accepted) return { follow: row ?? (null as never), accepted: false, emitted: [] };
    const state = followState(r.snapshot);
    const ctx = r.snapshot.context;
    if (!row) {
      const id = services.ids.next();
      row = tx.create(FollowSchema, {
        id,
        accountId: follower.id,
        targetAccountId: target.id,
        uri: opts.uri ?? (follower.domain === null ? followUri(follower, id) : null),
        state,
        showReblogs: ctx.reblogs,
        notify: ctx.notify,
        languages: ctx.languages,
        machine: r.snapshot as unknown as Record<string, unknown>,
        machineVersion: r.version,
        createdAt: now,
        updatedAt: now,
      });
    } else {
      if (row.machineVersion !== r.previousVersion) throw new RoostError(409, 'The relationship changed meanwhile; try again');
      // A new request after an ended relationship is a new Follow activity with a new id.
      if (event.type === 'follow.request' && (persisted && !['requested', 'accepted'].includes(followState(persisted)))) {
        row.uri = opts.uri ?? (follower.domain === null ? followUri(follower, services.ids.next()) : row.uri);
      } else if (opts.uri) row.uri = opts.uri;
      row.state = state;
      row.showReblogs = ctx.reblogs;
      row.notify = ctx.notify;
      row.languages = ctx.languages;
      row.machine = r.snapshot as unknown as Record<string, unknown>;
      row.machineVersion = r.version;
      row.updatedAt = now;
    }
    await tx.flush();
    for (const e of r.emitted) {
      const effect = effectFor(e.type, row.id, follower, target);
      if (effect) await enqueueEffect(sql, effect, services.clock);
    }
    return { follow: row, accepted: true, emitted: r.emitted.map((e) => e.type) };
  };
  if (opts.em) return run(opts.em);
  try {
    return await services.db.em().transactional(run);
  } catch (e) {
    // The pair's first step has no row to lock: two concurrent first follows (PostgreSQL) may
    // both insert, and the loser meets the unique (account_id, target_account_id) index. Its
    // transaction rolled back; step again once: the row exists now, so this time the lock holds
    // and the event meets the settled state (a repeated request is then a no-op).
    if ((e as { code?: unknown }).code !== '23505' || !String((e as Error).message).includes('follows_account_id_target_account_id')) throw e;
    return services.db.em().transactional(run);
  }
}

async function loadPair(services: Services, followerId: string, targetId: string): Promise<[Account, Account]> {
  const em = services.db.em();
  const [follower, target] = await Promise.all([
    em.findOne(AccountSchema, { id: followerId }),
    em.findOne(AccountSchema, { id: targetId }),
  ]);
  if (!follower || !target || target.suspendedAt) throw notFound();
  return [follower, target];
}

/** A local account follows another account (local or remote), or updates the follow's options. */
export async function followAccount(
  services: Services,
  followerId: string,
  targetId: string,
  options: FollowOptions = {},
  /** bypassLocked: a follower migrating to a local account (Move) skips its approval, as Mastodon. */
  opts: { bypassLocked?: boolean } = {},
): Promise<Follow> {
  if (followerId === targetId) throw new RoostError(403, 'This action is not allowed');
  const [follower, target] = await loadPair(services, followerId, targetId);
  if (await blockedEitherWay(services, followerId, targetId)) throw new RoostError(403, 'This action is not allowed');
  const facts = await requesterFacts(services.db.em(), follower, target, services.clock.now());
  const { follow } = await stepFollow(services, follower, target, {
    type: 'follow.request',
    targetLocked: target.locked && !opts.bypassLocked,
    targetRemote: target.domain !== null,
    ...facts,
    options,
  });
  return follow;
}

/** A remote actor's Follow arrived for a local account: the same rules as a local request. */
export async function receiveFollow(services: Services, follower: Account, target: Account, uri: string): Promise<Follow | null> {
  if (await blockedEitherWay(services, follower.id, target.id)) return null;
  const facts = await requesterFacts(services.db.em(), follower, target, services.clock.now());
  const { follow, emitted } = await stepFollow(
    services,
    follower,
    target,
    { type: 'follow.request', targetLocked: target.locked, targetRemote: false, ...facts },
    { uri },
  );
  // A repeated Follow for an established relationship is answered again (Mastodon does); a new
  // acceptance already queued its Accept.
  if (follow.state === 'accepted' && follower.domain !== null && !emitted.includes('follow.accepted')) {
    await enqueueEffect(services.db.sql, { type: 'follow.accepted', followId: follow.id }, services.clock);
  }
  return follow;
}

/** The remote target accepted our follow. `by` must be that target. */
export async function remoteFollowAccepted(services: Services, ref: { uri?: string; followerId?: string }, by: Account): Promise<Follow | null> {
  const em = services.db.em();
  const row = ref.uri
    ? await em.findOne(FollowSchema, { uri: ref.uri })
    : await em.findOne(FollowSchema, { accountId: ref.followerId!, targetAccountId: by.id });
  if (!row || row.targetAccountId !== by.id) return null;
  const follower = await em.findOneOrFail(AccountSchema, { id: row.accountId });
  const { follow } = await stepFollow(services, follower, by, { type: 'follow.accept' });
  return follow;
}

/** Unfollow (or withdraw a pending request). */
export async function unfollowAccount(services: Services, followerId: string, targetId: string): Promise<void> {
  const [follower, target] = await loadPair(services, followerId, targetId);
  await stepFollow(services, follower, target, { type: 'follow.undo' });
}

/** The target authorizes or rejects a pending request. */
export async function decideFollowRequest(services: Services, targetId: string, requesterId: string, decision: 'accept' | 'reject'): Promise<void> {
  const [requester, target] = await loadPair(services, requesterId, targetId);
  const row = await services.db.em().findOne(FollowSchema, { accountId: requesterId, targetAccountId: targetId, state: 'requested' });
  if (!row) throw notFound();
  await stepFollow(services, requester, target, { type: decision === 'accept' ? 'follow.accept' : 'follow.reject' });
}

/** The relationship ended from the remote side (Reject of ours, Undo of theirs). */
export async function endFollowFromRemote(services: Services, followerId: string, targetId: string, how: 'rejected' | 'undone'): Promise<boolean> {
  const [follower, target] = await loadPair(services, followerId, targetId);
  if (how === 'undone') return (await stepFollow(services, follower, target, { type: 'follow.undo' })).accepted;
  const rejected = await stepFollow(services, follower, target, { type: 'follow.reject' });
  if (rejected.accepted) return true;
  return (await stepFollow(services, follower, target, { type: 'follow.remove' })).accepted;
}

/**
 * The target unlocked: every pending request goes through `target.unlocked` with its facts;
 * silenced and muted requesters stay pending (the machine decides; nothing leaks).
 */
export async function targetUnlocked(services: Services, targetId: string, em: EntityManager): Promise<void> {
  const target = await em.findOneOrFail(AccountSchema, { id: targetId });
  const pending = await em.find(FollowSchema, { targetAccountId: targetId, state: 'requested' });
  const now = services.clock.now();
  for (const row of pending) {
    const requester = await em.findOneOrFail(AccountSchema, { id: row.accountId });
    const facts = await requesterFacts(em, requester, target, now);
    await stepFollow(services, requester, target, { type: 'target.unlocked', ...facts }, { em });
  }
}

export async function countPendingFollowRequests(services: Services, accountId: string): Promise<number> {
  return services.db.em().count(FollowSchema, { targetAccountId: accountId, state: 'requested' });
}

export async function blockedEitherWay(services: Services, a: string, b: string): Promise<boolean> {
  const rows = await services.db.sql.query(
    `select 1 from blocks where (account_id = $1 and target_account_id = $2) or (account_id = $2 and target_account_id = $1) limit 1`,
    [a, b],
  );
  return rows.length > 0;
}
