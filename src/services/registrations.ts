/**
 * Sign-up through the API (POST /api/v1/accounts, Mastodon's AppSignUpService), honouring the
 * registrations mode: open, approval (the user waits for a moderator and must give a reason) or
 * closed. The account, its user (unconfirmed, as in Mastodon: the confirmation mail goes out after
 * commit, effects/mail.ts) and an access token for the calling application, with the application's
 * scopes, are created in one transaction: a failure anywhere leaves nothing behind.
 *
 * The sign-up blocks apply (Mastodon's RegistrationHelper and BlacklistedEmailValidator): an IP
 * block `sign_up_block` on the client's address refuses it (403), `sign_up_requires_approval`
 * makes the user wait for a moderator; an e-mail domain block is ERR_BLOCKED and a canonical
 * e-mail block ERR_TAKEN on `email` (services/email-blocks.ts).
 */
import { rememberValidToken } from './reads/viewer.ts';
import type { Services } from '../context.ts';
import { OAuthAccessTokenSchema, OAuthApplicationSchema } from '../db/entities/index.ts';
import { sqlFromEm } from '../db/sql.ts';
import { recordEvent } from './actor-store.ts';
import { RoostError, Validation } from '../lib/errors.ts';
import { isSupportedLanguage } from '../lib/languages.ts';
import ipaddr from 'ipaddr.js';
import { createLocalAccount, recordUserIp, validateNewAccount } from './accounts.ts';
import { hashSecret, randomToken } from './tokens.ts';
import { emailRefusal } from './email-blocks.ts';
import { ipBlockSeverities } from './ip-blocks.ts';

/** Mastodon's UserInviteRequest::TEXT_SIZE_LIMIT. */
export const MAX_REASON = 420;

export interface RegistrationInput {
  username: string | undefined;
  email: string | undefined;
  password: string | undefined;
  agreement: boolean | undefined;
  locale: string | undefined;
  reason: string | undefined;
  /** Accepted; required only with a minimum age, which Roost does not set (and never stored, as in Mastodon). */
  dateOfBirth?: string | undefined;
}

export interface RegistrationClient {
  /** The application whose client-credentials token made the request. */
  applicationId: string | null;
  /** The requesting token's scopes: used when the token has no application. */
  tokenScopes: readonly string[];
  /** The client's address (IP blocks; users.sign_up_ip, user_ips); null or absent: not known (no block applies). */
  ip?: string | null;
}

/** A Doorkeeper token response: what POST /api/v1/accounts returns. */
export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  scope: string;
  created_at: number;
}

/** A UI locale Mastodon could have: an ISO 639 language, optionally with a region or script (pt-BR, zh-TW, sr-Latn). */
function isKnownLocale(locale: string): boolean {
  const m = /^([a-z]{2,3})(?:[-_]([A-Za-z]{2}|[A-Za-z]{4}))?$/.exec(locale);
  return !!m && isSupportedLanguage(m[1]!);
}

export async function registerAccount(services: Services, client: RegistrationClient, input: RegistrationInput): Promise<IssuedToken> {
  const mode = services.config.registrations.mode;
  if (mode === 'closed') throw new RoostError(403, 'This action is not allowed');
  const ipSeverities = client.ip ? await ipBlockSeverities(services, client.ip) : new Set<string>();
  if (ipSeverities.has('sign_up_block') || ipSeverities.has('no_access')) throw new RoostError(403, 'This action is not allowed');
  const v = new Validation();
  const reason = input.reason?.trim() ?? '';
  if (!input.agreement) v.add('agreement', 'ERR_ACCEPTED', 'must be accepted');
  if (mode === 'approval' && !reason) v.add('reason', 'ERR_BLANK', "can't be blank");
  if ([...reason].length > MAX_REASON) v.add('reason', 'ERR_TOO_LONG', `is too long (maximum is ${MAX_REASON} characters)`);
  await validateNewAccount(services, { username: input.username ?? '', email: input.email ?? '', password: input.password ?? '' }, v);
  const email = input.email?.trim() ?? '';
  if (email && !v.has('email')) {
    const refusal = await emailRefusal(services, email, client.ip ?? null);
    if (refusal === 'blocked') v.add('email', 'ERR_BLOCKED', 'uses a disallowed e-mail provider');
    else if (refusal === 'taken') v.add('email', 'ERR_TAKEN', 'is already taken');
  }
  v.throwIfInvalid();

  const app = client.applicationId ? await services.db.em().findOne(OAuthApplicationSchema, { id: client.applicationId }) : null;
  const scopes = app ? app.scopes.split(/\s+/).filter(Boolean) : [...client.tokenScopes];
  const token = randomToken();
  const now = services.clock.now();
  await createLocalAccount(services, {
    username: input.username!,
    email: input.email!,
    password: input.password!,
    approved: mode === 'open' && !ipSeverities.has('sign_up_requires_approval'),
    // An unknown locale is dropped (the default applies), as Mastodon 4.3 does, not refused.
    locale: input.locale && isKnownLocale(input.locale) ? input.locale : null,
    reason: reason || null,
    async inTransaction(tx, { user }) {
      tx.create(OAuthAccessTokenSchema, {
        id: services.ids.next(),
        applicationId: app?.id ?? null,
        userId: user.id,
        tokenHash: hashSecret(token),
        scopes: scopes.join(' '),
        createdAt: now,
      });
      await tx.flush();
      if (app) await sqlFromEm(tx).query(`update users set created_by_application_id = $1 where id = $2`, [app.id, user.id]);
      if (client.ip && ipaddr.isValid(client.ip)) {
        await sqlFromEm(tx).query(`update users set sign_up_ip = $1::inet where id = $2`, [ipaddr.process(client.ip).toString(), user.id]);
        await recordUserIp(sqlFromEm(tx), user.id, client.ip, now);
      }
      // Staff who may manage users hear of it (effects/notifications.ts: admin.sign_up).
      await recordEvent(services, sqlFromEm(tx), {
        actorKind: 'user',
        actorId: user.id,
        origin: 'client',
        event: { type: 'user.signed_up', accountId: user.accountId, userId: user.id },
      });
    },
  });
  rememberValidToken(services, hashSecret(token));
  return { access_token: token, token_type: 'Bearer', scope: scopes.join(' '), created_at: Math.floor(now.getTime() / 1000) };
}
