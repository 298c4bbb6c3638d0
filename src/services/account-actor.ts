/**
 * The account actor's table in the actor store: every change of an account's state (locked,
 * silenced, suspended, login disabled, moved, approved, confirmed, deleted) is a step of
 * actors/account, and these columns (locked, silenced_at, suspended_at, sensitized_at, moved_to) (and users.disabled / approved / confirmed_at) are projected
 * from its snapshot, nowhere else. Rows written before the actor existed
 * are seeded from their columns (no events: those facts are not news).
 */
import type { EntityManager } from '@mikro-orm/core';
import { accountDefinition, accountFlags, accountSnapshot, type AccountEvent, type AccountMigrationFacts, type AccountMachine, type AccountSnapshot } from '../../actors/account/account.machine.ts';
import type { Services } from '../context.ts';
import { AccountSchema, type Account } from '../db/entities/index.ts';
import { stepActor, type ActorTable, type Origin, type RawRow, type StepActorResult } from './actor-store.ts';

export const ACCOUNT_TABLE: ActorTable<AccountMachine, string, Account> = {
  kind: 'account',
  table: 'accounts',
  entity: AccountSchema,
  definition: accountDefinition,
  // The user's gates (null for a remote account: no user) seed and migrate the snapshot.
  select: `*, (select u.disabled from users u where u.account_id = accounts.id) as user_disabled,
              (select u.approved from users u where u.account_id = accounts.id) as user_approved,
              (select u.confirmed_at is not null from users u where u.account_id = accounts.id) as user_confirmed`,
  locate: (id) => ({ where: 'id = $1', params: [id] }),
  input: (id) => ({ accountId: id }),
  migrationFacts: (row: RawRow): AccountMigrationFacts => ({
    approved: row.user_approved !== false,
    confirmed: row.user_confirmed !== false,
    sensitized: row.sensitized_at != null,
  }),
  seed: (row: RawRow) =>
    accountSnapshot({
      accountId: String(row.id),
      locked: !!row.locked,
      silenced: row.silenced_at != null,
      suspended: row.suspended_at != null,
      disabled: !!row.user_disabled,
      movedToAccountId: row.moved_to_account_id == null ? null : String(row.moved_to_account_id),
      approved: row.user_approved !== false,
      confirmed: row.user_confirmed !== false,
      sensitized: row.sensitized_at != null,
    }),
  project(snapshot, { row, now }) {
    const flags = accountFlags(snapshot);
    return {
      locked: flags.locked,
      // The moment a flag was set is kept while it stays set.
      silenced_at: flags.silenced ? (row?.silenced_at ?? now) : null,
      // A deleted account whose row stays (a local account's data deleted) stays hidden as suspended.
      suspended_at: flags.suspended || flags.deleted ? (row?.suspended_at ?? now) : null,
      sensitized_at: flags.sensitized ? (row?.sensitized_at ?? now) : null,
      moved_to_account_id: flags.movedToAccountId,
      updated_at: now,
    };
  },
  // Login, approval and confirmation (Mastodon's users.disabled, approved, confirmed_at) are the
  // user's columns: written in the same transaction, only when the step changed them.
  async projectElsewhere(sql, snapshot, { key, previous, now }) {
    const flags = accountFlags(snapshot);
    const before = previous ? accountFlags(previous as AccountSnapshot) : undefined;
    if (!before || before.disabled !== flags.disabled) {
      await sql.query(`update users set disabled = $2 where account_id = $1`, [key, flags.disabled]);
    }
    if (flags.deleted) return; // the user goes with the account; its gates are not news
    if (before && !before.deleted && before.approved !== flags.approved) {
      await sql.query(`update users set approved = $2, updated_at = $3 where account_id = $1`, [key, flags.approved, now]);
    }
    if (before && !before.deleted && before.confirmed !== flags.confirmed) {
      // The moment of confirmation is kept while it stays confirmed (Mastodon's confirmed_at).
      await sql.query(
        `update users set confirmed_at = case when $2::boolean then coalesce(confirmed_at, $3::timestamptz) else null end, updated_at = $3
          where account_id = $1`,
        [key, flags.confirmed, now],
      );
    }
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
export function newAccountSnapshot(seed: {
  accountId: string;
  locked?: boolean;
  movedToAccountId?: string | null;
  /** Local sign-ups: whether the user is approved / confirmed from the start (default true). */
  approved?: boolean;
  confirmed?: boolean;
}): Record<string, unknown> {
  return { ...accountSnapshot(seed), definition: accountDefinition.version } as unknown as Record<string, unknown>;
}
