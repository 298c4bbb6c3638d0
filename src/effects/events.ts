/**
 * Domain events that leave the transaction that caused them through the durable job queue:
 * written in the same transaction as the rows, handled after commit (effects/dispatch.ts).
 */
import type { Sql } from '../db/sql.ts';
import { enqueue } from '../jobs/queue.ts';
import type { Clock } from '../lib/clock.ts';

export type DomainEvent =
  | { type: 'follow.requested'; followId: string }
  | { type: 'follow.accepted'; followId: string }
  | { type: 'follow.rejected'; followId: string }
  | { type: 'follow.undone'; followId: string }
  | { type: 'block.created'; blockId: string }
  | { type: 'account.updated'; accountId: string }
  | { type: 'account.moved'; accountId: string; targetAccountId: string }
  | { type: 'mute.expired'; accountId: string; targetId: string }
  | { type: 'block.removed'; accountId: string; targetId: string; blockUri: string; blockId: string };

export const EFFECT_JOB = 'effect';

/** Writes the event as a job in the caller's transaction; pass the instance's clock so a lab
 * clock and the queue agree on when it is due. */
export async function enqueueEffect(sql: Sql, event: DomainEvent, clock?: Clock): Promise<void> {
  await enqueue(sql, { kind: EFFECT_JOB, payload: event }, { clock });
}
