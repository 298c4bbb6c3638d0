/**
 * Follow relationships, each stepped through its follow actor (actors/follow) by the actor store
 * (services/actor-store.ts): the service looks up the facts the machine needs (target locked or
 * remote, requester silenced, requester muted by the target) and the store locks the row, steps,
 * projects the row's columns and writes every emitted event to the outbox, in one transaction.
 * effects/dispatch.ts decides after commit what those facts mean for other servers.
 *
 * REST and inbound ActivityPub call the same functions.
 */
import type { EntityManager } from '@mikro-orm/core';
import { followDefinition, followState, type FollowEvent, type FollowMachine, type FollowOptionsPatch, type FollowSnapshot } from '../../actors/follow/follow.machine.ts';
import type { Services } from '../context.ts';
import { AccountSchema, FollowSchema, type Account, type Follow } from '../db/entities/index.ts';
import { sqlFromEm } from '../db/sql.ts';
import { blockedEitherWaySql, domainBlockedBySql, mutedBySql } from '../db/audience.ts';
import { RoostError, Validation, notFound } from '../lib/errors.ts';
import { isSupportedLanguage } from '../lib/languages.ts';
import { recordEvent, stepActor, type ActorTable, type Origin, type RawRow } from './actor-store.ts';
import { applyFollowStateToStats } from './account-stats.ts';
import { dropFromLists } from './lists.ts';
import type { SeveranceTally } from './severance.ts';

/** The follow states a list membership rests on. */
const LIVE_FOLLOW: readonly string[] = ['requested', 'accepted'];

export type FollowOptions = FollowOptionsPatch;

function followUri(follower: Account, id: string): string {
  return `${follower.uri}#follows/${id}`;
}

/** Facts about the requester as the target sees it (the mission's pending rule), in one statement. */
async function requesterFacts(services: Services, em: EntityManager, requester: Account, target: Account, now: Date) {
  const [row] = await sqlFromEm(em).query<{ muted: boolean }>(
    `select ${mutedBySql('$1', '$2', '$3')} as muted`,
    [target.id, requester.id, now],
  );
  return {
    requesterSilenced: (requester.silencedAt !== null && requester.silencedAt !== undefined) || (await domainSilenced(services, requester)),
    requesterMutedByTarget: !!row?.muted,
  };
}

/**
 * Whether the instance's domain policy silences the account's server: its requests stay pending
 * like a silenced account's, also for an account first seen after the silence was imposed.
 */
async function domainSilenced(services: Services, account: Account): Promise<boolean> {
  return account.domain != null && (await services.domainPolicy.silenced(account.domain));
}

interface FollowKey {
  follower: Account;
  target: Account;
}

/**
 * The follow lifecycle's table: one row per (follower, target), its state columns projected from
 * the snapshot. A local follow's `uri` names its Follow activity; a new request after an ended
 * relationship is a new activity with a new id. Inbound steps carry the remote activity's id.
 */
export const FOLLOW_TABLE: ActorTable<FollowMachine, FollowKey, Follow, { uri?: string }> = {
  kind: 'follow',
  table: 'follows',
  entity: FollowSchema,
  definition: followDefinition,
  locate: ({ follower, target }) => ({ where: 'account_id = $1 and target_account_id = $2', params: [follower.id, target.id] }),
  input: ({ follower, target }) => ({ followerId: follower.id, targetId: target.id }),
  casts: { languages: 'text[]' },
  insert: ({ key, id, now }) => ({ id, account_id: key.follower.id, target_account_id: key.target.id, created_at: now }),
  project(snapshot, { key, row, previous, event, extra, id, services, now }) {
    const ctx = snapshot.context;
    const local = key.follower.domain === null;
    let uri: string | null;
    if (!row) uri = extra?.uri ?? (local ? followUri(key.follower, id) : null);
    else if (event.type === 'follow.request' && previous && !['requested', 'accepted'].includes(followState(previous as FollowSnapshot))) {
      uri = extra?.uri ?? (local ? followUri(key.follower, services.ids.next()) : (row.uri as string | null));
    } else uri = extra?.uri ?? (row.uri as string | null);
    return {
      uri,
      state: followState(snapshot),
      show_reblogs: ctx.reblogs,
      notify: ctx.notify,
      languages: ctx.languages,
      updated_at: now,
    };
  },
  // The counters (account_stats) move when a follow starts or stops being accepted.
  async projectElsewhere(sql, snapshot, { key, previous }) {
    const before = previous ? followState(previous as FollowSnapshot) : null;
    await applyFollowStateToStats(sql, { accountId: key.follower.id, targetAccountId: key.target.id }, before, followState(snapshot));
    // A follow (or request) that ends takes the target out of the follower's lists, as Mastodon's
    // list_accounts go with their follow.
    if (before !== null && LIVE_FOLLOW.includes(before) && !LIVE_FOLLOW.includes(followState(snapshot))) {
      await dropFromLists(sql, key.follower.id, key.target.id);
    }
  },
};

export interface StepFollowResult {
  follow: Follow;
  accepted: boolean;
  /** The domain event types the actor emitted (empty for a no-op or a refusal). */
  emitted: string[];
}

/**
 * Steps the follow actor of (follower, target) with one event through the actor store. `uri` names
 * the Follow activity (inbound ones carry the remote id).
 */
export async function stepFollow(
  services: Services,
  follower: Account,
  target: Account,
  event: FollowEvent,
  opts: { uri?: string; em?: EntityManager; origin?: Origin } = {},
): Promise<StepFollowResult> {
  // An account has no follow actor with itself (the machine refuses to start one): nothing to step.
  if (follower.id === target.id) return { follow: null as never, accepted: false, emitted: [] };
  const r = await stepActor(services, FOLLOW_TABLE, { follower, target }, event, {
    origin: opts.origin ?? 'client',
    em: opts.em,
    extra: { uri: opts.uri },
  });
  return { follow: r.row ?? (null as never), accepted: r.accepted, emitted: r.emitted.map((e) => e.type) };
}

/**
 * Both accounts and the facts a follow request needs, in one statement: whether either blocks
 * the other, and whether the target mutes the follower. A missing or suspended target is a 404.
 */
async function followFacts(em: EntityManager, followerId: string, targetId: string, now: Date) {
  const rows = await sqlFromEm(em).query<RawRow & { blocked_pair: boolean; muted_by_target: boolean }>(
    `select a.*,
            ${blockedEitherWaySql('$1', '$2')} as blocked_pair,
            ${mutedBySql('$2', '$1', '$3')} as muted_by_target
       from accounts a where a.id in ($1, $2)`,
    [followerId, targetId, now],
  );
  const row = (id: string) => rows.find((r) => String(r.id) === id);
  const [f, t] = [row(followerId), row(targetId)];
  if (!f || !t) throw notFound();
  const { blocked_pair: blocked, muted_by_target: muted } = f;
  const strip = ({ blocked_pair: _b, muted_by_target: _m, ...rest }: typeof f) => rest;
  const follower = em.map(AccountSchema, strip(f) as never);
  const target = em.map(AccountSchema, strip(t) as never);
  if (target.suspendedAt) throw notFound();
  return {
    follower,
    target,
    blocked: !!blocked,
    requesterSilenced: follower.silencedAt !== null && follower.silencedAt !== undefined,
    requesterMutedByTarget: !!muted,
  };
}

/** Both accounts in one statement; a missing or suspended target is a 404. */
async function loadPair(em: EntityManager, followerId: string, targetId: string): Promise<[Account, Account]> {
  const rows = await em.find(AccountSchema, { id: { $in: [followerId, targetId] } });
  const follower = rows.find((a) => a.id === followerId);
  const target = rows.find((a) => a.id === targetId);
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
  opts: { bypassLocked?: boolean; origin?: Origin; em?: EntityManager } = {},
): Promise<Follow> {
  if (followerId === targetId) throw new RoostError(403, 'This action is not allowed');
  // Mastodon's Follow validates `languages` (LanguageValidator): each a supported code, else 422.
  if (options.languages && !options.languages.every(isSupportedLanguage)) new Validation().add('languages', 'ERR_INVALID', 'is invalid').throwIfInvalid();
  const run = async (tx: EntityManager) => {
    const { follower, target, blocked, ...facts } = await followFacts(tx, followerId, targetId, services.clock.now());
    if (blocked) throw new RoostError(403, 'This action is not allowed');
    const { follow } = await stepFollow(
      services,
      follower,
      target,
      { type: 'follow.request', targetLocked: target.locked && !opts.bypassLocked, targetRemote: target.domain !== null, ...facts, options },
      { em: tx, origin: opts.origin ?? 'client' },
    );
    return follow;
  };
  return opts.em ? run(opts.em) : services.db.em().transactional(run);
}

/**
 * A remote actor's Follow arrived for a local account: the same rules as a local request, in one
 * transaction with its events. A Follow from a domain the target hides (a user-level domain
 * block) is refused with a Reject, as Mastodon does; one across a block is dropped.
 */
export async function receiveFollow(services: Services, follower: Account, target: Account, uri: string): Promise<Follow | null> {
  // A server the domain policy refuses (suspended, or not allowed) follows nobody here.
  if (follower.suspendedAt || (follower.domain != null && !(await services.domainPolicy.allowed(follower.domain)))) return null;
  return services.db.em().transactional(async (tx) => {
    if (await blockedEitherWay(tx, follower.id, target.id)) return null;
    const domain = follower.domain ?? null;
    if (domain !== null && (await domainBlockedBy(tx, target.id, domain))) {
      await recordEvent(services, sqlFromEm(tx), {
        actorKind: 'account',
        actorId: target.id,
        origin: 'federation',
        event: { type: 'follow.refused', followerId: follower.id, targetId: target.id, activityUri: uri },
      });
      return null;
    }
    const facts = await requesterFacts(services, tx, follower, target, services.clock.now());
    const { follow, emitted } = await stepFollow(
      services,
      follower,
      target,
      { type: 'follow.request', targetLocked: target.locked, targetRemote: false, ...facts },
      { uri, em: tx, origin: 'federation' },
    );
    // A repeated Follow for an established relationship is answered again (Mastodon does): the
    // fact is recorded, effects/ answers it with an Accept.
    if (follow.state === 'accepted' && !emitted.includes('follow.accepted')) {
      await recordEvent(services, sqlFromEm(tx), {
        actorKind: 'follow',
        actorId: follow.id,
        origin: 'federation',
        event: { type: 'follow.request_repeated', followerId: follower.id, targetId: target.id },
      });
    }
    return follow;
  });
}

async function domainBlockedBy(em: EntityManager, accountId: string, domain: string): Promise<boolean> {
  const [row] = await sqlFromEm(em).query<{ blocked: boolean }>(`select ${domainBlockedBySql('$1', '$2')} as blocked`, [accountId, domain.toLowerCase()]);
  return !!row?.blocked;
}

/** The remote target accepted our follow. `by` must be that target. */
export async function remoteFollowAccepted(services: Services, ref: { uri?: string; followerId?: string }, by: Account): Promise<Follow | null> {
  const em = services.db.em();
  const row = ref.uri
    ? await em.findOne(FollowSchema, { uri: ref.uri })
    : await em.findOne(FollowSchema, { accountId: ref.followerId!, targetAccountId: by.id });
  if (!row || row.targetAccountId !== by.id) return null;
  const follower = await em.findOneOrFail(AccountSchema, { id: row.accountId });
  const { follow } = await stepFollow(services, follower, by, { type: 'follow.accept' }, { origin: 'federation' });
  return follow;
}

/** Unfollow (or withdraw a pending request). */
export async function unfollowAccount(
  services: Services,
  followerId: string,
  targetId: string,
  opts: { origin?: Origin; em?: EntityManager } = {},
): Promise<void> {
  const em = opts.em ?? services.db.em();
  const [follower, target] = await loadPair(em, followerId, targetId);
  await stepFollow(services, follower, target, { type: 'follow.undo' }, { origin: opts.origin ?? 'client', em: opts.em });
}

/** The target authorizes or rejects a pending request. */
export async function decideFollowRequest(services: Services, targetId: string, requesterId: string, decision: 'accept' | 'reject'): Promise<void> {
  const [requester, target] = await loadPair(services.db.em(), requesterId, targetId);
  const r = await stepFollow(services, requester, target, { type: decision === 'accept' ? 'follow.accept' : 'follow.reject' });
  // Only a pending request can be decided: anything else names no request.
  if (!r.accepted) throw notFound();
}

/** The relationship ended from the remote side (Reject of ours, Undo of theirs). */
export async function endFollowFromRemote(services: Services, followerId: string, targetId: string, how: 'rejected' | 'undone'): Promise<boolean> {
  const [follower, target] = await loadPair(services.db.em(), followerId, targetId);
  const origin = 'federation';
  if (how === 'undone') return (await stepFollow(services, follower, target, { type: 'follow.undo' }, { origin })).accepted;
  const rejected = await stepFollow(services, follower, target, { type: 'follow.reject' }, { origin });
  if (rejected.accepted) return true;
  return (await stepFollow(services, follower, target, { type: 'follow.remove' }, { origin })).accepted;
}

/**
 * The target unlocked: every pending request goes through `target.unlocked` with its facts;
 * silenced and muted requesters stay pending (the machine decides; nothing leaks).
 */
export async function targetUnlocked(services: Services, target: Account, em: EntityManager, origin: Origin): Promise<void> {
  const pending = await em.find(FollowSchema, { targetAccountId: target.id, state: 'requested' });
  if (pending.length === 0) return;
  const requesters = await em.find(AccountSchema, { id: { $in: pending.map((f) => f.accountId) } });
  const now = services.clock.now();
  for (const requester of requesters) {
    const facts = await requesterFacts(services, em, requester, target, now);
    await stepFollow(services, requester, target, { type: 'target.unlocked', ...facts }, { em, origin });
  }
}

/**
 * The follows an account is part of end through their actors (follower side `follow.undo`,
 * target side `follow.remove`/`follow.reject`), so each end is an event in the outbox; used when
 * the account goes away (Delete of a remote actor), before its row does.
 */
export async function endFollowsOf(services: Services, account: Account, em: EntityManager, origin: Origin, tally?: SeveranceTally): Promise<number> {
  const rows = await em.find(FollowSchema, {
    $or: [{ accountId: account.id }, { targetAccountId: account.id }],
    state: { $in: ['requested', 'accepted'] },
  });
  const others = await em.find(AccountSchema, { id: { $in: rows.map((f) => (f.accountId === account.id ? f.targetAccountId : f.accountId)) } });
  const byId = new Map(others.map((a) => [a.id, a]));
  let ended = 0;
  for (const row of rows) {
    const wasAccepted = row.state === 'accepted';
    if (row.accountId === account.id) {
      const target = byId.get(row.targetAccountId);
      if (target && (await stepFollow(services, account, target, { type: 'follow.undo' }, { em, origin })).accepted) {
        ended++;
        if (wasAccepted) tally?.ended(account, target);
      }
    } else {
      const follower = byId.get(row.accountId);
      if (!follower) continue;
      const event = row.state === 'requested' ? ({ type: 'follow.reject' } as const) : ({ type: 'follow.remove' } as const);
      if ((await stepFollow(services, follower, account, event, { em, origin })).accepted) {
        ended++;
        if (wasAccepted) tally?.ended(follower, account);
      }
    }
  }
  return ended;
}

export async function countPendingFollowRequests(services: Services, accountId: string): Promise<number> {
  return services.db.em().count(FollowSchema, { targetAccountId: accountId, state: 'requested' });
}

/** Whether either account blocks the other (in `em`'s transaction when it has one). */
export async function blockedEitherWay(em: EntityManager, a: string, b: string): Promise<boolean> {
  const [row] = await sqlFromEm(em).query<{ blocked: boolean }>(`select ${blockedEitherWaySql('$1', '$2')} as blocked`, [a, b]);
  return !!row?.blocked;
}
