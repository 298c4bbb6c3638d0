/**
 * Moderation of accounts (Mastodon's Admin::AccountAction and the admin accounts controller):
 * approve or reject a sign-up, act on an account (none, sensitive, disable, silence, suspend, with
 * a warning), lift an action (enable, unsilence, unsuspend, unsensitive), delete a suspended
 * account's data. The admin API (src/api/admin/accounts.ts) and `roost accounts …` (the CLI's
 * emergencies, src/control/commands.ts) call these same functions.
 *
 * One use case, one transaction: the account actor's step (its state columns and its fact in the
 * outbox), the account_warnings row and its `account.warned` fact, the reports the action
 * resolves, and the audit log entry (services/audit-log.ts) commit together or not at all. The
 * authentication cache is dropped after a change that shuts a user out.
 *
 * A suspension hides the account's content at once (the visibility rules read suspended_at) and
 * federates: a local account's Delete reaches its followers' servers (effects/federate.ts,
 * `account.suspended`). A silence feeds the follow rules (a silenced account's follow requests
 * wait, as the follow actor decides).
 */
import type { EntityManager } from '@mikro-orm/core';
import type { AccountEvent } from '../../actors/account/account.machine.ts';
import type { Services } from '../context.ts';
import { AccountSchema, UserSchema, type Account, type User } from '../db/entities/index.ts';
import { sqlFromEm, type Sql } from '../db/sql.ts';
import { RoostError, forbidden, notFound } from '../lib/errors.ts';
import { stepAccount } from './account-actor.ts';
import { recordEvent, type Origin } from './actor-store.ts';
import { logAdminAction } from './audit-log.ts';
import { endFollowsOf } from './follows.ts';
import { forgetViewer } from './reads/viewer.ts';

/** Who acts: a moderator's account (the admin API) or null, the operator at the CLI. */
export type AdminActor = string | null;

export const ACTION_TYPES = ['none', 'sensitive', 'disable', 'silence', 'suspend'] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

export const REVERSALS = ['enable', 'unsilence', 'unsuspend', 'unsensitive'] as const;
export type Reversal = (typeof REVERSALS)[number];

export interface AccountActionInput {
  type: string | undefined;
  reportId?: string | null;
  warningPresetId?: string | null;
  text?: string | null;
  sendEmailNotification?: boolean;
}

const origin = (by: AdminActor): Origin => (by === null ? 'operator' : 'client');

/** `user@domain` for a remote account, the username for a local one (the audit log's identifier). */
function acct(a: Account): string {
  return a.domain ? `${a.username}@${a.domain}` : a.username;
}

async function lockAccount(tx: EntityManager, accountId: string): Promise<{ account: Account; user: User | null }> {
  if (!/^\d{1,19}$/.test(accountId)) throw notFound();
  const [row] = await sqlFromEm(tx).query<{ id: string }>(`select id::text from accounts where id = $1 for update`, [accountId]);
  if (!row) throw notFound();
  const account = await tx.findOneOrFail(AccountSchema, { id: accountId }, { refresh: true });
  const user = account.domain === null ? await tx.findOne(UserSchema, { accountId }, { refresh: true }) : null;
  return { account, user };
}

/**
 * A moderator acts only on users whose role is below theirs (Mastodon's AccountPolicy: the acting
 * role must override the target's); a role with the administrator bit, and the operator, on all.
 */
async function mayModerate(sql: Sql, by: AdminActor, target: User | null): Promise<void> {
  if (by === null || !target?.roleId) return;
  if (by === target.accountId) throw forbidden();
  const [r] = await sql.query<{ mine: number | null; admin: boolean; theirs: number }>(
    `select (select r.position from users u join user_roles r on r.id = u.role_id where u.account_id = $1) as mine,
            coalesce((select r.permissions & 1 <> 0 from users u join user_roles r on r.id = u.role_id where u.account_id = $1), false) as admin,
            (select position from user_roles where id = $2) as theirs`,
    [by, target.roleId],
  );
  if (!r || r.admin || r.theirs === null) return;
  if (r.mine === null || r.mine <= r.theirs) throw forbidden();
}

/** The account actor's step; a step the machine refuses (already in that state) changes nothing. */
async function step(services: Services, tx: EntityManager, accountId: string, event: AccountEvent, by: AdminActor): Promise<boolean> {
  return (await stepAccount(services, accountId, event, { origin: origin(by), em: tx })).accepted;
}

/** Resolves reports against the account (Mastodon's AccountAction#process_reports!): the one given, or every open one. */
async function resolveReports(sql: Sql, targetId: string, reportId: string | null, now: Date): Promise<number> {
  const rows = reportId
    ? await sql.query(`update reports set action_taken_at = $3, updated_at = $3 where id = $1 and target_account_id = $2 and action_taken_at is null returning id`, [reportId, targetId, now])
    : await sql.query(`update reports set action_taken_at = $2, updated_at = $2 where target_account_id = $1 and action_taken_at is null returning id`, [targetId, now]);
  return rows.length;
}

/**
 * POST /api/v1/admin/accounts/:id/action. Validates first (an unknown type 422, an unknown report
 * or warning preset 404), then in one transaction: the actor's step, the warning (a strike: its
 * `account.warned` fact, which the mail consumer reads for `send_email_notification`), the
 * reports resolved, the audit entry.
 */
export async function actOnAccount(services: Services, by: AdminActor, accountId: string, input: AccountActionInput): Promise<{ warningId: string }> {
  const type = input.type;
  if (!type || !(ACTION_TYPES as readonly string[]).includes(type)) throw new RoostError(422, 'Validation failed: Type is not included in the list');
  const reportId = input.reportId || null;
  const text = (input.text ?? '').trim();
  const result = await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const { account, user } = await lockAccount(tx, accountId);
    await mayModerate(sql, by, user);
    if (type === 'disable' && !user) throw new RoostError(422, 'Validation failed: Type is not included in the list');
    if (reportId !== null) {
      if (!/^\d{1,19}$/.test(reportId)) throw notFound();
      const [report] = await sql.query<{ target: string }>(`select target_account_id::text as target from reports where id = $1`, [reportId]);
      if (!report) throw notFound();
      if (report.target !== account.id) throw new RoostError(422, 'Validation failed: Report is not about this account');
    }
    // Roost keeps no warning presets: a preset named is a preset missing.
    if (input.warningPresetId) throw notFound();
    const event: AccountEvent | null =
      type === 'sensitive' ? { type: 'account.sensitize' }
        : type === 'disable' ? { type: 'account.disable' }
          : type === 'silence' ? { type: 'account.silence' }
            : type === 'suspend' ? { type: 'account.suspend' }
              : null;
    if (event) await step(services, tx, account.id, event, by);
    const now = services.clock.now();
    const warningId = services.ids.next();
    const statusIds = reportId
      ? (await sql.query<{ ids: string[] }>(`select coalesce(status_ids, '{}')::text[] as ids from reports where id = $1`, [reportId]))[0]?.ids ?? []
      : [];
    await sql.query(
      `insert into account_warnings (id, account_id, target_account_id, action, text, report_id, status_ids, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7::bigint[], $8, $8)`,
      [warningId, by, account.id, type, text, reportId, statusIds, now],
    );
    const sendEmail = input.sendEmailNotification === true && user !== null;
    await recordEvent(services, sql, {
      actorKind: 'account',
      actorId: account.id,
      origin: origin(by),
      event: { type: 'account.warned', accountId: account.id, warningId, action: type, sendEmail },
    });
    if (reportId !== null || type !== 'none') await resolveReports(sql, account.id, reportId, now);
    await logAdminAction(services, sql, {
      actorAccountId: by,
      action: type,
      targetType: 'Account',
      targetId: account.id,
      humanIdentifier: acct(account),
      detail: { warningId, reportId, text: text || null, sendEmail },
    });
    return { warningId };
  });
  if (type === 'disable' || type === 'suspend') forgetViewer(services);
  return result;
}

/**
 * The reversals (POST …/enable, /unsilence, /unsuspend, /unsensitive). Lifting what is not there
 * is a no-op answered 200 (Mastodon's policies allow it), except `unsuspend` of an account that
 * is not suspended: 403, as Mastodon's AccountPolicy#unsuspend?. `enable` needs a local user.
 */
export async function reverseAction(services: Services, by: AdminActor, accountId: string, reversal: Reversal): Promise<void> {
  await services.db.em().transactional(async (tx) => {
    const { account, user } = await lockAccount(tx, accountId);
    await mayModerate(sqlFromEm(tx), by, user);
    if (reversal === 'enable' && !user) throw notFound();
    if (reversal === 'unsuspend' && !account.suspendedAt) throw forbidden();
    const event: AccountEvent =
      reversal === 'enable' ? { type: 'account.enable' }
        : reversal === 'unsilence' ? { type: 'account.unsilence' }
          : reversal === 'unsuspend' ? { type: 'account.unsuspend' }
            : { type: 'account.unsensitize' };
    const changed = await step(services, tx, account.id, event, by);
    await logAdminAction(services, sqlFromEm(tx), {
      actorAccountId: by,
      action: reversal,
      targetType: reversal === 'enable' ? 'User' : 'Account',
      targetId: account.id,
      humanIdentifier: acct(account),
      detail: changed ? {} : { unchanged: true },
    });
  });
  forgetViewer(services);
}

/** POST …/approve: a local sign-up awaiting a moderator (403 when it is not pending, as Mastodon). */
export async function approveAccount(services: Services, by: AdminActor, accountId: string): Promise<void> {
  await services.db.em().transactional(async (tx) => {
    const { account, user } = await lockAccount(tx, accountId);
    if (!user) throw notFound();
    if (user.approved) throw forbidden();
    await step(services, tx, account.id, { type: 'account.approve' }, by);
    await logAdminAction(services, sqlFromEm(tx), { actorAccountId: by, action: 'approve', targetType: 'User', targetId: account.id, humanIdentifier: acct(account) });
  });
  forgetViewer(services);
}

/** POST …/reject: a pending sign-up is deleted whole (its account, user, tokens), as Mastodon's DeleteAccountService for a rejected user. */
export async function rejectAccount(services: Services, by: AdminActor, accountId: string): Promise<void> {
  await services.db.em().transactional(async (tx) => {
    const { account, user } = await lockAccount(tx, accountId);
    if (!user) throw notFound();
    if (user.approved) throw forbidden();
    await step(services, tx, account.id, { type: 'account.delete' }, by);
    await endFollowsOf(services, account, tx, origin(by));
    const sql = sqlFromEm(tx);
    await logAdminAction(services, sql, { actorAccountId: by, action: 'reject', targetType: 'User', targetId: account.id, humanIdentifier: acct(account) });
    await sql.query(`delete from accounts where id = $1`, [account.id]);
  });
  forgetViewer(services);
}

/**
 * DELETE /api/v1/admin/accounts/:id: the data of a suspended account goes (Mastodon's
 * "delete account data"; 403 unless suspended). A remote account's row goes with its statuses;
 * a local account keeps its row, suspended and deleted (its username stays taken, as Mastodon
 * keeps it), and loses its statuses, follows, user and tokens.
 */
export async function deleteAccountData(services: Services, by: AdminActor, accountId: string): Promise<void> {
  await services.db.em().transactional(async (tx) => {
    const { account, user } = await lockAccount(tx, accountId);
    const sql = sqlFromEm(tx);
    await mayModerate(sql, by, user);
    if (!account.suspendedAt) throw forbidden();
    const accepted = await step(services, tx, account.id, { type: 'account.delete' }, by);
    if (!accepted) throw forbidden(); // deleted already
    await endFollowsOf(services, account, tx, origin(by));
    await logAdminAction(services, sql, { actorAccountId: by, action: 'destroy', targetType: 'Account', targetId: account.id, humanIdentifier: acct(account) });
    if (account.domain !== null) {
      await sql.query(`delete from accounts where id = $1`, [account.id]);
      return;
    }
    await sql.query(`delete from statuses where account_id = $1`, [account.id]);
    await sql.query(`delete from users where account_id = $1`, [account.id]);
    await sql.query(`update accounts set display_name = '', note = '', fields = '[]'::jsonb, avatar_url = null, header_url = null where id = $1`, [account.id]);
  });
  forgetViewer(services);
}

/** A local account by username, or a remote one by `user@domain` (the CLI's USER argument): its id. */
export async function accountIdFor(services: Services, handle: string): Promise<string> {
  const h = handle.trim().replace(/^@/, '');
  const at = h.indexOf('@');
  const username = at < 0 ? h : h.slice(0, at);
  const domain = at < 0 ? null : h.slice(at + 1).toLowerCase();
  const local = domain === null || domain === services.config.domain.toLowerCase();
  const [row] = await services.db.sql.query<{ id: string }>(
    local
      ? `select id::text from accounts where lower(username) = lower($1) and domain is null`
      : `select id::text from accounts where lower(username) = lower($1) and lower(domain) = $2`,
    local ? [username] : [username, domain],
  );
  if (!row) throw notFound(`No account ${h}`);
  return row.id;
}
