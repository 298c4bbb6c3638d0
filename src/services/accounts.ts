/**
 * Local accounts: creation (CLI, and later sign-up), lookup, and the activity record behind
 * NodeInfo's active-user counts.
 */
import { unknownRoleMessage } from './reads/roles.ts';
import ipaddr from 'ipaddr.js';
import { type EntityManager } from '@mikro-orm/core';
import type { Services } from '../context.ts';
import { applyDomainPolicyToNewAccount } from './domain-blocks.ts';
import { AccountSchema, AccountKeySchema, UserSchema, UserRoleSchema, type Account, type User } from '../db/entities/index.ts';
import { Validation, RoostError } from '../lib/errors.ts';
import { generateActorKeys } from '../lib/keys.ts';
import { generatePassword, hashPassword } from '../lib/password.ts';
import { sqlFromEm } from '../db/sql.ts';
import { newAccountSnapshot, stepAccount } from './account-actor.ts';
import { endFollowsOf } from './follows.ts';

/** Local usernames, as Mastodon's UsernameValidator allows them. */
export const USERNAME_RE = /^[a-z0-9_]+$/i;
export const USERNAME_MAX = 30;
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** Usernames Mastodon keeps for the server itself. */
const RESERVED = new Set(['admin', 'support', 'help', 'root', 'webmaster', 'administrator', 'mod', 'moderator', 'instance_actor', 'actor']);

export interface CreateLocalAccountInput {
  username: string;
  email: string;
  password?: string;
  role?: string | null;
  confirmed?: boolean;
  approved?: boolean;
  locale?: string | null;
  reason?: string | null;
  /** Operators may take reserved names (tootctl does too). */
  allowReserved?: boolean;
  /** Runs inside the creating transaction (a sign-up's token, say): its failure creates nothing. */
  inTransaction?: (tx: EntityManager, created: { account: Account; user: User }) => Promise<void>;
}

export interface CreatedAccount {
  account: Account;
  user: User;
  password: string;
}

/** Local actor URLs, one place for the whole app. */
export function localActorUri(services: Pick<Services, 'config'>, username: string): string {
  return `${services.config.publicUrl}/users/${username}`;
}

/**
 * The field checks of a new local account (and whether the name or address is taken), collected
 * into `v` so callers can add their own before one 422 lists every problem.
 */
export async function validateNewAccount(
  services: Services,
  input: { username: string; email: string; password: string; allowReserved?: boolean },
  v: Validation = new Validation(),
): Promise<Validation> {
  const username = input.username.trim();
  const email = input.email.trim();
  const password = input.password;
  if (!username) v.add('username', 'ERR_BLANK', "can't be blank");
  else if (username.length > USERNAME_MAX) v.add('username', 'ERR_TOO_LONG', `is too long (maximum is ${USERNAME_MAX} characters)`);
  else if (!USERNAME_RE.test(username)) v.add('username', 'ERR_INVALID', 'must contain only letters, numbers and underscores');
  else if (!input.allowReserved && RESERVED.has(username.toLowerCase())) v.add('username', 'ERR_RESERVED', 'is reserved');
  // A blank address is also not an address: Mastodon reports both (presence, then its
  // EmailAddressValidator).
  if (!email) v.add('email', 'ERR_BLANK', "can't be blank").add('email', 'ERR_INVALID', 'is invalid');
  else if (!EMAIL_RE.test(email) || email.length > 320) v.add('email', 'ERR_INVALID', 'is invalid');
  if (password === '') v.add('password', 'ERR_BLANK', "can't be blank");
  else if (password.length < 8) v.add('password', 'ERR_TOO_SHORT', 'is too short (minimum is 8 characters)');
  else if (password.length > 72) v.add('password', 'ERR_TOO_LONG', 'is too long (maximum is 72 characters)');
  const [taken] = await services.db.sql.query<{ u: number; e: number }>(
    `select (select count(*)::int from accounts where lower(username) = lower($1) and domain is null) as u,
            (select count(*)::int from users where lower(email) = lower($2)) as e`,
    [username, email],
  );
  if (username && taken.u > 0) v.add('username', 'ERR_TAKEN', 'is already taken');
  if (email && taken.e > 0) v.add('email', 'ERR_TAKEN', 'is already taken');
  return v;
}

export async function createLocalAccount(services: Services, input: CreateLocalAccountInput): Promise<CreatedAccount> {
  const username = input.username.trim();
  const email = input.email.trim();
  const password = input.password ?? generatePassword();
  const v = await validateNewAccount(services, { username, email, password, allowReserved: input.allowReserved });
  v.throwIfInvalid();

  // Slow work (key generation, hashing) happens before the transaction, off the event loop.
  const [keys, encryptedPassword] = await Promise.all([generateActorKeys(), hashPassword(password)]);

  const em = services.db.em();
  let roleId: string | null = null;
  if (input.role) {
    const role = await em.findOne(UserRoleSchema, { name: { $ilike: input.role } });
    if (!role) throw new RoostError(422, `Validation failed: ${await unknownRoleMessage(services, input.role)}`, {
      details: { role: [{ error: 'ERR_INVALID', description: `${input.role} does not exist` }] },
    });
    roleId = role.id;
  }

  return em.transactional(async (tx) => {
    const taken = new Validation();
    const sql = sqlFromEm(tx);
    const [u] = await sql.query<{ n: number }>(
      `select count(*)::int as n from accounts where lower(username) = lower($1) and domain is null`,
      [username],
    );
    if (u.n > 0) taken.add('username', 'ERR_TAKEN', 'is already taken');
    const [e] = await sql.query<{ n: number }>(`select count(*)::int as n from users where lower(email) = lower($1)`, [email]);
    if (e.n > 0) taken.add('email', 'ERR_TAKEN', 'is already taken');
    taken.throwIfInvalid();

    const now = services.clock.now();
    const uri = localActorUri(services, username);
    const account = tx.create(AccountSchema, {
      id: services.ids.next(),
      username,
      domain: null,
      uri,
      url: `${services.config.publicUrl}/@${username}`,
      inboxUrl: `${uri}/inbox`,
      sharedInboxUrl: `${services.config.publicUrl}/inbox`,
      outboxUrl: `${uri}/outbox`,
      followersUrl: `${uri}/followers`,
      followingUrl: `${uri}/following`,
      featuredUrl: `${uri}/collections/featured`,
      createdAt: now,
      updatedAt: now,
    });
    // A new account is born with its account actor's snapshot (version 0: its creation is not an event).
    // Its approval and confirmation regions say what the user row says (projected from now on).
    account.machine = newAccountSnapshot({ accountId: account.id, approved: input.approved ?? true, confirmed: !!input.confirmed });
    // Ids are plain columns, not ORM relations: insert the account before the rows that refer to it.
    await tx.flush();
    for (const k of keys) {
      tx.create(AccountKeySchema, {
        id: services.ids.next(),
        accountId: account.id,
        algorithm: k.algorithm,
        publicJwk: k.publicJwk,
        privateJwk: k.privateJwk,
        createdAt: now,
      });
    }
    const user = tx.create(UserSchema, {
      id: services.ids.next(),
      accountId: account.id,
      email,
      encryptedPassword,
      roleId,
      confirmedAt: input.confirmed ? now : null,
      approved: input.approved ?? true,
      locale: input.locale ?? null,
      signUpReason: input.reason ?? null,
      createdAt: now,
      updatedAt: now,
    });
    await tx.flush();
    await input.inTransaction?.(tx, { account, user });
    return { account, user, password };
  }).catch((err: unknown) => {
    // Two sign-ups racing for one name: the unique index decides, the client gets ERR_TAKEN.
    if ((err as { code?: string }).code === '23505') {
      const constraint = String((err as { constraint?: string }).constraint ?? (err as Error).message);
      const field = constraint.includes('email') ? 'email' : 'username';
      throw new RoostError(422, `Validation failed: ${field === 'email' ? 'Email' : 'Username'} is already taken`, {
        details: { [field]: [{ error: 'ERR_TAKEN', description: 'is already taken' }] },
      });
    }
    throw err;
  });
}

export async function findLocalAccount(em: EntityManager, username: string): Promise<Account | null> {
  return em.findOne(AccountSchema, { username: { $ilike: username.replace(/[\\%_]/g, '\\$&') }, domain: null });
}

/**
 * Records an address a user signed up or signed in from (user_ips: Admin::Account's `ip` and
 * `ips`, the admin list's `ip` filter), with its last use. A value that is not an address is ignored.
 */
export async function recordUserIp(sql: Pick<Services['db']['sql'], 'query'>, userId: string, ip: string, at: Date): Promise<void> {
  if (!ipaddr.isValid(ip)) return;
  await sql.query(
    `insert into user_ips (user_id, ip, used_at) values ($1, $2::inet, $3)
     on conflict (user_id, ip) do update set used_at = greatest(user_ips.used_at, excluded.used_at)`,
    [userId, ipaddr.process(ip).toString(), at],
  );
}

/** Records that a user was active today (sign-in or an authenticated request). */
export async function recordUserActivity(services: Services, userId: string): Promise<void> {
  const day = services.clock.now().toISOString().slice(0, 10);
  await services.db.sql.query(
    `insert into user_activity_days (user_id, day) values ($1, $2) on conflict do nothing`,
    [userId, day],
  );
  await services.db.sql.query(`update users set last_sign_in_at = current_sign_in_at, current_sign_in_at = $2 where id = $1`, [
    userId,
    services.clock.now(),
  ]);
}

/**
 * A remote actor is gone (Delete of itself): its account actor steps to `deleted`, its follows
 * end through their follow actors (each end an event in the outbox), and then the row goes, in
 * one transaction. Its mutes and blocks go with the row.
 */
export async function deleteRemoteAccount(services: Services, uri: string): Promise<boolean> {
  return services.db.em().transactional(async (tx) => {
    const account = await tx.findOne(AccountSchema, { uri, domain: { $ne: null } });
    if (!account) return false;
    await stepAccount(services, account.id, { type: 'account.delete' }, { origin: 'federation', em: tx });
    await endFollowsOf(services, account, tx, 'federation');
    await sqlFromEm(tx).query(`delete from accounts where id = $1`, [account.id]);
    return true;
  });
}

/**
 * Inserts a remote account seen for the first time, born with its account actor's snapshot
 * (seeded from what the actor says: locked; a redirect is recorded by the move service). Another
 * delivery inserting it first wins: its row is returned.
 */
export async function insertRemoteAccount(services: Services, data: Partial<Account> & { uri: string; username: string }): Promise<Account> {
  const em = services.db.em();
  const id = services.ids.next();
  const now = services.clock.now();
  const account = em.create(AccountSchema, {
    id,
    createdAt: now,
    updatedAt: now,
    ...data,
    machine: newAccountSnapshot({ accountId: id, locked: !!data.locked }),
    machineVersion: 0,
  } as never);
  try {
    await em.flush();
  } catch (e) {
    if ((e as { code?: string }).code === '23505') {
      const again = await services.db.em().findOne(AccountSchema, { uri: data.uri });
      if (again) return again;
    }
    throw e;
  }
  // Born silenced or suspended on a server the domain policy limits.
  if (await applyDomainPolicyToNewAccount(services, account)) return (await services.db.em().findOne(AccountSchema, { id })) ?? account;
  return account;
}

/**
 * A known remote account refreshed from its actor document: the profile columns are written,
 * and a change of `locked` is a step of its account actor (in the same transaction), so the
 * lock has one writer and its events reach the outbox.
 */
export async function refreshRemoteAccount(services: Services, existing: Account, data: Partial<Account>): Promise<Account> {
  const { locked, ...profile } = data;
  return services.db.em().transactional(async (tx) => {
    const account = await tx.findOneOrFail(AccountSchema, { id: existing.id });
    tx.assign(account, profile);
    await tx.flush();
    if (locked !== undefined && locked !== account.locked) {
      await stepAccount(services, account.id, { type: locked ? 'account.lock' : 'account.unlock' }, { origin: 'federation', em: tx });
    }
    return account;
  });
}
