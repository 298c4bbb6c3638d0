/**
 * The mail consumer of the outbox: e-mail through the configured SMTP server (nodemailer), after
 * commit, for
 *   user.signed_up, user.confirmation_requested   the confirmation link (GET /auth/confirmation),
 *                                                 unless the address is confirmed by then;
 *   user.password_reset_requested                 the password-reset link (/auth/password/edit);
 *   account.warned (sendEmail)                    the moderator's warning (account_warnings row).
 * A link's token is made here, when the mail goes, and only its SHA-256 is kept on the user (the
 * outbox never holds it); a later mail of the same kind replaces it. Without `mail.smtpHost`
 * nothing is sent (the operator confirms accounts with `roost accounts modify USER --confirm`).
 *
 * Idempotent per fact: `mail_deliveries` has one row per (fact, mail) sent, written after the
 * server took the mail; a retry or a re-run job skips what is there. (A process that dies between
 * the server's answer and that row sends the mail again when the job runs again: at least once.)
 */
import { createHash, randomBytes } from 'node:crypto';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Services } from '../context.ts';
import type { ConsumerHandler } from './registry.ts';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

/** Sends one mail; resolves when the SMTP server accepted it. */
export type MailSender = (mail: OutgoingMail) => Promise<void>;

/** The sender for the configured SMTP server, or null when none is configured. */
export function smtpSender(services: Services): MailSender | null {
  const c = services.config.mail;
  if (!c.smtpHost) return null;
  let transport: Transporter | null = null;
  return async (mail) => {
    transport ??= nodemailer.createTransport({
      host: c.smtpHost!,
      port: c.smtpPort,
      secure: c.smtpSecurity === 'tls',
      requireTLS: c.smtpSecurity === 'starttls',
      ignoreTLS: c.smtpSecurity === 'none',
      auth: c.smtpUser ? { user: c.smtpUser, pass: c.smtpPassword ?? '' } : undefined,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
    await transport.sendMail({ from: c.from, to: mail.to, subject: mail.subject, text: mail.text });
  };
}

const hash = (token: string) => createHash('sha256').update(token).digest('hex');

/** Mastodon's user_mailer.warning subjects, by the action taken. */
const WARNING_SUBJECTS: Record<string, (acct: string) => string> = {
  none: (a) => `Warning for ${a}`,
  disable: (a) => `Your account ${a} has been frozen`,
  sensitive: (a) => `Your posts on ${a} will be marked as sensitive from now on`,
  silence: (a) => `Your account ${a} has been limited`,
  suspend: (a) => `Your account ${a} has been suspended`,
  delete_statuses: (a) => `Your posts on ${a} have been removed`,
  mark_statuses_as_sensitive: (a) => `Your posts on ${a} have been marked as sensitive`,
};

const WARNING_TEXTS: Record<string, string> = {
  none: 'A moderator has sent you a warning.',
  disable: 'You can no longer use your account, but your profile and other data remain intact.',
  sensitive: 'From now on, all your uploaded media files will be marked as sensitive and hidden behind a click-through warning.',
  silence: 'You can still use your account, but only people who are already following you will see your posts on this server.',
  suspend: 'You can no longer use your account, and your profile and other data are no longer accessible.',
  delete_statuses: 'Some of your posts have been found to violate one or more community guidelines and have been removed.',
  mark_statuses_as_sensitive: 'Some of your posts have been marked as sensitive by the moderators.',
};

interface Recipient {
  user_id: string;
  email: string;
  username: string;
  confirmed: boolean;
}

export function mailConsumer(services: Services, send: MailSender | null = smtpSender(services)): ConsumerHandler<'mail'> {
  const log = services.log.child({ module: 'mail' });
  const { publicUrl, domain } = services.config;
  const title = services.config.instance.title;

  const recipientOf = async (userId: string): Promise<Recipient | null> => {
    const [r] = await services.db.sql.query<Recipient>(
      `select u.id::text as user_id, u.email, a.username, u.confirmed_at is not null as confirmed
         from users u join accounts a on a.id = u.account_id where u.id = $1`,
      [userId],
    );
    return r ?? null;
  };

  /** Sends `mail` once for `key` (a repeat of the fact's job skips it). */
  const once = async (key: string, make: () => Promise<OutgoingMail | null>): Promise<void> => {
    const done = await services.db.sql.query(`select 1 from mail_deliveries where source_key = $1`, [key]);
    if (done.length) return;
    const mail = await make();
    if (!mail) return;
    await send!(mail);
    await services.db.sql.query(`insert into mail_deliveries (source_key, recipient, sent_at) values ($1, $2, $3) on conflict do nothing`, [
      key,
      mail.to,
      services.clock.now(),
    ]);
    log.info({ key, to: mail.to, subject: mail.subject }, 'mail sent');
  };

  const confirmation = async (userId: string): Promise<OutgoingMail | null> => {
    const r = await recipientOf(userId);
    if (!r || r.confirmed) return null;
    const token = randomBytes(32).toString('base64url');
    const updated = await services.db.sql.query(
      `update users set confirmation_token_hash = $2, confirmation_sent_at = $3 where id = $1 and confirmed_at is null returning id`,
      [userId, hash(token), services.clock.now()],
    );
    if (!updated.length) return null;
    const link = `${publicUrl}/auth/confirmation?confirmation_token=${encodeURIComponent(token)}`;
    return {
      to: r.email,
      subject: `${title}: Confirmation instructions for ${domain}`,
      text:
        `Welcome to ${title}, @${r.username}!\n\n` +
        `To confirm your e-mail address (${r.email}), open this link:\n\n${link}\n\n` +
        `The link works for 3 days. If you did not sign up at ${domain}, ignore this mail.\n`,
    };
  };

  const passwordReset = async (userId: string): Promise<OutgoingMail | null> => {
    const r = await recipientOf(userId);
    if (!r) return null;
    const token = randomBytes(32).toString('base64url');
    await services.db.sql.query(`update users set reset_password_token_hash = $2, reset_password_sent_at = $3 where id = $1`, [
      userId,
      hash(token),
      services.clock.now(),
    ]);
    const link = `${publicUrl}/auth/password/edit?reset_password_token=${encodeURIComponent(token)}`;
    return {
      to: r.email,
      subject: `${title}: Reset password instructions`,
      text:
        `Someone asked to change the password of @${r.username} on ${domain}.\n\n` +
        `To choose a new password, open this link:\n\n${link}\n\n` +
        `The link works for 6 hours. If you did not ask for this, ignore this mail: your password stays as it is.\n`,
    };
  };

  const warning = async (warningId: string): Promise<OutgoingMail | null> => {
    const [w] = await services.db.sql.query<{ action: string; text: string; email: string | null; username: string }>(
      `select w.action, w.text, u.email, a.username
         from account_warnings w join accounts a on a.id = w.target_account_id left join users u on u.account_id = a.id
        where w.id = $1 and a.domain is null`,
      [warningId],
    );
    if (!w?.email) return null;
    const acct = `@${w.username}@${domain}`;
    const subject = (WARNING_SUBJECTS[w.action] ?? WARNING_SUBJECTS.none!)(acct);
    return {
      to: w.email,
      subject,
      text:
        `${WARNING_TEXTS[w.action] ?? WARNING_TEXTS.none}\n\n` +
        (w.text.trim() ? `Note from the moderators:\n\n${w.text.trim()}\n\n` : '') +
        `${publicUrl}/@${w.username}\n`,
    };
  };

  return async function mail(record): Promise<void> {
    if (!send) {
      log.debug({ eventId: record.id, type: record.event.type }, 'no SMTP server configured: no mail');
      return;
    }
    const e = record.event;
    const key = `outbox:${record.id}`;
    switch (e.type) {
      case 'user.signed_up':
      case 'user.confirmation_requested':
        return once(`${key}/confirmation`, () => confirmation(e.userId));
      case 'user.password_reset_requested':
        return once(`${key}/password_reset`, () => passwordReset(e.userId));
      case 'account.warned':
        return once(`${key}/warning`, () => warning(e.warningId));
    }
  };
}
