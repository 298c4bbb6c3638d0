/**
 * Account actor: one per account, local or remote.
 *
 * Mastodon keeps "manually approves followers" (locked), the moderation flags (silenced,
 * suspended), the login flag (disabled, a User attribute) and the redirect (moved_to) as
 * independent columns: an account can be locked AND silenced AND moved at once, and lifting a
 * suspension gives back a silenced account if it was silenced before. So the machine is one
 * parallel state with a region per concern, plus a terminal `deleted` state:
 *
 *     existing (parallel)
 *       locking:    unlocked | locked          account.lock / account.unlock
 *       silencing:  unsilenced | silenced      account.silence / account.unsilence
 *       suspension: unsuspended | suspended    account.suspend / account.unsuspend
 *       login:      enabled | disabled         account.disable / account.enable
 *       migration:  unmoved | moved            account.move {targetAccountId} / account.unmove
 *       approval:   approved | pending         account.approve (a sign-up awaiting a moderator)
 *       confirmation: confirmed | unconfirmed  account.confirm (the e-mail address)
 *       sensitizing: unsensitized | sensitized account.sensitize / account.unsensitize (a
 *                   moderator forces the account's media sensitive: Mastodon's sensitized_at)
 *     deleted (final)                          account.delete, from any existing configuration
 *
 * The named states map onto configurations: "active" = existing with every region at
 * its first state; "locked", "silenced", "suspended", "disabled", "moved" = that region in that
 * state; "deleted" = deleted. `accountFlags()` reads them back as booleans for services.
 *
 * Rules (decided from Mastodon's behaviour):
 * - An event that would not change its region is not accepted (lock a locked account, silence a
 *   silenced one …). Services treat such a rejection as an idempotent no-op where Mastodon does
 *   (e.g. `update_credentials` with `locked` unchanged) or report 422.
 * - `deleted` accepts nothing, ever (Mastodon deletes are irreversible; a re-created remote
 *   actor with the same URI is a new account row and a new actor).
 * - A suspended account cannot lock, unlock, move or unmove: its owner cannot act, and its
 *   profile is frozen until unsuspended. Moderators can still silence/unsilence and
 *   disable/enable it (separate columns in Mastodon), and it can be deleted (Mastodon's admin
 *   "delete account data" requires a suspended account; that precondition is the admin
 *   endpoint's to check, since self-deletion and remote Delete do not require it).
 * - `account.move` needs a target other than the account itself and other than the current
 *   redirect: a moved account may move again to a different target (Mastodon allows a new
 *   migration; the 30-day cooldown is a clock rule, checked by the service), but a duplicate
 *   Move to the same target is rejected so followers are not migrated twice.
 * - `account.unmove` clears the redirect (Mastodon "cancel redirect" / a remote actor Update
 *   without movedTo). Allowed only while moved and not suspended.
 * - Disabled only blocks logging in; it does not restrict the other regions.
 * - Approval and confirmation are Mastodon's users.approved / users.confirmed_at: one-way (there
 *   is no "unapprove": a rejected sign-up is deleted; no "unconfirm"). Approving an approved
 *   account or confirming a confirmed one is not accepted, like disabling a disabled one (the
 *   CLI reports it as done, as before). They do not depend on the other regions (Mastodon
 *   approves and confirms regardless of suspension). Remote accounts and accounts seeded without
 *   these facts are approved and confirmed: the gates concern local sign-ups only.
 *
 * Emitted (payloads carry the account id; effects federate and surface them):
 *   account.locked, account.unlocked (follow service: accept pending requests except from
 *   silenced/muted requesters, see follow.machine.ts `target.unlocked`), account.silenced,
 *   account.unsilenced, account.suspended, account.unsuspended, account.disabled,
 *   account.enabled, account.moved {targetAccountId, previousTargetAccountId},
 *   account.unmoved {previousTargetAccountId}, account.approved, account.confirmed,
 *   account.sensitized, account.unsensitized, account.deleted.
 *
 * Definition 2 added the approval and confirmation regions. A snapshot stored by definition 1
 * lacks them; `migrateAccount` adds them from what the row says (users.approved, confirmed_at),
 * which the actor store passes as migration facts (approved and confirmed when there is no user).
 * Definition 3 added the sensitizing region, from accounts.sensitized_at likewise.
 *
 * New accounts start `active`. To seed an actor for an existing row (a remote account fetched
 * already locked, a backfill), build the snapshot with `accountSnapshot(...)` instead of
 * replaying events, so no domain events are emitted for facts that are not news.
 */
import { and, assign, emit, setup, stateIn } from 'xstate';
import type { PersistedSnapshot } from '../runtime/step.ts';
import { defineMachine } from '../runtime/definition.ts';
import { canonicalize } from '../runtime/step.ts';

export interface AccountContext {
  accountId: string;
  /** The account this one redirects to while `migration` is `moved`, else null. */
  movedToAccountId: string | null;
}

export interface AccountInput {
  accountId: string;
}

export type AccountEvent =
  | { type: 'account.lock' }
  | { type: 'account.unlock' }
  | { type: 'account.silence' }
  | { type: 'account.unsilence' }
  | { type: 'account.suspend' }
  | { type: 'account.unsuspend' }
  | { type: 'account.disable' }
  | { type: 'account.enable' }
  | { type: 'account.move'; targetAccountId: string }
  | { type: 'account.unmove' }
  | { type: 'account.approve' }
  | { type: 'account.confirm' }
  | { type: 'account.sensitize' }
  | { type: 'account.unsensitize' }
  | { type: 'account.delete' };

export type AccountEmitted =
  | { type: 'account.locked'; accountId: string }
  | { type: 'account.unlocked'; accountId: string }
  | { type: 'account.silenced'; accountId: string }
  | { type: 'account.unsilenced'; accountId: string }
  | { type: 'account.suspended'; accountId: string }
  | { type: 'account.unsuspended'; accountId: string }
  | { type: 'account.disabled'; accountId: string }
  | { type: 'account.enabled'; accountId: string }
  | { type: 'account.moved'; accountId: string; targetAccountId: string; previousTargetAccountId: string | null }
  | { type: 'account.unmoved'; accountId: string; previousTargetAccountId: string }
  | { type: 'account.approved'; accountId: string }
  | { type: 'account.confirmed'; accountId: string }
  | { type: 'account.sensitized'; accountId: string }
  | { type: 'account.unsensitized'; accountId: string }
  | { type: 'account.deleted'; accountId: string };

type SimpleEmittedType = Exclude<AccountEmitted['type'], 'account.moved' | 'account.unmoved'>;

const unsuspended = stateIn({ existing: { suspension: 'unsuspended' } });

export const accountMachine = setup({
  types: {
    context: {} as AccountContext,
    events: {} as AccountEvent,
    input: {} as AccountInput,
    emitted: {} as AccountEmitted,
  },
  actions: {
    announce: emit(({ context }, params: { type: SimpleEmittedType }) => ({
      type: params.type,
      accountId: context.accountId,
    })),
    // Emit before assigning: the payload reports the redirect being replaced.
    announceMove: emit(({ context, event }) => ({
      type: 'account.moved' as const,
      accountId: context.accountId,
      targetAccountId: (event as Extract<AccountEvent, { type: 'account.move' }>).targetAccountId,
      previousTargetAccountId: context.movedToAccountId,
    })),
    recordMove: assign({
      movedToAccountId: ({ event }) => (event as Extract<AccountEvent, { type: 'account.move' }>).targetAccountId,
    }),
    announceUnmove: emit(({ context }) => ({
      type: 'account.unmoved' as const,
      accountId: context.accountId,
      // Invariant: `moved` ⇔ movedToAccountId !== null (recordMove / clearMove keep it).
      previousTargetAccountId: context.movedToAccountId ?? '',
    })),
    clearMove: assign({ movedToAccountId: null }),
  },
  guards: {
    isNewMoveTarget: ({ context, event }) =>
      event.type === 'account.move' &&
      typeof event.targetAccountId === 'string' &&
      event.targetAccountId !== '' &&
      event.targetAccountId !== context.accountId &&
      event.targetAccountId !== context.movedToAccountId,
  },
}).createMachine({
  id: 'account',
  context: ({ input }) => {
    if (typeof input?.accountId !== 'string' || input.accountId === '') {
      throw new TypeError('account: input.accountId must be a non-empty string');
    }
    return { accountId: input.accountId, movedToAccountId: null };
  },
  initial: 'existing',
  states: {
    existing: {
      type: 'parallel',
      on: {
        'account.delete': {
          target: 'deleted',
          actions: { type: 'announce', params: { type: 'account.deleted' } },
        },
      },
      states: {
        locking: {
          initial: 'unlocked',
          states: {
            unlocked: {
              on: {
                'account.lock': {
                  guard: unsuspended,
                  target: 'locked',
                  actions: { type: 'announce', params: { type: 'account.locked' } },
                },
              },
            },
            locked: {
              on: {
                'account.unlock': {
                  guard: unsuspended,
                  target: 'unlocked',
                  actions: { type: 'announce', params: { type: 'account.unlocked' } },
                },
              },
            },
          },
        },
        silencing: {
          initial: 'unsilenced',
          states: {
            unsilenced: {
              on: {
                'account.silence': {
                  target: 'silenced',
                  actions: { type: 'announce', params: { type: 'account.silenced' } },
                },
              },
            },
            silenced: {
              on: {
                'account.unsilence': {
                  target: 'unsilenced',
                  actions: { type: 'announce', params: { type: 'account.unsilenced' } },
                },
              },
            },
          },
        },
        suspension: {
          initial: 'unsuspended',
          states: {
            unsuspended: {
              on: {
                'account.suspend': {
                  target: 'suspended',
                  actions: { type: 'announce', params: { type: 'account.suspended' } },
                },
              },
            },
            suspended: {
              on: {
                'account.unsuspend': {
                  target: 'unsuspended',
                  actions: { type: 'announce', params: { type: 'account.unsuspended' } },
                },
              },
            },
          },
        },
        login: {
          initial: 'enabled',
          states: {
            enabled: {
              on: {
                'account.disable': {
                  target: 'disabled',
                  actions: { type: 'announce', params: { type: 'account.disabled' } },
                },
              },
            },
            disabled: {
              on: {
                'account.enable': {
                  target: 'enabled',
                  actions: { type: 'announce', params: { type: 'account.enabled' } },
                },
              },
            },
          },
        },
        migration: {
          initial: 'unmoved',
          states: {
            unmoved: {
              on: {
                'account.move': {
                  guard: and([unsuspended, 'isNewMoveTarget']),
                  target: 'moved',
                  actions: ['announceMove', 'recordMove'],
                },
              },
            },
            moved: {
              on: {
                'account.move': {
                  guard: and([unsuspended, 'isNewMoveTarget']),
                  target: 'moved',
                  actions: ['announceMove', 'recordMove'],
                },
                'account.unmove': {
                  guard: unsuspended,
                  target: 'unmoved',
                  actions: ['announceUnmove', 'clearMove'],
                },
              },
            },
          },
        },
        approval: {
          initial: 'approved',
          states: {
            approved: {},
            pending: {
              on: {
                'account.approve': {
                  target: 'approved',
                  actions: { type: 'announce', params: { type: 'account.approved' } },
                },
              },
            },
          },
        },
        confirmation: {
          initial: 'confirmed',
          states: {
            confirmed: {},
            unconfirmed: {
              on: {
                'account.confirm': {
                  target: 'confirmed',
                  actions: { type: 'announce', params: { type: 'account.confirmed' } },
                },
              },
            },
          },
        },
        // Definition 3: a snapshot stored before gets it from accounts.sensitized_at.
        sensitizing: {
          initial: 'unsensitized',
          states: {
            unsensitized: {
              on: {
                'account.sensitize': {
                  target: 'sensitized',
                  actions: { type: 'announce', params: { type: 'account.sensitized' } },
                },
              },
            },
            sensitized: {
              on: {
                'account.unsensitize': {
                  target: 'unsensitized',
                  actions: { type: 'announce', params: { type: 'account.unsensitized' } },
                },
              },
            },
          },
        },
      },
    },
    deleted: { type: 'final' },
  },
});

export type AccountSnapshot = PersistedSnapshot<AccountContext>;

export interface AccountFlags {
  locked: boolean;
  silenced: boolean;
  suspended: boolean;
  disabled: boolean;
  moved: boolean;
  movedToAccountId: string | null;
  /** A sign-up no longer awaiting a moderator (users.approved). */
  approved: boolean;
  /** The e-mail address is confirmed (users.confirmed_at). */
  confirmed: boolean;
  /** Media forced sensitive by a moderator (accounts.sensitized_at). */
  sensitized: boolean;
  deleted: boolean;
}

type ExistingValue = {
  locking: 'unlocked' | 'locked';
  silencing: 'unsilenced' | 'silenced';
  suspension: 'unsuspended' | 'suspended';
  login: 'enabled' | 'disabled';
  migration: 'unmoved' | 'moved';
  approval: 'approved' | 'pending';
  confirmation: 'confirmed' | 'unconfirmed';
  sensitizing: 'unsensitized' | 'sensitized';
};

/** The account's flags as booleans, read from a persisted snapshot (for services and rows). */
export function accountFlags(snapshot: AccountSnapshot): AccountFlags {
  if (snapshot.value === 'deleted') {
    return {
      locked: false,
      silenced: false,
      suspended: false,
      disabled: false,
      moved: false,
      movedToAccountId: null,
      approved: false,
      confirmed: false,
      sensitized: false,
      deleted: true,
    };
  }
  const regions = (snapshot.value as { existing: Partial<ExistingValue> }).existing;
  const moved = regions.migration === 'moved';
  return {
    locked: regions.locking === 'locked',
    silenced: regions.silencing === 'silenced',
    suspended: regions.suspension === 'suspended',
    disabled: regions.login === 'disabled',
    moved,
    movedToAccountId: moved ? snapshot.context.movedToAccountId : null,
    approved: regions.approval !== 'pending',
    confirmed: regions.confirmation !== 'unconfirmed',
    sensitized: regions.sensitizing === 'sensitized',
    deleted: false,
  };
}

export interface AccountSeed {
  accountId: string;
  locked?: boolean;
  silenced?: boolean;
  suspended?: boolean;
  disabled?: boolean;
  /** Non-null: the account already redirects there. */
  movedToAccountId?: string | null;
  /** false: a sign-up awaiting approval (default true). */
  approved?: boolean;
  /** false: e-mail address not confirmed yet (default true). */
  confirmed?: boolean;
  sensitized?: boolean;
}

/**
 * A version-0 persisted snapshot for an account whose flags are already known (a remote
 * account fetched for the first time, a backfill of existing rows). Nothing is emitted: these
 * facts are not news. Insert it, then `step` it like any other snapshot.
 */
export function accountSnapshot(seed: AccountSeed): AccountSnapshot {
  if (typeof seed.accountId !== 'string' || seed.accountId === '') {
    throw new TypeError('account: accountId must be a non-empty string');
  }
  const movedTo = seed.movedToAccountId ?? null;
  if (movedTo !== null && (movedTo === '' || movedTo === seed.accountId)) {
    throw new TypeError('account: movedToAccountId must be another account');
  }
  const existing: ExistingValue = {
    locking: seed.locked ? 'locked' : 'unlocked',
    silencing: seed.silenced ? 'silenced' : 'unsilenced',
    suspension: seed.suspended ? 'suspended' : 'unsuspended',
    login: seed.disabled ? 'disabled' : 'enabled',
    migration: movedTo === null ? 'unmoved' : 'moved',
    approval: seed.approved === false ? 'pending' : 'approved',
    confirmation: seed.confirmed === false ? 'unconfirmed' : 'confirmed',
    sensitizing: seed.sensitized ? 'sensitized' : 'unsensitized',
  };
  return canonicalize(
    { value: { existing }, context: { accountId: seed.accountId, movedToAccountId: movedTo }, version: 0 },
    'account snapshot',
  ) as AccountSnapshot;
}

/** What a migration needs to know besides the stored snapshot: the user row's gates (absent = no user). */
export interface AccountMigrationFacts {
  approved?: boolean;
  confirmed?: boolean;
  /** accounts.sensitized_at is set (absent: not sensitized). */
  sensitized?: boolean;
}

/**
 * Brings a snapshot stored by an older definition up to date (same actor version: not a step).
 * 1 → 2: the approval and confirmation regions are added from the facts (users.approved,
 * users.confirmed_at); without facts (a remote account, no user) approved and confirmed.
 * 2 → 3: the sensitizing region is added from the facts (accounts.sensitized_at). A deleted
 * account stays `deleted`.
 */
export function migrateAccount(stored: PersistedSnapshot<unknown>, from: number, facts?: unknown): PersistedSnapshot<unknown> {
  if (from !== 1 && from !== 2) throw new TypeError(`account: no migration from definition ${from}`);
  if (stored.value === 'deleted') return stored;
  const f = (facts ?? {}) as AccountMigrationFacts;
  const existing = (stored.value as { existing?: Record<string, unknown> } | null)?.existing;
  if (!existing || typeof existing !== 'object') throw new TypeError(`account: a definition-${from} snapshot must be existing or deleted`);
  const gates =
    from === 1
      ? { approval: f.approved === false ? 'pending' : 'approved', confirmation: f.confirmed === false ? 'unconfirmed' : 'confirmed' }
      : {};
  return canonicalize(
    {
      ...stored,
      value: { existing: { ...existing, ...gates, sensitizing: f.sensitized ? 'sensitized' : 'unsensitized' } },
    },
    'account snapshot',
  ) as PersistedSnapshot<unknown>;
}

/** The account machine with its definition version (bump it and add a migration when old snapshots would be misread). */
export const accountDefinition = defineMachine(accountMachine, { version: 3, migrate: migrateAccount });
export type AccountMachine = typeof accountMachine;
