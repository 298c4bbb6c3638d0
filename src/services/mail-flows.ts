/**
 * The use cases behind Roost's mail (the mail itself goes after commit: effects/mail.ts):
 *  - resendConfirmation: POST /api/v1/emails/confirmations (Mastodon's
 *    Api::V1::Emails::ConfirmationsController): only for the application the user signed up
 *    with, only while unconfirmed; an `email` changes the address first (checked as at sign-up);
 *  - confirmEmail: the link of the confirmation mail; the account actor steps `account.confirm`;
 *  - requestPasswordReset / resetPassword: Mastodon's (Devise's) password web flow; a reset
 *    revokes every access token of the user.
 * Tokens are compared by their SHA-256 (the mail holds the token, the row its hash).
 */
import type { Services } from '../context.ts';
import { sqlFromEm } from '../db/sql.ts';
import { RoostError, Validation } from '../lib/errors.ts';
import { hashPassword } from '../lib/password.ts';
import { recordEvent } from './actor-store.ts';
import { stepAccount } from './account-actor.ts';
import { emailRefusal } from './email-blocks.ts';
import { forgetViewer } from './reads/viewer.ts';
import { rateLimits } from './rate-limits.ts';
import { hashSecret } from './tokens.ts';

/** Devise's confirm_within and reset_password_within as Mastodon sets them. */
export const CONFIRMATION_VALID_MS = 3 * 86_400_000;
export const RESET_PASSWORD_VALID_MS = 6 * 3_600_000;

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export async function resendConfirmation(
  services: Services,
  viewer: { userId: string; tokenApplicationId: string | null; ip: string | null },
  newEmail: string | undefined,
): Promise<void> {
  const [u] = await services.db.sql.query<{ created_by_application_id: string | null; confirmed: boolean; email: string }>(
    `select created_by_application_id::text as created_by_application_id, confirmed_at is not null as confirmed, email from users where id = $1`,
    [viewer.userId],
  );
  if (!u || u.created_by_application_id === null || u.created_by_application_id !== viewer.tokenApplicationId) {
    throw new RoostError(403, 'This method is only available to the application the user originally signed-up with');
  }
  if (u.confirmed) throw new RoostError(403, 'This method is only available while the e-mail is awaiting confirmation');
  let email: string | null = null;
  if (newEmail !== undefined && newEmail.trim() !== u.email) {
    email = newEmail.trim();
    const v = new Validation();
    if (!email) v.add('email', 'ERR_BLANK', "can't be blank");
    else if (!EMAIL_RE.test(email) || email.length > 320) v.add('email', 'ERR_INVALID', 'is invalid');
    else {
      const taken = await services.db.sql.query(`select 1 from users where lower(email) = lower($1) and id <> $2`, [email, viewer.userId]);
      if (taken.length) v.add('email', 'ERR_TAKEN', 'is already taken');
      else {
        const refusal = await emailRefusal(services, email, viewer.ip);
        if (refusal === 'blocked') v.add('email', 'ERR_BLOCKED', 'uses a disallowed e-mail provider');
        else if (refusal === 'taken') v.add('email', 'ERR_TAKEN', 'is already taken');
      }
    }
    v.throwIfInvalid();
  }
  await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    if (email !== null) {
      await sql
        .query(`update users set email = $2, updated_at = $3 where id = $1`, [viewer.userId, email, services.clock.now()])
        .catch((err: unknown) => {
          if ((err as { code?: string }).code === '23505') {
            throw new RoostError(422, 'Validation failed: Email is already taken', { details: { email: [{ error: 'ERR_TAKEN', description: 'is already taken' }] } });
          }
          throw err;
        });
    }
    await recordEvent(services, sql, {
      actorKind: 'user',
      actorId: viewer.userId,
      origin: 'client',
      event: { type: 'user.confirmation_requested', userId: viewer.userId },
    });
  });
}

/** Whether the user's address is confirmed (GET /api/v1/emails/check_confirmation). */
export async function emailConfirmed(services: Services, userId: string): Promise<boolean> {
  const [u] = await services.db.sql.query<{ confirmed: boolean }>(`select confirmed_at is not null as confirmed from users where id = $1`, [userId]);
  return u?.confirmed ?? false;
}

/** Confirms the address whose mail carried `token`: true, or false for a wrong or expired link. */
export async function confirmEmail(services: Services, token: string): Promise<boolean> {
  if (!token) return false;
  const now = services.clock.now();
  const confirmed = await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const [u] = await sql.query<{ id: string; account_id: string; sent: Date | null; confirmed: boolean }>(
      `select id::text as id, account_id::text as account_id, confirmation_sent_at as sent, confirmed_at is not null as confirmed
         from users where confirmation_token_hash = $1 for update`,
      [hashSecret(token)],
    );
    if (!u || u.confirmed || !u.sent || now.getTime() - new Date(u.sent).getTime() > CONFIRMATION_VALID_MS) return false;
    await sql.query(`update users set confirmation_token_hash = null where id = $1`, [u.id]);
    await stepAccount(services, u.account_id, { type: 'account.confirm' }, { origin: 'client', em: tx });
    return true;
  });
  if (confirmed) forgetViewer(services); // the cached viewer still says unconfirmed
  return confirmed;
}

/**
 * Sends the reset mail to the user with this address, if there is one (the answer does not say:
 * Devise's paranoid mode). Counted against the sign-in limit of the address asking.
 */
export async function requestPasswordReset(services: Services, email: string, ip: string | null): Promise<void> {
  const limits = rateLimits(services);
  if (ip && limits.counts(ip)) await limits.consume('signIn', ip);
  const trimmed = email.trim();
  if (!trimmed) return;
  await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const [u] = await sql.query<{ id: string }>(`select id::text as id from users where lower(email) = lower($1)`, [trimmed]);
    if (!u) return;
    await recordEvent(services, sql, {
      actorKind: 'user',
      actorId: u.id,
      origin: 'client',
      event: { type: 'user.password_reset_requested', userId: u.id },
    });
  });
}

/** The user a reset link names, while it is valid; null otherwise. */
export async function passwordResetUser(services: Services, token: string): Promise<string | null> {
  if (!token) return null;
  const [u] = await services.db.sql.query<{ id: string; sent: Date | null }>(
    `select id::text as id, reset_password_sent_at as sent from users where reset_password_token_hash = $1`,
    [hashSecret(token)],
  );
  if (!u?.sent || services.clock.now().getTime() - new Date(u.sent).getTime() > RESET_PASSWORD_VALID_MS) return null;
  return u.id;
}

/**
 * Sets a new password through a reset link: 422 (a Validation) for a bad password, false for a
 * wrong or expired link. The link is spent and every access token of the user is revoked.
 */
export async function resetPassword(services: Services, token: string, password: string, confirmation: string): Promise<boolean> {
  const userId = await passwordResetUser(services, token);
  if (!userId) return false;
  const v = new Validation();
  if (password === '') v.add('password', 'ERR_BLANK', "can't be blank");
  else if (password.length < 8) v.add('password', 'ERR_TOO_SHORT', 'is too short (minimum is 8 characters)');
  else if (password.length > 72) v.add('password', 'ERR_TOO_LONG', 'is too long (maximum is 72 characters)');
  if (password !== confirmation) v.add('password_confirmation', 'ERR_INVALID', "doesn't match Password");
  v.throwIfInvalid();
  const encrypted = await hashPassword(password);
  const now = services.clock.now();
  const done = await services.db.em().transactional(async (tx) => {
    const sql = sqlFromEm(tx);
    const spent = await sql.query(
      `update users set encrypted_password = $3, reset_password_token_hash = null, reset_password_sent_at = null, updated_at = $4
        where id = $1 and reset_password_token_hash = $2 returning id`,
      [userId, hashSecret(token), encrypted, now],
    );
    if (!spent.length) return false;
    await sql.query(`update oauth_access_tokens set revoked_at = $2 where user_id = $1 and revoked_at is null`, [userId, now]);
    return true;
  });
  if (done) forgetViewer(services);
  return done;
}
