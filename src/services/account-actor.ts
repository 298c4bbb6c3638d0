/**
 * The account actor's table in the actor store: every change of an account's state (locked,
 * silenced, suspended, login disabled, moved, deleted) is a step of actors/account, and these
 * columns are projected from its snapshot, nowhere else. Rows written before the actor existed
 * are seeded from their columns (no events: those facts are not news).
 */
import type { EntityManager } from '@mikro-orm/core';
import { accountDefinition, accountFlags, accountSnapshot, type AccountEvent, type AccountMachine, type AccountSnapshot } from '../../actors/account/account.machine.ts';
import type { Services } from '../context.ts';
import { AccountSchema, type Account } from '../db/entities/index.ts';
import { stepActor, type ActorTable, type Origin, type RawRow, type StepActorResult } from './actor-store.ts';

export const ACCOUNT_TABLE: ActorTable<AccountMachine, string, Account> = {
  kind: 'account',
  table: 'accounts',
  entity: AccountSchema,
  definition: accountDefinition,
  select: '*, (select u.disabled from users u where u.account_id = accounts.id) as user_disabled',
  locate: (id) => ({ where: 'id = $1', params: [id] }),
  input: (id) => ({ accountId: id }),
  seed: (row: RawRow) =>
    accountSnapshot({
      accountId: String(row.id),
      locked: !!row.locked,
      silenced: row.silenced_at != null,
      suspended: row.suspended_at != null,
      disabled: !!row.user_disabled,
      movedToAccountId: row.moved_to_account_id == null ? null : String(row.moved_to_account_id),
    }),
  project(snapshot, { row, now }) {
    const flags = accountFlags(snapshot);
    return {
      locked: flags.locked,
      // The moment a flag was set is kept while it stays set.
      silenced_at: flags.silenced ? (row?.silenced_at ?? now) : null,
      suspended_at: flags.suspended ? (row?.suspended_at ?? now) : null,
      moved_to_account_id: flags.movedToAccountId,
      updated_at: now,
    };
  },
  // Login (Mastodon's users.disabled) is the user's column: written in the same transaction.
  async projectElsewhere(sql, snapshot, { key, previous }) {
    const disabled = accountFlags(snapshot).disabled;
    if (previous && accountFlags(previous as AccountSnapshot).disabled === disabled) return;
    await sql.query(`update users set disabled = $2 where account_id = $1`, [key, disabled]);
  },
};

/** Steps the account actor of `accountId` (in `em`'s transaction when given). */
export function stepAccount(
  services: Services,
  accountId: string,
  event: AccountEvent,
  opts: { origin: Origin; em?: EntityManager },
): Promise<StepActorResult<AccountMachine, Account>> {
  return stepActor(services, ACCOUNT_TABLE, accountId, event, opts);
}

/** The stored snapshot a new account row starts with (local sign-up or a remote actor seen first). */
export function newAccountSnapshot(seed: { accountId: string; locked?: boolean; movedToAccountId?: string | null }): Record<string, unknown> {
  return { ...accountSnapshot(seed), definition: accountDefinition.version } as unknown as Record<string, unknown>;
}
