/**
 * What the operator does for a person at the CLI (`roost accounts token`, `roost accounts modify
 * --reset-password`), through the control socket or on the stopped instance's database: mint an
 * access token for a local account (a first post without an app, a script), and give an account a
 * new password. Both only for local accounts that exist; the token is shown once and stored hashed.
 */
import type { Services } from '../context.ts';
import { RoostError } from '../lib/errors.ts';
import { generatePassword, hashPassword } from '../lib/password.ts';
import { parseScopes, unknownScopes } from '../lib/scopes.ts';
import { forgetViewer } from './reads/viewer.ts';
import { issueAccessToken } from './tokens.ts';

async function localUser(services: Services, username: string): Promise<{ userId: string; username: string }> {
  const [row] = await services.db.sql.query<{ user_id: string; username: string }>(
    `select u.id::text as user_id, a.username from accounts a join users u on u.account_id = a.id
      where a.domain is null and lower(a.username) = lower($1) and a.suspended_at is null`,
    [username],
  );
  if (!row) throw new RoostError(404, `No local account ${username}`);
  return { userId: row.user_id, username: row.username };
}

/** Mastodon's default for a new app: `read`. */
const DEFAULT_SCOPES = 'read';

/** A new access token of `username` with `scopes` (space- or comma-separated; default `read`). */
export async function mintAccessToken(services: Services, username: string, scopes: string | undefined): Promise<{ username: string; token: string; scopes: string[] }> {
  const wanted = parseScopes((scopes ?? DEFAULT_SCOPES).replace(/,/g, ' '));
  if (wanted.length === 0) throw new RoostError(422, 'Give at least one scope (read, write, follow, push, profile, admin:read, admin:write …)');
  const unknown = unknownScopes(wanted);
  if (unknown.length) throw new RoostError(422, `Unknown scope${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`);
  const user = await localUser(services, username);
  const { token } = await issueAccessToken(services, { applicationId: null, userId: user.userId, scopes: wanted });
  return { username: user.username, token, scopes: wanted };
}

/**
 * A new random password for `username`; every token it held is revoked (as Mastodon's reset
 * does), so apps sign in again. Returns the password, to be shown once.
 */
export async function resetPassword(services: Services, username: string): Promise<{ username: string; password: string; revokedTokens: number }> {
  const user = await localUser(services, username);
  const password = generatePassword();
  const encrypted = await hashPassword(password);
  const now = services.clock.now();
  const revoked = await services.db.sql.transaction(async (sql) => {
    await sql.query(`update users set encrypted_password = $2, updated_at = $3 where id = $1`, [user.userId, encrypted, now]);
    return sql.query(`update oauth_access_tokens set revoked_at = $2 where user_id = $1 and revoked_at is null returning id`, [user.userId, now]);
  });
  forgetViewer(services);
  return { username: user.username, password, revokedTokens: revoked.length };
}
