import type { InboxContext } from '@fedify/fedify';
import { isActor, type Move } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import type { Account } from '../../db/entities/index.ts';
import { moveAccount } from '../../services/moves.ts';
import { persistAccount } from '../convert/from-as.ts';
import { localAccountFromUri, resolveActivityActor } from './resolve.ts';
import { freshDocumentLoader, lookupObjectSafely } from '../lookup.ts';

/**
 * Move: a remote account moved to another (Mastodon's follower migration). Only the account
 * itself can announce its move (object = actor). The target is always fetched anew, so its
 * `alsoKnownAs` is current; services/moves.ts checks it names the origin and moves the followers.
 */
export async function onMove(services: Services, ctx: InboxContext<void>, move: Move): Promise<void> {
  const origin = await resolveActivityActor(services, move);
  if (!origin || origin.domain === null) return;
  if (!move.objectId || move.objectId.href !== origin.uri || !move.targetId) return;
  let target: Account | null = await localAccountFromUri(services, ctx, move.targetId);
  if (!target) {
    // Past the document cache: the alias the target just added must be seen. Through the bounded
    // loader only (lookupObjectSafely: no WebFinger fallback on Fedify's global fetch).
    const fetched = await lookupObjectSafely(move.targetId, await freshDocumentLoader(ctx), ctx.contextLoader);
    if (!fetched || !isActor(fetched) || fetched.id?.href !== move.targetId.href) return;
    target = await persistAccount(services, fetched);
  }
  await moveAccount(services, origin, target);
}
