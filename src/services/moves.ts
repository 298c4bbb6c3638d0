/**
 * Account migration (an ActivityPub Move), as Mastodon handles it: the target must list the origin
 * in its `alsoKnownAs`; the origin is marked moved to the target; each local follower of the
 * origin follows the target (with the same options; a local target's approval is bypassed, a
 * remote one decides as usual) and then unfollows the origin; local blocks and mutes of the origin
 * carry over to the target.
 *
 * Followers migrate one after the other in the inbox job that received the Move; one that cannot
 * follow the target (blocked, say) keeps following the origin, and the others go on.
 */
import type { Services } from '../context.ts';
import { AccountSchema, FollowSchema, type Account } from '../db/entities/index.ts';
import { followAccount, unfollowAccount } from './follows.ts';
import { blockAccount, muteAccount } from './relationships.ts';

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

/** `origin` moved to `target`: `target` must be freshly fetched (its aliases current). */
export async function moveAccount(services: Services, origin: Account, target: Account): Promise<MoveResult> {
  const log = services.log.child({ module: 'moves' });
  const refused = moveRefusal(origin, target);
  if (refused) {
    log.info({ origin: origin.uri, target: target.uri, refused }, 'Move refused');
    return { refused, migrated: 0, failed: 0 };
  }
  const em = services.db.em();
  await em.nativeUpdate(AccountSchema, { id: origin.id }, { movedToAccountId: target.id, updatedAt: services.clock.now() });

  const followers = await services.db.sql.query<{ account_id: string }>(
    `select f.account_id::text from follows f join accounts a on a.id = f.account_id
      where f.target_account_id = $1 and f.state = 'accepted' and a.domain is null order by f.id`,
    [origin.id],
  );
  let migrated = 0;
  let failed = 0;
  for (const { account_id: followerId } of followers) {
    if (followerId === target.id) continue;
    const old = await em.findOne(FollowSchema, { accountId: followerId, targetAccountId: origin.id }, { refresh: true });
    try {
      await followAccount(
        services,
        followerId,
        target.id,
        { reblogs: old?.showReblogs, notify: old?.notify, languages: old?.languages ?? null },
        { bypassLocked: target.domain === null },
      );
      await unfollowAccount(services, followerId, origin.id);
      migrated++;
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
    if (account_id !== target.id) await blockAccount(services, account_id, target.id).catch((e) => log.warn({ err: e }, 'block not carried over'));
  }
  const muters = await services.db.sql.query<{ account_id: string; hide_notifications: boolean; expires_at: Date | null }>(
    `select m.account_id::text, m.hide_notifications, m.expires_at from mutes m join accounts a on a.id = m.account_id
      where m.target_account_id = $1 and a.domain is null and (m.expires_at is null or m.expires_at > $2)`,
    [origin.id, now],
  );
  for (const m of muters) {
    if (m.account_id === target.id) continue;
    const duration = m.expires_at ? Math.max(1, Math.ceil((new Date(m.expires_at).getTime() - now.getTime()) / 1000)) : 0;
    await muteAccount(services, m.account_id, target.id, { notifications: m.hide_notifications, duration }).catch((e) =>
      log.warn({ err: e }, 'mute not carried over'),
    );
  }
  log.info({ origin: origin.uri, target: target.uri, migrated, failed }, 'Move accepted');
  return { refused: null, migrated, failed };
}
