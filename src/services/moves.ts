/**
 * Account migration (an ActivityPub Move), as Mastodon handles it: the target must list the origin
 * in its `alsoKnownAs`; the origin is marked moved to the target (the account actor's
 * `account.move`); each local follower of the origin follows the target (with the same options; a
 * local target's approval is bypassed, a remote one decides as usual) and then unfollows the
 * origin; local blocks and mutes of the origin carry over to the target.
 *
 * Both directions go through here: a Move received from another server (inbox/move.ts →
 * moveAccount) and a local account moving away (`roost accounts migrate` → migrateLocalAccount,
 * which also federates Update(Person) with `movedTo` and the Move to every follower's server).
 * Aliases (`alsoKnownAs`, the other half of a migration) are set with `roost accounts alias`.
 *
 * Followers migrate one after the other, each in one transaction (follow the target, unfollow the
 * origin: both or neither); one that cannot follow the target (blocked, say) keeps following the
 * origin, and the others go on. Migration reads the origin's current followers, so running it
 * again (a replayed Move, or the job retaken after a crash) moves only those who follow the
 * origin still: every follower moves once. An incoming Move records the redirect and schedules
 * that migration as a durable job (MOVE_FOLLOWERS_JOB) in the same transaction.
 */
import type { EntityManager } from '@mikro-orm/core';
import type { Services } from '../context.ts';
import { AccountSchema, FollowSchema, type Account } from '../db/entities/index.ts';
import { sqlFromEm } from '../db/sql.ts';
import { muteInForceSql } from '../db/audience.ts';
import { schedule } from '../events/timers.ts';
import { RoostError, notFound } from '../lib/errors.ts';
import { findLocalAccount } from './accounts.ts';
import { stepAccount } from './account-actor.ts';
import { recordEvent, type Origin } from './actor-store.ts';
import { followAccount, unfollowAccount } from './follows.ts';
import { blockAccount, muteAccount } from './relationships.ts';

/** The durable job that moves an origin's local followers to its target (handler: migrateFollowersJob). */
export const MOVE_FOLLOWERS_JOB = 'move.followers';

/** Finds (and for remote accounts fetches anew) the account a handle or actor URI names. */
export type AccountResolver = (query: string) => Promise<Account | null>;

export type MoveRefusal = 'same_account' | 'target_suspended' | 'not_an_alias';

export interface MoveResult {
  refused: MoveRefusal | null;
  /** Local followers now following (or asking to follow) the target. */
  migrated: number;
  /** Local followers that could not follow the target and stay with the origin. */
  failed: number;
}

/** Whether `target` accepts being the destination of a move from `origin` (Mastodon's checks). */
export function moveRefusal(origin: Account, target: Account): MoveRefusal | null {
  if (origin.id === target.id) return 'same_account';
  if (target.suspendedAt) return 'target_suspended';
  if (!(target.alsoKnownAs ?? []).includes(origin.uri)) return 'not_an_alias';
  return null;
}

/**
 * Steps `origin`'s account actor with `account.move` (the store writes the redirect and the
 * `account.moved` event). False when the actor refuses (already moved to that target, or
 * suspended): nothing changes then. `inTransaction` runs in the same transaction.
 */
async function recordMove(
  services: Services,
  originId: string,
  targetId: string,
  origin: Origin,
  inTransaction?: (tx: EntityManager) => Promise<void>,
): Promise<boolean> {
  return services.db.em().transactional(async (tx) => {
    const r = await stepAccount(services, originId, { type: 'account.move', targetAccountId: targetId }, { origin, em: tx });
    await inTransaction?.(tx);
    return r.accepted;
  });
}

/** The actor URI of the account `account` moved to, if it did (its actor's `movedTo`). */
export async function movedToUri(services: Services, account: Account): Promise<string | null> {
  if (!account.movedToAccountId) return null;
  const target = await services.db.em().findOne(AccountSchema, { id: account.movedToAccountId });
  return target?.uri ?? null;
}

/**
 * A remote actor's `movedTo`, read on every refresh as Mastodon does: a redirect to an account
 * already known becomes the account actor's `account.move`; none at all is `account.unmove` (the
 * other side cancelled it). An unknown target is left to the Move, which fetches it and checks
 * its aliases. True when the redirect changed.
 */
export async function followActorRedirect(services: Services, accountId: string, successorUri: string | null): Promise<boolean> {
  return services.db.em().transactional(async (tx) => {
    const account = await tx.findOneOrFail(AccountSchema, { id: accountId });
    const target = successorUri ? await tx.findOne(AccountSchema, { uri: successorUri }) : null;
    if (successorUri && !target) return false;
    const targetId = target?.id ?? null;
    if (targetId === account.movedToAccountId || targetId === account.id) return false;
    const event = targetId ? ({ type: 'account.move', targetAccountId: targetId } as const) : ({ type: 'account.unmove' } as const);
    return (await stepAccount(services, accountId, event, { origin: 'federation', em: tx })).accepted;
  });
}

/** `origin` (remote) moved to `target`: `target` must be freshly fetched (its aliases current). */
export async function moveAccount(services: Services, origin: Account, target: Account): Promise<MoveResult> {
  const log = services.log.child({ module: 'moves' });
  const refused = moveRefusal(origin, target);
  if (refused) {
    log.info({ origin: origin.uri, target: target.uri, refused }, 'Move refused');
    return { refused, migrated: 0, failed: 0 };
  }
  // An Update(Person) carrying movedTo may have recorded the redirect already; the followers
  // still move (they are read afresh, so a repeated Move moves nobody twice). They move in a
  // durable job written with the redirect: a crash midway resumes where it stopped.
  await recordMove(services, origin.id, target.id, 'federation', async (tx) => {
    await schedule(sqlFromEm(tx), MOVE_FOLLOWERS_JOB, { originId: origin.id, targetId: target.id } satisfies MoveFollowersJob, {
      dedupeKey: `${MOVE_FOLLOWERS_JOB}:${origin.id}:${target.id}`,
      clock: services.clock,
    });
  });
  log.info({ origin: origin.uri, target: target.uri }, 'Move accepted; followers migrate in a job');
  return { refused: null, migrated: 0, failed: 0 };
}

export interface MoveFollowersJob {
  originId: string;
  targetId: string;
}

export interface MigrationControl {
  /** Stops between two followers (shutdown); the job is retaken and resumes where it stopped. */
  signal?: AbortSignal;
  /** Called after each follower moved (progress, tests). */
  onMoved?: (followerId: string) => void;
}

/** The MOVE_FOLLOWERS_JOB handler: moves the followers the origin still has (idempotent). */
export async function migrateFollowersJob(services: Services, job: MoveFollowersJob, control: MigrationControl = {}): Promise<{ migrated: number; failed: number }> {
  const em = services.db.em();
  const [origin, target] = await Promise.all([
    em.findOne(AccountSchema, { id: job.originId }),
    em.findOne(AccountSchema, { id: job.targetId }),
  ]);
  if (!origin || !target) return { migrated: 0, failed: 0 };
  const result = await migrateFollowers(services, origin, target, 'federation', control);
  services.log.child({ module: 'moves' }).info({ origin: origin.uri, target: target.uri, ...result }, 'followers migrated');
  return result;
}

/** Moves the local followers of `origin` to `target` and carries local blocks and mutes over. */
async function migrateFollowers(
  services: Services,
  origin: Account,
  target: Account,
  from: Origin,
  control: MigrationControl = {},
): Promise<{ migrated: number; failed: number }> {
  const log = services.log.child({ module: 'moves' });
  const em = services.db.em();
  const followers = await services.db.sql.query<{ account_id: string }>(
    `select f.account_id::text from follows f join accounts a on a.id = f.account_id
      where f.target_account_id = $1 and f.state = 'accepted' and a.domain is null order by f.id`,
    [origin.id],
  );
  let migrated = 0;
  let failed = 0;
  for (const { account_id: followerId } of followers) {
    if (followerId === target.id) continue;
    control.signal?.throwIfAborted();
    const old = await em.findOne(FollowSchema, { accountId: followerId, targetAccountId: origin.id }, { refresh: true });
    try {
      // Both steps or neither: a crash between them cannot leave a follower on both accounts.
      await services.db.em().transactional(async (tx) => {
        await followAccount(
          services,
          followerId,
          target.id,
          { reblogs: old?.showReblogs, notify: old?.notify, languages: old?.languages ?? null },
          { bypassLocked: target.domain === null, origin: from, em: tx },
        );
        await unfollowAccount(services, followerId, origin.id, { origin: from, em: tx });
      });
      migrated++;
      control.onMoved?.(followerId);
    } catch (e) {
      failed++;
      log.warn({ err: e, followerId, target: target.uri }, 'follower could not move to the target');
    }
  }

  // Local blocks and mutes of the origin carry over (Mastodon's carry_blocks_over!/carry_mutes_over!).
  const now = services.clock.now();
  const blockers = await services.db.sql.query<{ account_id: string }>(
    `select b.account_id::text from blocks b join accounts a on a.id = b.account_id where b.target_account_id = $1 and a.domain is null`,
    [origin.id],
  );
  for (const { account_id } of blockers) {
    if (account_id !== target.id) await blockAccount(services, account_id, target.id, { origin: from }).catch((e) => log.warn({ err: e }, 'block not carried over'));
  }
  const muters = await services.db.sql.query<{ account_id: string; hide_notifications: boolean; expires_at: Date | null }>(
    `select m.account_id::text, m.hide_notifications, m.expires_at from mutes m join accounts a on a.id = m.account_id
      where m.target_account_id = $1 and a.domain is null and ${muteInForceSql('m', '$2')}`,
    [origin.id, now],
  );
  for (const m of muters) {
    if (m.account_id === target.id) continue;
    const duration = m.expires_at ? Math.max(1, Math.ceil((new Date(m.expires_at).getTime() - now.getTime()) / 1000)) : 0;
    await muteAccount(services, m.account_id, target.id, { notifications: m.hide_notifications, duration }).catch((e) =>
      log.warn({ err: e }, 'mute not carried over'),
    );
  }
  return { migrated, failed };
}

const REFUSALS: Record<MoveRefusal, string> = {
  same_account: 'An account cannot move to itself',
  target_suspended: 'The target account is suspended',
  not_an_alias: 'The target account does not name this account among its aliases (alsoKnownAs): add the alias on the target first',
};

export interface MigrateOptions {
  username: string;
  /** A handle (`user`, `user@domain`) or actor URI; with `replay`, defaults to the current redirect. */
  target?: string;
  /** Send the Move of the current redirect again (for servers that missed it). */
  replay?: boolean;
  /** Move even though the account already redirects elsewhere. */
  force?: boolean;
}

export interface MigrateResult {
  origin: Account;
  target: Account;
  replayed: boolean;
  migrated: number;
  failed: number;
}

/**
 * A local account moves to another account, here or elsewhere (Mastodon's MoveService, reached
 * through `roost accounts migrate` as through tootctl): the target, fetched afresh, must name the
 * origin in its aliases; the account actor records the redirect; local followers move at once;
 * Update(Person) with `movedTo`, then Move, go to every server with a follower (effects).
 */
export async function migrateLocalAccount(services: Services, resolve: AccountResolver, opts: MigrateOptions): Promise<MigrateResult> {
  const origin = await findLocalAccount(services.db.em(), opts.username);
  if (!origin) throw new RoostError(404, `No local account ${opts.username}`);
  if (origin.suspendedAt) throw new RoostError(422, `${origin.username} is suspended and cannot move`);
  if (opts.replay) {
    if (!origin.movedToAccountId) throw new RoostError(422, `${origin.username} has not moved: nothing to replay`);
    const target = await services.db.em().findOneOrFail(AccountSchema, { id: origin.movedToAccountId });
    if (opts.target) {
      const named = await resolve(opts.target);
      if (named?.id !== target.id) throw new RoostError(422, `${origin.username} moved to ${target.uri}, not to ${opts.target}`);
    }
    await recordEvent(services, services.db.sql, {
      actorKind: 'account',
      actorId: origin.id,
      origin: 'operator',
      event: { type: 'account.move_replayed', accountId: origin.id, targetAccountId: target.id },
    });
    return { origin, target, replayed: true, migrated: 0, failed: 0 };
  }
  if (!opts.target) throw new RoostError(422, 'A target account is required');
  const target = await resolve(opts.target);
  if (!target) throw notFound(`No account found for ${opts.target}`);
  if (origin.movedToAccountId === target.id) {
    throw new RoostError(422, `${origin.username} already moved to ${target.uri}; replay the Move to send it again`);
  }
  if (origin.movedToAccountId && !opts.force) {
    throw new RoostError(422, `${origin.username} already redirects to another account; force the migration to move again`);
  }
  const refused = moveRefusal(origin, target);
  if (refused) throw new RoostError(422, REFUSALS[refused]);
  if (!(await recordMove(services, origin.id, target.id, 'operator'))) throw new RoostError(422, `${origin.username} cannot move now`);
  const result = await migrateFollowers(services, origin, target, 'operator');
  services.log.child({ module: 'moves' }).info({ origin: origin.uri, target: target.uri, ...result }, 'local account moved');
  return { origin, target, replayed: false, ...result };
}

/**
 * Adds or removes aliases of a local account (`alsoKnownAs`: the accounts it also is, from which
 * a Move to it is accepted). Each handle is resolved to its actor URI; the change federates as
 * Update(Person).
 */
export async function setAccountAliases(
  services: Services,
  resolve: AccountResolver,
  username: string,
  change: { add?: string[]; remove?: string[] },
): Promise<string[]> {
  const em = services.db.em();
  const account = await findLocalAccount(em, username);
  if (!account) throw new RoostError(404, `No local account ${username}`);
  const aliases = new Set(account.alsoKnownAs ?? []);
  for (const query of change.add ?? []) {
    const other = await resolve(query);
    if (!other) throw notFound(`No account found for ${query}`);
    if (other.id === account.id) throw new RoostError(422, 'An account cannot be its own alias');
    aliases.add(other.uri);
  }
  for (const query of change.remove ?? []) {
    const uri = /^https?:\/\//.test(query) ? query : (await resolve(query))?.uri;
    if (!uri || !aliases.delete(uri)) throw new RoostError(422, `${query} is not an alias of ${account.username}`);
  }
  const next = [...aliases];
  await em.transactional(async (tx) => {
    await tx.nativeUpdate(AccountSchema, { id: account.id }, { alsoKnownAs: next, updatedAt: services.clock.now() });
    await recordEvent(services, sqlFromEm(tx), {
      actorKind: 'account',
      actorId: account.id,
      origin: 'operator',
      event: { type: 'account.updated', accountId: account.id },
      dedupeKey: `account.updated:${account.id}`,
    });
  });
  return next;
}
