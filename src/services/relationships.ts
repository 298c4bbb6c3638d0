/** Mutes, silencing, locking, and the Relationship facts of a page of accounts. */
import type { Services } from '../context.ts';
import { AccountSchema, FollowSchema, type Account } from '../db/entities/index.ts';
import { RoostError, notFound } from '../lib/errors.ts';
import type { EntityManager } from '@mikro-orm/core';
import { stepAccount } from './account-actor.ts';
import type { Origin } from './actor-store.ts';
import { stepFollow, targetUnlocked } from './follows.ts';
import { sqlFromEm } from '../db/sql.ts';
import { scheduleTimer } from '../events/timers.ts';
import { recordEvent } from './actor-store.ts';
import { recordSeverance, SeveranceTally } from './severance.ts';

/** Mastodon's limit for a mute duration: a bit over a year (0 = indefinite). */
export const MAX_MUTE_DURATION_SECONDS = 60 * 60 * 24 * 366;

export async function muteAccount(
  services: Services,
  accountId: string,
  targetId: string,
  opts: { notifications?: boolean; duration?: number },
): Promise<void> {
  if (accountId === targetId) throw new RoostError(403, 'This action is not allowed');
  const duration = opts.duration ?? 0;
  if (!Number.isInteger(duration) || duration < 0 || duration > MAX_MUTE_DURATION_SECONDS) {
    throw new RoostError(422, `Validation failed: Duration must be a whole number of seconds from 0 to ${MAX_MUTE_DURATION_SECONDS}`, {
      details: { duration: [{ error: 'ERR_INVALID', description: `must be a whole number of seconds from 0 to ${MAX_MUTE_DURATION_SECONDS}` }] },
    });
  }
  const target = await services.db.em().findOne(AccountSchema, { id: targetId });
  if (!target) throw notFound();
  const now = services.clock.now();
  const expiresAt = duration > 0 ? new Date(now.getTime() + duration * 1000) : null;
  await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    await sql.query(
      `insert into mutes (id, account_id, target_account_id, hide_notifications, expires_at, created_at)
       values ($1, $2, $3, $4, $5, $6)
       on conflict (account_id, target_account_id) do update set hide_notifications = excluded.hide_notifications, expires_at = excluded.expires_at`,
      [services.ids.next(), accountId, targetId, opts.notifications ?? true, expiresAt, now],
    );
    // A timed mute ends by itself: a timer due at its expiry comes back to expireMute (reads
    // already treat an expired mute as gone; the timer removes the row). One waiting timer per
    // pair: muting again leaves it, and a timer that finds the mute extended schedules the next.
    if (expiresAt) {
      await scheduleTimer(
        sql,
        { type: 'mute.expire', accountId, targetId },
        { runAt: expiresAt, dedupeKey: `mute.expire:${accountId}:${targetId}`, clock: services.clock },
      );
    }
  });
}

export async function unmuteAccount(services: Services, accountId: string, targetId: string): Promise<void> {
  await services.db.sql.query(`delete from mutes where account_id = $1 and target_account_id = $2`, [accountId, targetId]);
}

/**
 * A timed mute's timer: unmutes only if the mute is still there and due. A mute extended since
 * (muted again with a later expiry while this timer waited) gets a timer at its new expiry.
 */
export async function expireMute(services: Services, accountId: string, targetId: string): Promise<boolean> {
  return services.db.sql.transaction(async (sql) => {
    const removed = await sql.query(
      `delete from mutes where account_id = $1 and target_account_id = $2 and expires_at is not null and expires_at <= $3 returning id`,
      [accountId, targetId, services.clock.now()],
    );
    if (removed.length > 0) return true;
    const [later] = await sql.query<{ expires_at: Date | string }>(
      `select expires_at from mutes where account_id = $1 and target_account_id = $2 and expires_at is not null`,
      [accountId, targetId],
    );
    if (later) {
      await scheduleTimer(
        sql,
        { type: 'mute.expire', accountId, targetId },
        { runAt: new Date(later.expires_at), dedupeKey: `mute.expire:${accountId}:${targetId}`, clock: services.clock },
      );
    }
    return false;
  });
}

/**
 * Locks or unlocks an account: a step of its account actor. Unlocking accepts pending follow
 * requests in the same transaction, except those of silenced or muted requesters (the follow
 * actors decide). Already in that state: nothing happens (update_credentials repeats `locked`).
 */
export async function setAccountLocked(
  services: Services,
  accountId: string,
  locked: boolean,
  opts: { em?: EntityManager; origin?: Origin } = {},
): Promise<void> {
  const origin = opts.origin ?? 'client';
  const run = async (tx: EntityManager) => {
    const r = await stepAccount(services, accountId, { type: locked ? 'account.lock' : 'account.unlock' }, { origin, em: tx });
    if (!r.accepted) {
      if (r.row && r.row.locked === locked) return;
      throw new RoostError(422, r.rejection.message);
    }
    if (r.emitted.some((e) => e.type === 'account.unlocked')) await targetUnlocked(services, r.row, tx, origin);
  };
  await (opts.em ? run(opts.em) : services.db.em().transactional(run));
}

/** A moderator limits (silences) an account, or lifts it. */
export async function setAccountSilenced(services: Services, accountId: string, silenced: boolean, origin: Origin = 'operator'): Promise<void> {
  const r = await stepAccount(services, accountId, { type: silenced ? 'account.silence' : 'account.unsilence' }, { origin });
  if (!r.accepted && !(r.row && !!r.row.silencedAt === silenced)) throw new RoostError(422, r.rejection.message);
}

/** The Relationship facts of a page: a read module (reads/relationships.ts), re-exported for callers here. */
export { relationshipFacts } from './reads/relationships.ts';

/**
 * `accountId` blocks `targetId`: the block row, and both follow actors (either direction) get
 * `follow.block`, so following ends both ways; a remote target is told with a Block activity.
 * A pair with no follow actor yet has nothing to end (the idle actor refuses the event).
 */
export async function blockAccount(
  services: Services,
  accountId: string,
  targetId: string,
  opts: { uri?: string; origin?: Origin } = {},
): Promise<void> {
  const origin = opts.origin ?? (opts.uri ? 'federation' : 'client');
  if (accountId === targetId) throw new RoostError(403, 'This action is not allowed');
  const em = services.db.em();
  const [account, target] = await Promise.all([em.findOne(AccountSchema, { id: accountId }), em.findOne(AccountSchema, { id: targetId })]);
  if (!account || !target) throw notFound();
  await em.transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const id = services.ids.next();
    const inserted = await sql.query<{ id: string }>(
      `insert into blocks (id, account_id, target_account_id, uri, created_at) values ($1, $2, $3, $4, $5)
       on conflict (account_id, target_account_id) do nothing returning id::text`,
      [id, accountId, targetId, opts.uri ?? (account.domain === null ? `${account.uri}#blocks/${id}` : null), services.clock.now()],
    );
    if (inserted.length === 0) return; // already blocked
    await stepFollow(services, account, target, { type: 'follow.block', by: 'follower' }, { em: tx, origin });
    await stepFollow(services, target, account, { type: 'follow.block', by: 'target' }, { em: tx, origin });
    await recordEvent(services, sql, {
      actorKind: 'account',
      actorId: accountId,
      origin,
      event: { type: 'block.created', blockId: id, accountId, targetId },
    });
  });
}

export async function unblockAccount(services: Services, accountId: string, targetId: string, origin: Origin = 'client'): Promise<void> {
  const em = services.db.em();
  const [account, target] = await Promise.all([em.findOne(AccountSchema, { id: accountId }), em.findOne(AccountSchema, { id: targetId })]);
  if (!account || !target) throw notFound();
  await em.transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const removed = await sql.query<{ id: string; uri: string | null }>(
      `delete from blocks where account_id = $1 and target_account_id = $2 returning id::text, uri`,
      [accountId, targetId],
    );
    if (removed.length) {
      await recordEvent(services, sql, {
        actorKind: 'account',
        actorId: accountId,
        origin,
        event: { type: 'block.removed', accountId, targetId, blockUri: removed[0]!.uri, blockId: removed[0]!.id },
      });
    }
  });
}

/** The viewer's private note on an account ('' clears it). At most 2,000 characters, as Mastodon. */
export async function setAccountNote(services: Services, accountId: string, targetId: string, comment: string): Promise<void> {
  if ([...comment].length > 2000) {
    throw new RoostError(422, 'Validation failed: Comment is too long (maximum is 2000 characters)', {
      details: { comment: [{ error: 'ERR_TOO_LONG', description: 'is too long (maximum is 2000 characters)' }] },
    });
  }
  if (!(await services.db.em().findOne(AccountSchema, { id: targetId }))) throw notFound();
  if (comment === '') {
    await services.db.sql.query(`delete from account_notes where account_id = $1 and target_account_id = $2`, [accountId, targetId]);
    return;
  }
  await services.db.sql.query(
    `insert into account_notes (account_id, target_account_id, comment, updated_at) values ($1, $2, $3, $4)
     on conflict (account_id, target_account_id) do update set comment = excluded.comment, updated_at = excluded.updated_at`,
    [accountId, targetId, comment, services.clock.now()],
  );
}

/** Endorse (feature on the profile) an account the viewer follows; Mastodon refuses others. */
export async function endorseAccount(services: Services, accountId: string, targetId: string): Promise<void> {
  const follows = await services.db.em().count(FollowSchema, { accountId, targetAccountId: targetId, state: 'accepted' });
  if (!follows) {
    throw new RoostError(422, 'Validation failed: You must be already following the person you want to endorse', {
      details: { target_account: [{ error: 'ERR_INVALID', description: 'You must be already following the person you want to endorse' }] },
    });
  }
  await services.db.sql.query(
    `insert into account_pins (id, account_id, target_account_id, created_at) values ($1, $2, $3, $4) on conflict do nothing`,
    [services.ids.next(), accountId, targetId, services.clock.now()],
  );
}

export async function unendorseAccount(services: Services, accountId: string, targetId: string): Promise<void> {
  await services.db.sql.query(`delete from account_pins where account_id = $1 and target_account_id = $2`, [accountId, targetId]);
}

/** Mastodon's remove_from_followers: the target (the viewer) ends someone's follow of them. */
export async function removeFromFollowers(services: Services, viewerId: string, followerId: string): Promise<void> {
  const em = services.db.em();
  const [viewer, follower] = await Promise.all([em.findOne(AccountSchema, { id: viewerId }), em.findOne(AccountSchema, { id: followerId })]);
  if (!viewer || !follower) throw notFound();
  await stepFollow(services, follower, viewer, { type: 'follow.remove' }, { origin: 'client' });
}

const DOMAIN_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]*[a-z0-9])?(:\d{1,5})?$/;

/** A user hides a whole domain: the follows between the user and its accounts end, as Mastodon does. */
export async function blockDomain(services: Services, accountId: string, rawDomain: string): Promise<void> {
  const domain = rawDomain.trim().toLowerCase().replace(/^https?:\/\//, '').replace(/\/.*$/, '');
  if (!DOMAIN_RE.test(domain)) {
    throw new RoostError(422, 'Validation failed: Domain is not a valid domain name', {
      details: { domain: [{ error: 'ERR_INVALID', description: 'is not a valid domain name' }] },
    });
  }
  if (domain === services.config.domain) throw new RoostError(422, 'Validation failed: Domain cannot be your own server', {
    details: { domain: [{ error: 'ERR_INVALID', description: 'cannot be your own server' }] },
  });
  // One transaction: the block and the end of every follow between the user and that domain
  // (Mastodon's AfterBlockDomainFromAccountService: its followers there removed or their requests
  // rejected, the user's follows there undone), with the `user_domain_block` severance event when
  // accepted follows ended, or nothing.
  await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    await sql.query(
      `insert into account_domain_blocks (id, account_id, domain, created_at) values ($1, $2, $3, $4) on conflict do nothing`,
      [services.ids.next(), accountId, domain, services.clock.now()],
    );
    const viewer = await tx.findOneOrFail(AccountSchema, { id: accountId });
    const follows = await sql.query<{ other_id: string; state: string; outgoing: boolean }>(
      `select f.account_id::text as other_id, f.state, false as outgoing from follows f join accounts a on a.id = f.account_id
        where f.target_account_id = $1 and f.state in ('accepted', 'requested') and lower(a.domain) = $2
       union all
       select f.target_account_id::text, f.state, true from follows f join accounts a on a.id = f.target_account_id
        where f.account_id = $1 and f.state in ('accepted', 'requested') and lower(a.domain) = $2`,
      [accountId, domain],
    );
    const others = new Map((await tx.find(AccountSchema, { id: { $in: follows.map((f) => f.other_id) } })).map((a) => [a.id, a]));
    const tally = new SeveranceTally();
    for (const f of follows) {
      const other = others.get(f.other_id);
      if (!other) continue;
      if (f.outgoing) {
        const undone = await stepFollow(services, viewer, other, { type: 'follow.undo' }, { em: tx, origin: 'client' });
        if (undone.accepted && f.state === 'accepted') tally.ended(viewer, other);
        continue;
      }
      const removed = await stepFollow(services, other, viewer, { type: 'follow.remove' }, { em: tx, origin: 'client' });
      if (removed.accepted) {
        if (f.state === 'accepted') tally.ended(other, viewer);
      } else {
        await stepFollow(services, other, viewer, { type: 'follow.reject' }, { em: tx, origin: 'client' });
      }
    }
    await recordSeverance(services, sql, { type: 'user_domain_block', targetName: domain, tally, origin: 'client' });
  });
}

export async function unblockDomain(services: Services, accountId: string, domain: string): Promise<void> {
  await services.db.sql.query(`delete from account_domain_blocks where account_id = $1 and domain = $2`, [accountId, domain.trim().toLowerCase()]);
}
